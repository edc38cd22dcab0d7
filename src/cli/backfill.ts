// `svc-ingest backfill plan|status`: a backfill split into partitions that workers on several hosts claim from the
// shared PostgreSQL ledger.

import { type Command, Option } from 'commander';
import { DEFAULT_PARTITION_BYTES } from '../backfill/partition-size.ts';
import type { PlanResult } from '../backfill/plan.ts';
import { formatBytes, formatStatus } from '../backfill/report.ts';
import { exitWith, SvcIngestError } from '../errors.ts';
import type { InputFormat } from '../model/input.ts';
import type { WorkCliOptions } from './backfill-work.ts';
import { addExamples, parseIntOption, printJson, printText } from './common.ts';
import {
  addDispatchOptions,
  addProgressOptions,
  addRejectCapOptions,
  ledgerDestination,
} from './delivery.ts';
import { addPgLedgerOptions, connectReadOnly, type PgLedgerOptions, pgLedgerContext } from './pg-ledger.ts';
import { addSettingOptions } from './settings.ts';

interface PlanCliOptions extends PgLedgerOptions {
  mapping?: string;
  format?: InputFormat;
  delimiter?: string;
  partitionBytes?: string;
  newDestination?: boolean;
}

function planLines(r: PlanResult): string[] {
  const lines = [`backfill plan in ${r.ledger} (mapping ${r.mapping})`];
  for (const f of r.files) {
    const how = f.gzip ? ' (gzip: one partition, read whole)' : '';
    lines.push(
      `  ${f.path}: ${formatBytes(f.size)}, ${f.partitions} partition${f.partitions === 1 ? '' : 's'}${how}, ${f.created ? 'planned' : 'already planned'}`,
    );
  }
  return lines;
}

async function runPlan(files: string[], opts: PlanCliOptions): Promise<void> {
  const ctx = pgLedgerContext(opts, 'backfill plan');
  let partitionBytes = DEFAULT_PARTITION_BYTES;
  if (opts.partitionBytes !== undefined) {
    partitionBytes = parseIntOption(opts.partitionBytes, '--partition-bytes');
    if (partitionBytes < 1)
      throw new SvcIngestError('USAGE_INVALID', '--partition-bytes: expected a positive number of bytes');
  }
  if (opts.delimiter !== undefined && opts.delimiter.length !== 1)
    throw new SvcIngestError('USAGE_INVALID', '--delimiter: expected one character');
  // node-postgres is loaded only by the commands that use it.
  const { planBackfill } = await import('../backfill/plan.ts');
  const r = await planBackfill({
    ledger: ctx.ledger,
    files,
    mapping: opts.mapping,
    format: opts.format,
    delimiter: opts.delimiter,
    partitionBytes,
    logger: ctx.logger,
    ...ledgerDestination(ctx.config, opts),
  });
  if (opts.json) printJson(r);
  else printText(planLines(r));
}

async function runStatus(opts: PgLedgerOptions): Promise<void> {
  const ctx = pgLedgerContext(opts, 'backfill status');
  const { backfillStatus } = await import('../ledger/postgres/backfill/status.ts');
  const { db, hasSchema } = await connectReadOnly(ctx);
  try {
    if (!hasSchema) throw new SvcIngestError('USAGE_INVALID', `no backfill planned in ${db.location}`);
    const s = await backfillStatus(db).catch((err) => {
      throw db.fail('LEDGER_READ', 'cannot read the backfill in', err);
    });
    if (opts.json) printJson(s);
    else printText(formatStatus(s));
  } finally {
    await db.close();
  }
}

