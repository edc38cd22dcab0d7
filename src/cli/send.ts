// `svc-ingest send`: declares the main job's options and wires config, client, pipeline and output.
import { type Command, Option } from 'commander';
import type { ConfigFlags } from '../config/index.ts';
import { EXIT, exitStatusOf, SvcIngestError } from '../errors.ts';
import { addConnectionOptions, addExamples, type CommonOptions } from './common.ts';

interface SendFlags extends CommonOptions {
  format?: 'csv' | 'ndjson';
  mapping?: string;
  delimiter?: string;
  concurrency?: string;
  batchSize?: string;
  maxRetries?: string;
  retryBaseMs?: string;
  retryMaxMs?: string;
  splitRetries?: string;
  outageMaxMs?: string;
  ledger?: string;
  rejects?: string;
  maxRejects?: string;
  maxRejectBytes?: string;
  maxRejectPercent?: string;
  rejectSample?: string;
  resume: boolean;
  dryRun?: boolean;
  json?: boolean;
  progress?: boolean;
  strict?: boolean;
  progressInterval?: string;
  allowEmpty?: boolean;
  metricsFile?: string;
  metricsPort?: string;
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
      new Option('--format <format>', 'input format (default: from the extension)').choices([
        'csv',
        'ndjson',
      ]),
    )
    .option('--mapping <file|name>', 'mapping profile (a file, or a name in config/mappings/)', 'canonical')
    .option('--delimiter <char>', 'CSV delimiter (default: the profile\'s, else ",")')
    .option('--strict', 'every column a mapping rule names must be in the CSV header (else: a warning)')
    .option('--concurrency <n>', 'batches in flight at once (default 4)')
    .option('--batch-size <n>', 'records per request, 1..50 (default 50)')
    .option('--max-retries <n>', 'retries of one batch before it is marked failed (default 5)')
    .option(
      '--retry-base-ms <ms>',
      'wait before the first retry; doubles each retry, with jitter (default 500)',
    )
    .option('--retry-max-ms <ms>', 'cap on one retry wait (default 30000)')
    .option('--split-retries <n>', 'retries of each half when a failing batch is split (default 1)')
    .option(
      '--outage-max-ms <ms>',
      'how long the service may keep failing (from its first failure) before giving up, exit 5 (default 120000)',
    )
    .option('--ledger <path>', 'batch ledger, NDJSON, append-only (default ledger/transactions.ndjson)')
    .option('--rejects <path>', 'rejected records, NDJSON (default ledger/rejects.ndjson)')
    .option(
      '--max-rejects <n>',
      'stop (exit 1) past this many new rejects in one run; 0 = no limit (default 100000)',
    )
    .option(
      '--max-reject-bytes <n>',
      'stop (exit 1) before one run adds more than this to the rejects file; 0 = no limit (default 67108864 = 64 MiB)',
    )
    .option(
      '--max-reject-percent <p>',
      'stop (exit 1) when at least p% of the first --reject-sample records are rejected; 0 = off (default 90)',
    )
    .option('--reject-sample <n>', 'records the --max-reject-percent check looks at (default 1000)')
    .option('--no-resume', 'resend transactions the ledger already shows as acknowledged')
    .option('--dry-run', 'read, map, validate and batch; send nothing; ledger untouched')
    .option('--json', 'print the run summary as one JSON object on stdout')
    .option('--allow-empty', 'an input without records is fine (exit 0 instead of 4)')
    .option(
      '--progress-interval <seconds>',
      'when stderr is not a TTY, log a progress line this often; 0 = never (default 30)',
    )
    .option('--no-progress', 'no live progress line on a TTY and no progress log lines')
    .option(
      '--metrics-file <path>',
      'write Prometheus metrics to this file (textfile collector: temp file + rename, every 5 s and at the end)',
    )
    .option(
      '--metrics-port <n>',
      'serve Prometheus metrics at http://127.0.0.1:<n>/metrics while the run lasts',
    )
    .addHelpText(
      'after',
      '\nExit status: 0 all valid records acknowledged; 1 could not run, or stopped: too many rejects, or the\n' +
        'service refused our credentials (401/403) or redirected; 2 some records rejected (also on a rerun whose\n' +
        'rejects were all recorded before); 3 some batches failed (rerun resends them); 4 no records (empty input;\n' +
        'see --allow-empty); 5 service unavailable (no answer before reading, or failing past --outage-max-ms;\n' +
        'rerun later); 130/143 interrupted by SIGINT/SIGTERM (rerun resumes). Most severe wins: 1, 130/143, 5, 3, 2.',
    );
  addExamples(cmd, [
    ['svc-ingest send exports/2026-11-20.csv', 'canonical columns, default ledger'],
    ['svc-ingest send --mapping northwind-csv samples/northwind.csv', "a processor's own layout"],
    ['zcat export.ndjson.gz | svc-ingest send --format ndjson --json -', 'from a pipe, summary as JSON'],
    [
      'svc-ingest send --ledger /var/lib/svc-ingest/transactions.ndjson --metrics-file /var/lib/node_exporter/svc_ingest.prom /data/nightly.csv',
      'from cron: absolute state paths, metrics for alerting',
    ],
    ['svc-ingest send --dry-run --rejects /tmp/rejects.ndjson exports/*.csv', 'validate only; nothing sent'],
  ]).action(async (inputs: string[], flags: SendFlags) => {
    process.exitCode = await runSendCommand(inputs, flags);
  });
}

