// `svc-ingest send`: declares the main job's options and wires config, client, pipeline and output.

import { type Command, Option } from 'commander';
import type { ConfigFlags } from '../config/index.ts';
import { exitWith, SvcIngestError } from '../errors.ts';
import { cliIo } from '../io.ts';
import {
  addConnectionOptions,
  addExamples,
  type CommonOptions,
  LEDGER_OPTION_HELP,
  rejectsFileOf,
} from './common.ts';
import {
  addDispatchOptions,
  addProgressOptions,
  addRejectCapOptions,
  type DeliveryFlags,
  deliveryFlags,
  dispatchSettings,
  exitStatusOfRun,
  followRun,
  healthCheck,
  ledgerDestination,
  runExitStatus,
  stopOnSignals,
  withRunMetrics,
} from './delivery.ts';
import { addSettingOptions, settingFlags } from './settings.ts';

interface SendFlags extends CommonOptions, DeliveryFlags {
  format?: 'csv' | 'ndjson' | 'pgtext';
  mapping?: string;
  delimiter?: string;
  ledger?: string;
  /** --rejects (the table's send.rejectsPath): whether it was given matters to a dry run. */
  rejects?: string;
  dryRun?: boolean;
  json?: boolean;
  strict?: boolean;
  allowEmpty?: boolean;
  allowRejects?: boolean;
  allowUnterminated?: boolean;
  expectCount?: string;
  expectTotal?: string;
  control?: string;
  sourceName?: string;
  checkFirst?: boolean;
}

export function define(program: Command): void {
  const cmd = program
    .command('send')
    .description(
      'Read transaction exports (CSV or NDJSON, optionally .gz, or stdin), map and validate each record,\n' +
        'and POST valid ones in batches to /v2/data/transactions, recording every batch in the ledger.',
    )
    .argument('[input...]', "input files; '-' or none reads standard input");
  addConnectionOptions(cmd)
    .addOption(
      new Option(
        '--format <format>',
        "input format (default: from the extension); pgtext: PostgreSQL's COPY text output (tabs, \\N, escapes)",
      ).choices(['csv', 'ndjson', 'pgtext']),
    )
    .option('--mapping <file|name>', 'mapping profile (a file, or a name in config/mappings/)', 'canonical')
    .option('--delimiter <char>', 'CSV delimiter (default: the profile\'s, else ",")')
    .option('--strict', 'every column a mapping rule names must be in the CSV header (else: a warning)')
    .option(
      '--check-first',
      'map the whole input before the first request; a mapping that warns sends nothing (exit 1)',
    )
    .option(
      '--source-name <name>',
      'the name the one input (a file, standard input or a pipe) goes by in the ledger, the rejects and the logs (default: its path, or stdin)',
    );
  addDispatchOptions(cmd).option(
    '--ledger <path|url>',
    `batch ledger: a file (NDJSON, append-only) or postgres://USER@HOST/DB (${LEDGER_OPTION_HELP})`,
  );
  addSettingOptions(addRejectCapOptions(cmd), 'resume')
    .option('--dry-run', 'read, map, validate and batch; send nothing; ledger untouched')
    .option('--json', 'print the run summary as one JSON object on stdout')
    .option('--allow-empty', 'an input without records is fine (exit 0 instead of 4)')
    .option(
      '--allow-unterminated',
      "a stream's last record may lack its final line break (a producer known to omit it); without it such a stream ends as cut short (exit 1)",
    )
    .option(
      '--expect-count <n>',
      'records the export holds, as its producer declares (control total; exit 1 if not)',
    )
    .option(
      '--expect-total <amount>',
      "the export's amount total, as its producer declares, in its own units",
    )
    .option(
      '--control <file>',
      'control file beside the export: count=N and total=X lines, or JSON {"count","total"}',
    )
    .option(
      '--allow-rejects',
      'rejects under the caps are fine (exit 0 instead of 2): for a scheduler that fails on any non-zero status',
    );
  addProgressOptions(cmd).addHelpText(
    'after',
    '\nExit status: 0 all valid records acknowledged; 1 could not run, or stopped: too many rejects, an input cut\n' +
      'short (a stream ending mid-record, cut or corrupt gzip: summary printed, the rest recorded failed), or the\n' +
      'service refused our credentials (401/403) or redirected; 2 some records rejected (also on a rerun whose\n' +
      'rejects were all recorded before); 3 some batches failed (rerun resends them); 4 no records (empty input;\n' +
      'see --allow-empty); 5 service unavailable (no answer before reading, or failing past --outage-max-ms;\n' +
      'rerun later); 130/143 interrupted by SIGINT/SIGTERM (rerun resumes). Most severe wins: 1, 130/143, 5, 3, 2.\n' +
      'A night with rejects under the caps did its job: schedulers count 2 as success (systemd: SuccessExitStatus=2;\n' +
      'a Kubernetes Job or `send … && next`: --allow-rejects).',
  );
  addExamples(cmd, [
    ['svc-ingest send exports/2026-11-20.csv', 'canonical columns, default ledger'],
    ['svc-ingest send --mapping northwind-csv samples/northwind.csv', "a processor's own layout"],
    ['zcat export.ndjson.gz | svc-ingest send --format ndjson --json -', 'from a pipe, summary as JSON'],
    [
      'svc-ingest send --ledger /var/lib/svc-ingest/transactions.ndjson --metrics-file /var/lib/prometheus/node-exporter/svc_ingest.prom /data/nightly.csv',
      'from cron: absolute state paths, metrics for alerting',
    ],
    ['svc-ingest send --dry-run --rejects /tmp/rejects.ndjson exports/*.csv', 'validate only; nothing sent'],
  ]).action(async (inputs: string[], flags: SendFlags) => {
    exitWith(await runSendCommand(inputs, flags));
  });
}

