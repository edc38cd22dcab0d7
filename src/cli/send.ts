// `svc-ingest send`: declares the main job's options and wires config, client, pipeline and output.
import { type Command, Option } from 'commander';
import type { ConfigFlags } from '../config/index.ts';
import { EXIT, SvcIngestError } from '../errors.ts';
import { addConnectionOptions, type CommonOptions } from './common.ts';

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
  resume: boolean;
  dryRun?: boolean;
  json?: boolean;
  progress?: boolean;
  strict?: boolean;
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
      'how long to probe a service that looks down before giving up (default 120000)',
    )
    .option('--ledger <path>', 'batch ledger, NDJSON, append-only (default ledger/transactions.ndjson)')
    .option('--rejects <path>', 'rejected records, NDJSON (default ledger/rejects.ndjson)')
    .option('--no-resume', 'resend transactions the ledger already shows as acknowledged')
    .option('--dry-run', 'read, map, validate and batch; send nothing; ledger untouched')
    .option('--json', 'print the run summary as one JSON object on stdout')
    .option('--no-progress', 'no live progress line on a TTY')
    .addHelpText(
      'after',
      '\nExit status: 0 all valid records acknowledged; 1 could not run; 2 some records rejected;\n' +
        '3 some batches failed (rerun resends them); 130/143 interrupted by SIGINT/SIGTERM (rerun resumes).\n' +
        'Examples:\n' +
        '  svc-ingest send exports/2026-11-20.csv\n' +
        '  svc-ingest send --mapping northwind-csv samples/northwind.csv\n' +
        '  zcat export.ndjson.gz | svc-ingest send --format ndjson --json -',
    )
    .action(async (inputs: string[], flags: SendFlags) => {
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
  put('send.ledgerPath', f.ledger, '--ledger');
  put('send.rejectsPath', f.rejects, '--rejects');
  if (f.resume === false) put('send.resume', false, '--no-resume');
  return out;
}

function nonNegInt(value: string | undefined, flag: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) {
    throw new SvcIngestError('USAGE_INVALID', `${flag}: expected a non-negative integer, got "${value}"`);
  }
  return n;
}

async function runSendCommand(inputs: string[], flags: SendFlags): Promise<number> {
  const [{ loadCommandConfig }, { createLogger }, { startSend }, { formatSummary, startProgress }] =
    await Promise.all([
      import('./common.ts'),
      import('../log.ts'),
      import('../pipeline.ts'),
      import('./send-output.ts'),
    ]);
  const config = loadCommandConfig(flags, sendFlags(flags));
  const logger = createLogger({ level: config.log.level });
  const splitRetries = nonNegInt(flags.splitRetries, '--split-retries', 1);
  const outageMaxMs = nonNegInt(flags.outageMaxMs, '--outage-max-ms', 120_000);
  if (inputs.length === 0 && process.stdin.isTTY) {
    // A bare `svc-ingest send` at a terminal would sit waiting for typed records: say what it wants instead.
    throw new SvcIngestError(
      'USAGE_INVALID',
      "no input: name export files, or pipe records into standard input ('-' reads the terminal); see --help",
    );
  }
  const paths = inputs.length === 0 ? ['-'] : inputs;

  let client: Pick<import('../client/index.ts').SvcClient, 'postTransactionsJson' | 'close'> | null = null;
  if (!flags.dryRun) {
    const { createClient } = await import('../client/index.ts');
    client = createClient(config, { logger, connections: config.send.concurrency });
  }

  let stopSignal: string | null = null;
  let stopDispatch: () => void = () => {};
  const onSignal = (sig: NodeJS.Signals) => {
    if (stopSignal) {
      logger.error(
        { event: 'run.abort', signal: sig },
        'second signal: exiting without waiting for requests in flight',
      );
      process.exit(sig === 'SIGINT' ? EXIT.SIGINT : EXIT.SIGTERM);
    }
    stopSignal = sig;
    logger.warn(
      { event: 'run.stopping', signal: sig },
      'stopping: no more input is read; waiting for batches in flight',
    );
    stopDispatch();
    if (paths.includes('-')) process.stdin.destroy();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const run = startSend({
    inputs: paths,
    format: flags.format,
    mapping: flags.mapping === 'canonical' ? undefined : flags.mapping,
    delimiter: flags.delimiter,
    strict: Boolean(flags.strict),
    concurrency: config.send.concurrency,
    batchSize: config.send.batchSize,
    maxRetries: config.send.maxRetries,
    retryBaseMs: config.send.retryBaseMs,
    retryMaxMs: config.send.retryMaxMs,
    splitRetries,
    outageMaxMs,
    ledgerPath: config.send.ledgerPath,
    rejectsPath: config.send.rejectsPath,
    rejectsExplicit: flags.rejects !== undefined,
    resume: config.send.resume,
    dryRun: Boolean(flags.dryRun),
    post: client ? (txs, o) => client.postTransactionsJson(txs, o) : undefined,
    logger,
    stdin: process.stdin,
    stopRequested: () => stopSignal,
    onStop: (stop) => {
      stopDispatch = stop;
    },
  });
  const stopProgress =
    flags.progress !== false && process.stderr.isTTY ? startProgress(run.progress) : () => {};
  let summary: Awaited<typeof run.done>;
  try {
    summary = await run.done;
  } finally {
    stopProgress();
    await client?.close();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  if (flags.json) process.stdout.write(`${JSON.stringify(summary)}\n`);
  else process.stderr.write(formatSummary(summary));
  // On a terminal the readable summary above says it all; elsewhere the log line is for log collectors.
  const level = process.stderr.isTTY && !flags.json ? 'debug' : 'info';
  logger[level]({ event: 'run.end', ...summary }, 'run finished');

  if (summary.interrupted === 'SIGINT') return EXIT.SIGINT;
  if (summary.interrupted) return EXIT.SIGTERM;
  if (summary.failed > 0 || summary.outage) return EXIT.FAILED;
  if (summary.rejected > 0) return EXIT.REJECTED;
  return EXIT.OK;
}
