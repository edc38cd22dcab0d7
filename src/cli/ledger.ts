// `svc-ingest ledger status|failed|find`: what the ledgers say, for operators and support (read-only, no service).

import { once } from 'node:events';
import type { Command } from 'commander';
import { EXIT, exitWith } from '../errors.ts';
import { cliIo } from '../io.ts';
import { destinationOf } from '../ledger/destination.ts';
import type { FoundLine } from '../ledger/file/find.ts';
import type { LedgerReader } from '../ledger/reader.ts';
import { ledgerNotice } from '../ledger/ref.ts';
import type { LedgerRun, LedgerStatus, OutstandingFailure } from '../ledger/status.ts';
import { maskCardNumbers, maskOwnRecord } from '../mask/index.ts';
import {
  addConfigAndLogOptions,
  addExamples,
  addLedgerOption,
  type CommonOptions,
  loadCommandConfig,
  printJson,
  printOwnJson,
  printText,
} from './common.ts';
import { chooseLedger } from './ledger-choice.ts';

interface LedgerOptions extends CommonOptions {
  ledger?: string[];
  json?: boolean;
  /** Answer for one destination (a base URL as the run saw it; normalised as the ledger records it). */
  destination?: string;
}

/** The destination asked for, as the ledger records it (origin + path, ` institution=…` kept as given). */
function destinationAsked(opts: LedgerOptions): string | undefined {
  if (opts.destination === undefined) return undefined;
  const [base, ...scope] = opts.destination.trim().split(' ');
  return [destinationOf(base as string), ...scope].join(' ');
}

/** Runs listed in the readable status (the JSON lists them all). */
const RUNS_SHOWN = 10;