/** The send flags that are configuration keys (the common connection flags are added by common.ts). */
function sendFlags(f: SendFlags): ConfigFlags {
  return { ...deliveryFlags(f), ...settingFlags(f, 'resume') };
}

type Logger = import('../log.ts').Logger;
type Config = import('../config/index.ts').Config;
type RunMetrics = import('../metrics/run-metrics.ts').RunMetrics;
type LedgerRef = import('../ledger/ref.ts').LedgerRef;

async function runSendCommand(inputs: string[], flags: SendFlags): Promise<number> {
  const [{ loadCommandConfig }, { createLogger }, { resolveLedger, warnLedgerNotice }] = await Promise.all([
    import('./common.ts'),
    import('../log.ts'),
    import('../ledger/ref.ts'),
  ]);
  const config = loadCommandConfig(flags, sendFlags(flags));
  const ledger = resolveLedger(config, flags.ledger);
  const logger = createLogger(config.log);
  warnLedgerNotice(logger, ledger);
  if (inputs.length === 0 && cliIo().stdin.isTTY) {
    // A bare `svc-ingest send` at a terminal would sit waiting for typed records: say what it wants instead.
    throw new SvcIngestError(
      'USAGE_INVALID',
      "no input: name export files, or pipe records into standard input ('-' reads the terminal); see --help",
    );
  }
  const paths = inputs.length === 0 ? ['-'] : inputs;
  await checkRunFiles(paths, ledger, config, flags);
  const gate = flags.checkFirst
    ? await (await import('../send/check-first.ts')).checkFirst(paths, {
        ...flags,
        pool: {
          ...(await import('../prepare/choose.ts')).choosePool(config.prepare, {
            dryRun: true,
            concurrency: 1,
          }),
          use: 'off',
        },
      })
    : undefined;
  if (gate?.exit !== undefined) return gate.exit;
  const stdin = gate?.stdin ?? cliIo().stdin;
  try {
    return await withRunMetrics(config.metrics, logger, (metrics, exposure) =>
      sendAndReport(paths, flags, { config, ledger, logger, stdin }, metrics, exposure),
    );
  } finally {
    await gate?.cleanup();
  }
}

/**
 * The inputs, the ledger (a file), its owner file, the rejects file (when one is written) and the metrics file
 * must be separate files: refused before the metrics file is first written or anything else is touched.
 */