export function define(program: Command): void {
  const backfill = program
    .command('backfill')
    .description('split a large input across workers on several hosts, through the shared PostgreSQL ledger');
  addExamples(backfill, [
    [
      'svc-ingest backfill plan --ledger postgres://svc@db.internal/ledger /shared/exports/2019-*.csv',
      'cut the inputs into partitions',
    ],
    [
      'svc-ingest backfill work --ledger postgres://svc@db.internal/ledger --concurrency 8',
      'start a worker (on each host)',
    ],
    ['svc-ingest backfill status --ledger postgres://svc@db.internal/ledger', 'how far it is'],
  ]);
  const plan = addPgLedgerOptions(
    backfill
      .command('plan')
      .description(
        'cut each input into partitions at record boundaries and record them in the ledger (again: a no-op).\n' +
          'Every worker must be able to read the inputs at the same path. A .gz input is one partition.',
      )
      .argument('<files...>', 'input files (CSV or NDJSON, optionally .gz)')
      .option(
        '--mapping <profile>',
        'mapping profile name or path (default: canonical); workers use the same',
      )
      .addOption(
        new Option('--format <format>', 'input format (default: from the extension)').choices([
          'csv',
          'ndjson',
        ]),
      )
      .option('--delimiter <char>', 'CSV field delimiter (default: the profile’s, else ",")')
      .option('--partition-bytes <n>', `partition size in bytes (default ${DEFAULT_PARTITION_BYTES})`)
      .option(
        '--base-url <url>',
        'the service the backfill sends to, recorded with the plan: workers sending elsewhere refuse to claim ' +
          '(env SVC_BASE_URL)',
      )
      .option(
        '--new-destination',
        'plan for a destination this ledger has no acknowledgements from (else refused, exit 1)',
      ),
  )
    .addHelpText(
      'after',
      '\nExit status: 0 planned (or already planned); 1 could not run (no ledger, an unreadable input, a header\n' +
        "without the profile's columns, an input changed since it was planned, the database unreachable).",
    )
    .action((files: string[], opts: PlanCliOptions) => runPlan(files, opts));
  addExamples(plan, [
    [
      'svc-ingest backfill plan --ledger postgres://svc@db.internal/ledger /shared/exports/2019-*.csv',
      'plan every file',
    ],
    [
      'svc-ingest backfill plan --mapping northwind-csv --partition-bytes 268435456 a.csv b.csv.gz',
      'with a profile, larger partitions, the ledger from SVC_LEDGER_URL',
    ],
  ]);
  defineWork(backfill);
  const status = addPgLedgerOptions(
    backfill.command('status').description('partitions by state, records sent, rate and ETA, per worker'),
  )
    .addHelpText(
      'after',
      '\nExit status: 0 reported (whether the backfill is done or not: see "done" in --json); 1 could not run\n' +
        '(no ledger, no backfill planned in it, the database unreachable).',
    )
    .action((opts: PgLedgerOptions) => runStatus(opts));
  addExamples(status, [
    [
      'svc-ingest backfill status --ledger postgres://svc@db.internal/ledger',
      'partitions, records, rate and ETA',
    ],
    ['svc-ingest backfill status --json | jq .etaSeconds', 'seconds left, the ledger from SVC_LEDGER_URL'],
  ]);
}

/** `backfill work`: its options, exit statuses and examples. */
function defineWork(backfill: Command): void {
  const work = addPgLedgerOptions(
    backfill
      .command('work')
      .description(
        'claim partitions one after the other and send each through the normal chain, until every partition ' +
          'is done; start one on each host (any number). A partition whose worker dies is claimed again after ' +
          'its lease (ledger.leaseMs, env SVC_LEDGER_LEASE_MS, 30 s) and resumed without resending what was ' +
          'acknowledged.',
      ),
  );
  addSettingOptions(work, 'connection')
    .option(
      '--worker-id <id>',
      'this worker’s name in the ledger (default host:pid:run); never the same for two live workers',
    )
    .option('--retry-failed', 'first read again the done partitions that hold failed records (resends those)')
    .option(
      '--allow-rejects',
      'rejects under the caps are fine (exit 0 instead of 2): for a Kubernetes Job, which fails on any non-zero status',
    );
  addProgressOptions(addRejectCapOptions(addDispatchOptions(work)))
    .addHelpText(
      'after',
      '\nExit status: 0 every partition done and every valid record acknowledged; 1 could not run (also: an input\n' +
        'changed since it was planned, a mapping that differs from the planned one, too many rejects); 2 some\n' +
        'records rejected (0 with --allow-rejects); 3 some batches failed (--retry-failed resends them); 5 service unavailable (the partition\n' +
        'is pending again); 130/143 SIGINT/SIGTERM: in-flight batches settled, the partition and unsent claims\n' +
        'released. Most severe wins: 1, 130/143, 5, 3, 2.',
    )
    .action(async (opts: WorkCliOptions) => {
      const { runWorkCommand } = await import('./backfill-work.ts');
      exitWith(await runWorkCommand(opts));
    });
  addExamples(work, [
    [
      'svc-ingest backfill work --ledger postgres://svc@db.internal/ledger --concurrency 8 --rejects /var/lib/svc-ingest/rejects-$(hostname).ndjson',
      'one worker on this host',
    ],
    [
      'SVC_LEDGER_URL=postgres://svc@db.internal/ledger svc-ingest backfill work --metrics-file /var/lib/prometheus/node-exporter/backfill.prom --json',
      'metrics for this worker, summary as JSON',
    ],
  ]);
}