function duration(from: string | null, to: string | null): string {
  if (from === null || to === null) return '?';
  const ms = Date.parse(to) - Date.parse(from);
  if (!Number.isFinite(ms)) return '?';
  const s = Math.round(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return h > 0
    ? `${h}h${String(m).padStart(2, '0')}m`
    : m > 0
      ? `${m}m${String(s % 60).padStart(2, '0')}s`
      : `${s}s`;
}

function runLine(r: LedgerRun): string {
  return (
    `run ${r.runId ?? '(no runId)'}: ${r.firstTs ?? '?'} → ${r.lastTs ?? '?'} (${duration(r.firstTs, r.lastTs)}); ` +
    `to ${r.destination ?? '(no destination recorded)'}; ` +
    `batches ${r.batches.acked} acked, ${r.batches.failed} failed; ids ${r.ids.acked} acked, ${r.ids.failed} failed, ` +
    `${r.ids.outstanding} outstanding${r.sources.length > 0 ? `; ${r.sources.join(', ')}` : ''}`
  );
}

/** The readable form of `ledger status`. */
export function formatStatus(s: LedgerStatus): string[] {
  const lines = s.ledgers.map(
    (l) =>
      `ledger ${l.path}: ${l.lines} line(s)` +
      (l.badLines > 0
        ? `, ${l.badLines} unreadable (torn or foreign; lines ${l.badLineNumbers.join(', ')})`
        : ', none unreadable'),
  );
  lines.push(
    `batches: ${s.batches.acked} acked, ${s.batches.failed} failed, ${s.batches.outstanding} with outstanding ids`,
    `transaction ids: ${s.ids.acked} acknowledged (${s.ids.ackedDistinct} distinct), ${s.ids.failed} in failed batches, ` +
      `${s.ids.outstanding} outstanding (failed, never acknowledged: a rerun resends them; list them with 'svc-ingest ledger failed')`,
    `runs: ${s.runs.length}${s.firstTs ? `, from ${s.firstTs} to ${s.lastTs}` : ''}`,
  );
  if (s.destination !== undefined) lines.unshift(`destination ${s.destination} (its lines only)`);
  for (const d of s.destinations ?? [])
    lines.push(
      `destination ${d.destination ?? '(none recorded)'}: batches ${d.batches.acked} acked, ${d.batches.failed} failed; ` +
        `ids ${d.ids.ackedDistinct} acknowledged, ${d.ids.outstanding} outstanding`,
    );
  if (s.olderWorkers)
    lines.push(
      `workers of an earlier svc-ingest (ledger schema 6 or older) still running: ${s.olderWorkers}; ` +
        'until they stop, outcomes are recorded row by row, as they read them',
    );
  if (s.lastRun) lines.push(`last ${runLine(s.lastRun)}`);
  if (s.runs.length > 1) {
    const shown = s.runs.slice(-RUNS_SHOWN);
    if (s.runs.length > shown.length)
      lines.push(`  … ${s.runs.length - shown.length} earlier run(s) (--json lists all)`);
    for (const r of shown) lines.push(`  ${runLine(r)}`);
  }
  return lines;
}

function failureLine(f: OutstandingFailure): string {
  const where = f.source ? `${f.source}${f.lines ? ` lines ${f.lines[0]}-${f.lines[1]}` : ''}` : '?';
  return (
    `${f.transactionId}  failed ${f.failures}x, last ${f.ts ?? '?'} (run ${f.runId ?? '?'}, batch ${f.batchId ?? '?'}, ` +
    `HTTP ${f.httpStatus ?? 'none'}, to ${f.destination ?? '?'})  ${where}  ${f.error ?? ''}`
  ).trimEnd();
}

function foundLine(h: FoundLine): string {
  const where = h.source ? `  ${h.source}${h.lines ? ` lines ${h.lines[0]}-${h.lines[1]}` : ''}` : '';
  const what =
    h.status === 'acked'
      ? `requestId ${h.requestId ?? '?'}`
      : `HTTP ${h.httpStatus ?? 'none'}: ${h.error ?? '?'}`;
  const to = `  to ${h.destination ?? '(no destination recorded)'}`;
  return `${h.transactionId}  ${h.status.padEnd(6)}  ${h.ts ?? '?'}  batch ${h.batchId ?? '?'} (run ${h.runId ?? '?'})  ${what}${to}${where}  [${h.ledger}:${h.ledgerLine}]`;
}

/**
 * The command's ledger (the one rule, src/ledger/ref.ts: --ledger, else ledger.url / SVC_LEDGER_URL, else
 * send.ledgerPath) and a reader of it; a PostgreSQL database without the ledger's schema is LEDGER_READ. `fn` is
 * also given the line saying which ledger is used when a --ledger file and SVC_LEDGER_URL are both set (else null);
 * its reader is closed after.
 */
async function withReader<T>(
  opts: LedgerOptions,
  fn: (reader: LedgerReader, notice: string | null) => Promise<T>,
): Promise<T> {
  // A signal ends the command through process.exit, so the indexes' temp folders are removed ('exit' handlers).
  const io = cliIo();
  const off = io.onSignal((sig) => {
    off();
    io.exit(sig === 'SIGINT' ? EXIT.SIGINT : EXIT.SIGTERM);
  });
  const config = loadCommandConfig(opts);
  const [{ createLogger }, { openLedgerReader }] = await Promise.all([
    import('../log.ts'),
    import('../ledger/reader.ts'),
  ]);
  const logger = createLogger(config.log);
  const ref = await chooseLedger(opts.ledger, config, logger);
  const reader = await openLedgerReader(ref, { logger, requireLedger: true });
  try {
    return await fn(reader, ref.map(ledgerNotice).find((n) => n !== null) ?? null);
  } finally {
    await reader.close();
  }
}

export async function runStatus(opts: LedgerOptions): Promise<number> {
  const { status, notice } = await withReader(opts, async (r, notice) => ({
    status: await r.status({ destination: destinationAsked(opts) }),
    notice,
  }));
  // A --ledger file while SVC_LEDGER_URL is set: the answer says which ledger it is of (also warned on stderr).
  if (opts.json) printJson(notice === null ? status : { ...status, ledgerNotice: notice });
  else printText(notice === null ? formatStatus(status) : [notice, ...formatStatus(status)]);
  return EXIT.OK;
}

/**
 * Lines to stdout in 64 KiB writes that wait for the reader: a slow pipe (`| less`, `| wc`) must not make
 * the output pile up in memory.
 */
function createStdoutLines() {
  let buf = '';
  const flush = async (): Promise<void> => {
    if (buf === '') return;
    const out = cliIo().stdout;
    const ok = out.write(buf);
    buf = '';
    if (!ok) await once(out, 'drain');
  };
  return {
    async push(line: string): Promise<void> {
      buf += `${line}\n`;
      if (buf.length >= 1 << 16) await flush();
    },
    flush,
  };
}

export async function runFailed(opts: LedgerOptions): Promise<number> {
  const out = createStdoutLines();
  let ids = 0;
  let batches = 0;
  let lastBatch: string | undefined;
  // The ids of one failed line come one after another.
  const list = async (failures: AsyncIterable<OutstandingFailure>): Promise<void> => {
    for await (const f of failures) {
      ids++;
      const batch = `${f.ledger}\n${f.batchId}`;
      if (batch !== lastBatch) batches++;
      lastBatch = batch;
      await out.push(opts.json ? JSON.stringify(maskOwnRecord(f)) : maskCardNumbers(failureLine(f)));
    }
  };
  await withReader(opts, (r) => list(r.outstandingFailures({ destination: destinationAsked(opts) })));
  if (!opts.json) {
    await out.push(
      ids === 0
        ? 'no outstanding failed ids (none failed, or each was acknowledged since)'
        : `${ids} outstanding failed id(s) in ${batches} batch(es); a rerun of send resends them`,
    );
  }
  await out.flush();
  return ids > 0 ? EXIT.FAILED : EXIT.OK;
}

export async function runFind(ids: string[], opts: LedgerOptions): Promise<number> {
  const wanted = new Set(ids);
  const found = new Set<string>();
  const only = destinationAsked(opts);
  const onHit = (hit: FoundLine) => {
    if (only !== undefined && hit.destination !== only && hit.destination !== null) return;
    found.add(hit.transactionId);
    if (opts.json) printOwnJson(hit);
    else printText([foundLine(hit)]);
  };
  const where = await withReader(opts, async (r) => {
    await r.find(wanted, onHit);
    return r.locations.join(', ');
  });
  const absent = [...wanted].filter((id) => !found.has(id));
  for (const id of absent) {
    if (opts.json) printJson({ transactionId: id, status: 'absent' });
    else printText([`${id}  absent  in no line of ${where}`]);
  }
  return absent.length > 0 ? EXIT.REJECTED : EXIT.OK;
}

function options(cmd: Command, json: string): Command {
  addLedgerOption(cmd)
    .option('--json', json)
    .option(
      '--destination <url>',
      'answer for one destination (the service base URL a run sent to): its acknowledgements only count for it',
    );
  return addConfigAndLogOptions(cmd);
}

export function define(program: Command): void {
  const ledger = program
    .command('ledger')
    .description(
      'what the ledger holds: status, outstanding failed ids, the batch that carried an id (read-only; ledger ' +
        'files or a PostgreSQL ledger); migrate: the schema of a PostgreSQL ledger',
    )
    .addHelpText(
      'after',
      '\nstatus, failed and find read every --ledger given (default: ledger.url / SVC_LEDGER_URL when set,\nelse send.ledgerPath, as for every command); a missing ledger or a\n' +
        'directory is an error. A PostgreSQL ledger (--ledger postgres://USER@HOST/DB) is read on its own.',
    );
  addExamples(ledger, [
    ['svc-ingest ledger status', 'runs, batches, ids, outstanding failures, the last run'],
    ['svc-ingest ledger failed --json > outstanding.ndjson', 'the outstanding failed ids as NDJSON'],
    [
      'svc-ingest ledger status --ledger postgres://svc@db.internal/ledger',
      'the shared PostgreSQL ledger (same answers, same shapes)',
    ],
    [
      'svc-ingest ledger find tx-0001 --ledger /var/lib/svc-ingest/transactions.ndjson',
      'which batch and requestId carried an id',
    ],
  ]);
  const status = options(
    ledger
      .command('status')
      .description(
        'runs, batches acked and failed, ids acknowledged, outstanding failures, unreadable lines, the last run',
      ),
    'print the status as one JSON object on stdout',
  )
    .addHelpText('after', '\nExit status: 0 reported; 1 could not run (a missing ledger, a directory, …).')
    .action(async (opts: LedgerOptions) => exitWith(await runStatus(opts)));
  addExamples(status, [
    ['svc-ingest ledger status', 'the configured ledger, readable'],
    [
      'svc-ingest ledger status --ledger /var/lib/svc-ingest/transactions.ndjson --json | jq .ids.outstanding',
      'a named ledger, as JSON',
    ],
  ]);
  const failed = options(
    ledger
      .command('failed')
      .description(
        'every outstanding failed id (failed, in no acked line) once, with its last failure and error',
      ),
    'print one JSON object a line (NDJSON) on stdout',
  )
    .addHelpText(
      'after',
      '\nExit status: 0 nothing outstanding; 3 some ids outstanding (a rerun of send resends them); 1 could not run.',
    )
    .action(async (opts: LedgerOptions) => exitWith(await runFailed(opts)));
  addExamples(failed, [
    ['svc-ingest ledger failed', 'readable, one id a line'],
    ["svc-ingest ledger failed --json | jq -r '.transactionId' > outstanding.txt", 'just the ids'],
  ]);
  const find = options(
    ledger
      .command('find')
      .description('every ledger line naming the ids: status, batch, service requestId, time, source lines')
      .argument('<id...>', 'transactionId(s)'),
    'print one JSON object a line (NDJSON) on stdout; an id in no line gives {"transactionId", "status": "absent"}',
  )
    .addHelpText('after', '\nExit status: 0 every id is in some line; 2 some id is in none; 1 could not run.')
    .action(async (ids: string[], opts: LedgerOptions) => exitWith(await runFind(ids, opts)));
  addExamples(find, [
    ['svc-ingest ledger find tx-0001 tx-0002', 'two ids in the configured ledger'],
    ['svc-ingest ledger find --ledger old.ndjson --ledger new.ndjson --json tx-0001', 'two ledgers, NDJSON'],
  ]);
}