async function checkRunFiles(
  paths: string[],
  ledger: LedgerRef,
  config: Config,
  flags: SendFlags,
): Promise<void> {
  const [{ checkDistinctFiles }, { ownerPathOf }] = await Promise.all([
    import('../ledger/file/files.ts'),
    import('../ledger/file/lock.ts'),
  ]);
  const files: import('../ledger/file/files.ts').RunFile[] = paths
    .filter((p) => p !== '-')
    .map((path) => ({ path, kind: 'input' }));
  if (ledger.kind === 'file')
    files.push(
      { path: ledger.path, kind: 'ledger' },
      { path: ownerPathOf(ledger.path), kind: 'lock owner file' },
    );
  if (!flags.dryRun || flags.rejects !== undefined)
    files.push({ path: rejectsFileOf(config), kind: 'rejects file' });
  if (config.metrics.file !== undefined) files.push({ path: config.metrics.file, kind: 'metrics file' });
  await checkDistinctFiles(files);
}

/** Runs the pipeline with signals handled, prints the summary, and gives the exit status. */
async function sendAndReport(
  paths: string[],
  flags: SendFlags,
  ctx: { config: Config; ledger: LedgerRef; logger: Logger; stdin: NodeJS.ReadableStream },
  metrics: RunMetrics | null,
  exposure: import('../metrics/expose.ts').MetricsExposure | null,
): Promise<number> {
  const { config, logger } = ctx;
  const [{ startSend }, { formatSummary }, { choosePool }] = await Promise.all([
    import('../send-run.ts'),
    import('./send-output.ts'),
    import('../prepare/choose.ts'),
  ]);
  const dryRun = Boolean(flags.dryRun);
  let client: Pick<
    import('../client/index.ts').SvcClient,
    'postTransactionsJson' | 'checkService' | 'close'
  > | null = null;
  if (!dryRun) {
    const { createClient } = await import('../client/client.ts');
    client = createClient(config, { logger, connections: config.send.concurrency });
  }
  let post: import('../send/attempt.ts').PostTransactions = () =>
    Promise.reject(new Error('no client in a dry run'));
  if (client) {
    const c = client;
    post = (txs, o) => c.postTransactionsJson(txs, o);
    // Each call of post is one HTTP attempt: timed around it, the dispatcher's own workings untouched.
    if (metrics) post = metrics.observePost(post);
  }

  const stop = stopOnSignals(paths.includes('-'), logger);

  const s = config.send;
  const run = startSend({
    inputs: paths,
    format: flags.format,
    sourceName: flags.sourceName,
    mapping: flags.mapping === 'canonical' ? undefined : flags.mapping,
    delimiter: flags.delimiter,
    strict: Boolean(flags.strict),
    pool: choosePool(config.prepare, { dryRun, concurrency: s.concurrency }),
    batching: s,
    dispatch: dispatchSettings(config, post),
    preflight: client
      ? healthCheck(config, logger, (signal) => (client as NonNullable<typeof client>).checkService(signal))
      : undefined,
    // A file, or the shared PostgreSQL ledger with its connection settings (src/ledger/ref.ts).
    ledger: ctx.ledger,
    ...ledgerDestination(config, flags),
    rejectsFile: rejectsFileOf(config),
    rejectsExplicit: flags.rejects !== undefined,
    caps: config.send,
    resume: s.resume,
    dryRun,
    logger,
    stdin: ctx.stdin,
    signal: stop.signal,
    allowEmpty: Boolean(flags.allowEmpty),
    allowUnterminated: Boolean(flags.allowUnterminated),
    control: { expectCount: flags.expectCount, expectTotal: flags.expectTotal, controlFile: flags.control },
  });
  const summary = await followRun(run, {
    progress: flags.progress,
    json: flags.json,
    config,
    logger,
    metrics,
    exposure,
    text: (sum) => formatSummary(sum, Boolean(flags.allowEmpty)),
    exitStatus: (sum) => runExitStatus(sum, Boolean(flags.allowEmpty), Boolean(flags.allowRejects)),
    after: async () => {
      await client?.close();
      stop.off();
    },
  });
  return exitStatusOfRun(summary, {
    allowEmpty: Boolean(flags.allowEmpty),
    allowRejects: Boolean(flags.allowRejects),
    logger,
  });
}
