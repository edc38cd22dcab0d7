// `svc-ingest ledger prune --before DATE`: retention, so a nightly ledger's resume start-up and memory stay bounded
// by the retention window (docs/ledger.md "Retention"). A ledger file is rewritten under its lock; a PostgreSQL
// ledger has its old outcomes and acknowledged ids deleted.
import type { Command } from 'commander';
import { SvcIngestError } from '../errors.ts';
import { resolveLedger, warnLedgerNotice } from '../ledger/ref.ts';
import {
  addConfigAndLogOptions,
  addExamples,
  type CommonOptions,
  LEDGER_OPTION_HELP,
  loadCommandConfig,
  printJson,
  printText,
} from './common.ts';

interface PruneOptions extends CommonOptions {
  before: string;
  ledger?: string;
  archive?: string;
  json?: boolean;
}

/**
 * `--before`: an ISO 8601 date or instant, or `Nd` (N days before now).
 * @example pruneInstant('90d', Date.parse('2026-11-25T00:00:00Z')) // '2026-08-27T00:00:00.000Z'
 */
export function pruneInstant(value: string, now = Date.now()): string {
  const days = /^(\d+)d$/.exec(value.trim());
  const t = days ? now - Number(days[1]) * 86_400_000 : Date.parse(value);
  if (!/^\d/.test(value.trim()) || !Number.isFinite(t))
    throw new SvcIngestError(
      'USAGE_INVALID',
      `--before: expected a date (2026-08-01), an instant (2026-08-01T00:00:00Z) or a number of days (90d), got "${value}"`,
    );
  return new Date(t).toISOString();
}

async function runPrune(opts: PruneOptions): Promise<void> {
  const config = loadCommandConfig(opts);
  const before = pruneInstant(opts.before);
  const ref = resolveLedger(config, opts.ledger);
  const { createLogger } = await import('../log.ts');
  const logger = createLogger(config.log);
  warnLedgerNotice(logger, ref);
  if (ref.kind === 'postgres') {
    if (opts.archive !== undefined)
      throw new SvcIngestError(
        'USAGE_INVALID',
        '--archive is for a ledger file (a database keeps its own backups)',
      );
    const [{ prunePgLedger }, { connectLedger }] = await Promise.all([
      import('../ledger/postgres/prune.ts'),
      import('../ledger/reader.ts'),
    ]);
    const { db } = await connectLedger(ref, logger, true);
    try {
      const r = await prunePgLedger(db, { before }).catch((err: unknown) => {
        throw db.fail('LEDGER_WRITE', 'cannot prune', err);
      });
      if (opts.json) printJson(r);
      else
        printText([
          `${r.ledger}: ${r.prunedBatches} batch outcome(s) and ${r.prunedTransactions} transaction id(s) from before ${before} deleted`,
        ]);
    } finally {
      await db.close();
    }
    return;
  }
  const [{ checkLedgerPaths }, { pruneLedgerFile }] = await Promise.all([
    import('../ledger/file/query.ts'),
    import('../ledger/file/prune.ts'),
  ]);
  const [path] = await checkLedgerPaths([ref.path]);
  const r = await pruneLedgerFile(path as string, { before, archive: opts.archive });
  if (opts.json) printJson(r);
  else
    printText([
      `${r.ledger}: ${r.prunedLines} line(s) (${r.prunedIds} ids) from before ${before} dropped` +
        `${r.archive ? ` (appended to ${r.archive})` : ''}; ${r.keptLines} kept; ${r.bytesBefore} → ${r.bytesAfter} bytes`,
    ]);
}

/** Adds `prune` under the `ledger` command. Register after the module that declares `ledger`. */
export function define(program: Command): void {
  const ledger = program.commands.find((c) => c.name() === 'ledger') ?? program.command('ledger');
  const prune = ledger.command('prune');
  prune
    .description(
      'retention: drop the outcomes older than a date (their ids are past any rerun), so resume’s start-up and ' +
        'memory stay bounded; a rerun of an export older than that date sends its records again',
    )
    .requiredOption('--before <date>', 'drop outcomes before this date, instant, or number of days ago (90d)')
    .option('--ledger <path|url>', `the ledger file or postgres:// URL (${LEDGER_OPTION_HELP})`)
    .option('--archive <file>', 'a ledger file: append the dropped lines to this file first')
    .option('--json', 'print the result as one JSON object on stdout');
  addConfigAndLogOptions(prune)
    .addHelpText(
      'after',
      '\nExit status: 0 pruned (or nothing to prune); 1 could not run (a send holds the ledger: LEDGER_LOCKED, a\n' +
        'bad date, the database unreachable).',
    )
    .action((opts: PruneOptions) => runPrune(opts));
  addExamples(prune, [
    [
      'svc-ingest ledger prune --before 90d --ledger /var/lib/svc-ingest/transactions.ndjson --archive /var/lib/svc-ingest/archive.ndjson',
      'nightly, after the send: keep 90 days',
    ],
    [
      'svc-ingest ledger prune --before 2026-01-01 --ledger postgres://svc@db.internal/ledger',
      'the shared ledger',
    ],
  ]);
}