/** The send flags that are configuration keys (the common connection flags are added by common.ts). */
function sendFlags(f: SendFlags): ConfigFlags {
  const out: ConfigFlags = {};
  const put = (key: string, value: unknown, flag: string) => {
    if (value !== undefined) out[key] = { value, flag };
  };
  put('send.concurrency', f.concurrency, '--concurrency');
  put('send.batchSize', f.batchSize, '--batch-size');
  put('send.maxRetries', f.maxRetries, '--max-retries');
  put('send.retryBaseMs', f.retryBaseMs, '--retry-base-ms');
  put('send.retryMaxMs', f.retryMaxMs, '--retry-max-ms');
  put('send.splitRetries', f.splitRetries, '--split-retries');
  put('send.outageMaxMs', f.outageMaxMs, '--outage-max-ms');
  put('send.ledgerPath', f.ledger, '--ledger');
  put('send.rejectsPath', f.rejects, '--rejects');
  put('send.maxRejects', f.maxRejects, '--max-rejects');
  put('send.maxRejectBytes', f.maxRejectBytes, '--max-reject-bytes');
  put('send.maxRejectPercent', f.maxRejectPercent, '--max-reject-percent');
  put('send.rejectSample', f.rejectSample, '--reject-sample');
  if (f.resume === false) put('send.resume', false, '--no-resume');
  put(
    'send.progressIntervalMs',
    secondsToMs(f.progressInterval, '--progress-interval'),
    '--progress-interval',
  );
  put('metrics.file', f.metricsFile, '--metrics-file');
  put('metrics.port', f.metricsPort, '--metrics-port');
  return out;
}

/** A flag in seconds (decimals allowed) as whole milliseconds, for a config key in ms. */
function secondsToMs(value: string | undefined, flag: string): string | undefined {
  if (value === undefined) return undefined;
  const n = /^\s*(\d+(\.\d*)?|\.\d+)\s*$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isFinite(n)) {
    throw new SvcIngestError('USAGE_INVALID', `${flag}: expected a number of seconds, got "${value}"`, {
      field: flag,
    });
  }
  return String(Math.round(n * 1000));
}

type Logger = import('../log.ts').Logger;
type Config = import('../config/index.ts').Config;
type RunMetrics = import('../metrics/run-metrics.ts').RunMetrics;

async function runSendCommand(inputs: string[], flags: SendFlags): Promise<number> {
  const [{ loadCommandConfig }, { createLogger }] = await Promise.all([
    import('./common.ts'),
    import('../log.ts'),
  ]);
  const config = loadCommandConfig(flags, sendFlags(flags));
  const logger = createLogger({ level: config.log.level });
  if (inputs.length === 0 && process.stdin.isTTY) {
    // A bare `svc-ingest send` at a terminal would sit waiting for typed records: say what it wants instead.
    throw new SvcIngestError(
      'USAGE_INVALID',
      "no input: name export files, or pipe records into standard input ('-' reads the terminal); see --help",
    );
  }
  const paths = inputs.length === 0 ? ['-'] : inputs;
  if (config.metrics.file === undefined && config.metrics.port === undefined) {
    return sendAndReport(paths, flags, config, logger, null);
  }

  // Metrics first: a file that cannot be written or a port that is taken stops the run before anything is sent.
  const [{ createRunMetrics }, { exposeMetrics }] = await Promise.all([
    import('../metrics/run-metrics.ts'),
    import('../metrics/expose.ts'),
  ]);
  const metrics = createRunMetrics();
  const exposure = await exposeMetrics(metrics, {
    file: config.metrics.file,
    port: config.metrics.port,
    logger,
  });
  const finish = async (code: number): Promise<void> => {
    metrics.finish(code);
    await exposure
      .close()
      .catch((err: Error) => logger.error({ event: 'metrics.write' }, `metrics not written: ${err.message}`));
  };
  let code: number;
  try {
    code = await sendAndReport(paths, flags, config, logger, metrics);
  } catch (err) {
    await finish(exitStatusOf(err));
    throw err;
  }
  await finish(code);
  return code;
}

/**
 * SIGINT / SIGTERM stop the run: nothing more is read (standard input is closed), batches in flight settle; a
 * second signal exits at once. The returned signal is aborted with the signal's name.
 */
function stopOnSignals(readsStdin: boolean, logger: Logger): { signal: AbortSignal; off(): void } {
  const stop = new AbortController();
  const onSignal = (sig: NodeJS.Signals) => {
    if (stop.signal.aborted) {
      logger.error(
        { event: 'run.abort', signal: sig },
        'second signal: exiting without waiting for requests in flight',
      );
      process.exit(sig === 'SIGINT' ? EXIT.SIGINT : EXIT.SIGTERM);
    }
    logger.warn(
      { event: 'run.stopping', signal: sig },
      'stopping: no more input is read; waiting for batches in flight',
    );
    stop.abort(sig);
    if (readsStdin) process.stdin.destroy();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    signal: stop.signal,
    off() {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}

/** Runs the pipeline with signals handled, prints the summary, and gives the exit status. */
async function sendAndReport(
  paths: string[],
  flags: SendFlags,
  config: Config,
  logger: Logger,
  metrics: RunMetrics | null,
): Promise<number> {
  const [{ writeStderr }, { startSend }, { formatSummary, startProgress }, { choosePool }] =
    await Promise.all([
      import('../log.ts'),
      import('../pipeline.ts'),
      import('./send-output.ts'),
      import('../prepare/choose.ts'),
    ]);
  const dryRun = Boolean(flags.dryRun);
  let client: Pick<
    import('../client/index.ts').SvcClient,
    'postTransactionsJson' | 'checkService' | 'close'
  > | null = null;
  if (!dryRun) {
    const { createClient } = await import('../client/index.ts');
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
    mapping: flags.mapping === 'canonical' ? undefined : flags.mapping,
    delimiter: flags.delimiter,
    strict: Boolean(flags.strict),
    pool: choosePool(config.prepare, { dryRun, concurrency: s.concurrency }),
    batchSize: s.batchSize,
    dispatch: {
      post,
      concurrency: s.concurrency,
      maxRetries: s.maxRetries,
      retryBaseMs: s.retryBaseMs,
      retryMaxMs: s.retryMaxMs,
      splitRetries: s.splitRetries,
      outageMaxMs: s.outageMaxMs,
    },
    preflight: client ? () => (client as NonNullable<typeof client>).checkService() : undefined,
    // A file path, or postgres://… for the shared PostgreSQL ledger (its password file and lease from ledger.*).
    ledger: s.ledgerPath,
    passwordFile: config.ledger.passwordFile,
    leaseMs: config.ledger.leaseMs,
    rejectsPath: s.rejectsPath,
    rejectsExplicit: flags.rejects !== undefined,
    maxRejects: s.maxRejects,
    maxRejectBytes: s.maxRejectBytes,
    maxRejectPercent: s.maxRejectPercent,
    rejectSample: s.rejectSample,
    resume: s.resume,
    dryRun,
    logger,
    stdin: process.stdin,
    signal: stop.signal,
    allowEmpty: Boolean(flags.allowEmpty),
  });
  metrics?.track(run.progress);
  const stopProgress =
    flags.progress === false
      ? () => {}
      : startProgress(run.progress, {
          tty: Boolean(process.stderr.isTTY),
          intervalMs: config.send.progressIntervalMs,
          logger,
        });
  let summary: Awaited<typeof run.done>;
  try {
    summary = await run.done;
  } finally {
    stopProgress();
    await client?.close();
    stop.off();
  }
  if (flags.json) process.stdout.write(`${JSON.stringify(summary)}\n`);
  else writeStderr(formatSummary(summary, Boolean(flags.allowEmpty)));
  // On a terminal the readable summary above says it all; elsewhere the log line is for log collectors.
  const level = process.stderr.isTTY && !flags.json ? 'debug' : 'info';
  logger[level]({ event: 'run.end', ...summary }, 'run finished');

  if (summary.error) {
    // The run stopped itself (too many rejects): the summary above says what was done, this line why.
    process.stderr.write(`svc-ingest: ${summary.error.code}: ${summary.error.message}\n`);
    return EXIT.USAGE;
  }
  if (summary.interrupted === 'SIGINT') return EXIT.SIGINT;
  if (summary.interrupted) return EXIT.SIGTERM;
  if (summary.outage) return EXIT.UNAVAILABLE;
  if (summary.failed > 0) return EXIT.FAILED;
  if (summary.rejected > 0) return EXIT.REJECTED;
  if (summary.read === 0 && !flags.allowEmpty) {
    logger.warn(
      { event: 'run.empty', inputs: summary.emptyInputs },
      'no records: the input was empty or only a header (exit 4; --allow-empty accepts that)',
    );
    return EXIT.EMPTY;
  }
  return EXIT.OK;
}
