// The send pipeline in one readable chain: read → map → validate → dedupe/resume → batch → send → ledger.
// Every record read settles in exactly one counter: rejected, skipped, sent or failed.
import { randomBytes } from 'node:crypto';
import { createBatcher } from './batch/batcher.ts';
import { SvcIngestError } from './errors.ts';
import { type AckedIndex, createAckedIndex, loadAckedIndex } from './ledger/acked-index.ts';
import { createSpillingFingerprintSet } from './ledger/fingerprint.ts';
import { acquireLedgerLock, type LedgerLock } from './ledger/lock.ts';
import { nullRejectsWriter, openRejectsWriter, type RejectsWriter } from './ledger/rejects.ts';
import type { LedgerLine } from './ledger/types.ts';
import { type LedgerWriter, openLedgerWriter } from './ledger/writer.ts';
import type { Logger } from './log.ts';
import { loadProfile } from './map/profile.ts';
import { maskCardNumbers, maskDeep } from './mask.ts';
import { type PreparedItem, prepareChunks } from './prepare/choose.ts';
import { openInputs } from './prepare/inputs.ts';
import type { InputFormat } from './read/open.ts';
import { createDispatcher, OutageError, type PostTransactions } from './send/dispatcher.ts';

export interface SendOptions {
  inputs: string[];
  format?: InputFormat;
  mapping?: string;
  delimiter?: string;
  /** Every column a mapping rule names must be in each CSV header (else only required ones; the rest warn). */
  strict?: boolean;
  concurrency: number;
  batchSize: number;
  maxRetries: number;
  retryBaseMs: number;
  retryMaxMs: number;
  splitRetries?: number;
  outageMaxMs?: number;
  ledgerPath: string;
  rejectsPath: string;
  /** Write rejects even in a dry run (the user named --rejects). */
  rejectsExplicit?: boolean;
  resume: boolean;
  dryRun: boolean;
  /** The client's postTransactions; unused in a dry run. */
  post?: PostTransactions;
  logger: Logger;
  stdin?: NodeJS.ReadableStream;
  /** Polled between records: a signal name once the run must stop. */
  stopRequested?: () => string | null;
  /** Called when a stop request is seen, after which nothing new is read. */
  onStop?: (stop: () => void) => void;
}

/**
 * What a run did (CONTRACT.md `--json` summary, plus a few extra members).
 * read = valid + rejected; valid = sent + skipped + failed (dry run: + batched).
 */
export interface RunSummary {
  read: number;
  valid: number;
  rejected: number;
  skipped: number;
  sent: number;
  failed: number;
  batches: number;
  failedBatches: number;
  retries: number;
  durationMs: number;
  splits: number;
  dryRun: boolean;
  batched: number;
  interrupted: string | null;
  outage: boolean;
  runId: string;
  ledger: string | null;
  rejects: string | null;
  ledgerBadLines: number;
}

/** The counters a run moves as it goes; the summary and the progress line read them. */
type Counters = Pick<
  RunSummary,
  | 'read'
  | 'rejected'
  | 'skipped'
  | 'sent'
  | 'failed'
  | 'batches'
  | 'failedBatches'
  | 'retries'
  | 'splits'
  | 'batched'
>;

/** What the live progress line shows. */
export type RunProgress = Pick<
  RunSummary,
  'read' | 'sent' | 'rejected' | 'skipped' | 'failed' | 'retries'
> & {
  inFlight: number;
};

export interface RunHandle {
  progress(): RunProgress;
  done: Promise<RunSummary>;
}

export function startSend(o: SendOptions): RunHandle {
  const c: Counters = {
    read: 0,
    rejected: 0,
    skipped: 0,
    sent: 0,
    failed: 0,
    batches: 0,
    failedBatches: 0,
    retries: 0,
    splits: 0,
    batched: 0,
  };
  let inFlight = () => 0;
  const done = runSend(o, c, (f) => {
    inFlight = f;
  });
  return { progress: () => ({ ...c, inFlight: inFlight() }), done };
}

async function runSend(
  o: SendOptions,
  c: Counters,
  exposeInFlight: (f: () => number) => void,
): Promise<RunSummary> {
  const started = performance.now();
  const runId = randomBytes(4).toString('hex');
  const log = o.logger;

  // Everything that can refuse to run does so before anything is sent.
  const profile = await loadProfile(o.mapping);
  const { specs, delimiter, headers, onHeader } = await openInputs(o.inputs, profile, {
    format: o.format,
    delimiter: o.delimiter,
    strict: o.strict,
    warn: (message, use) =>
      log.warn({ event: 'mapping.column_missing', rule: use.rule, column: use.column }, message),
  });
  // Fields the profile lets records go without ("required": false): said once a run, when it first happens.
  const relaxedSeen = new Set<string>();
  const noteRelaxed = (item: Extract<PreparedItem, { kind: 'tx' }>) => {
    for (const field of item.relaxed ?? []) {
      if (relaxedSeen.has(field)) continue;
      relaxedSeen.add(field);
      log.warn(
        { event: 'mapping.relaxed_field', field, source: item.source, line: item.line },
        `records without ${field} are sent without it (mapping ${profile.name} marks it "required": false; the service's documentation lists it as required)`,
      );
    }
  };
  let lock: LedgerLock | null = null;
  let ledger: LedgerWriter | null = null;
  let rejects: RejectsWriter = nullRejectsWriter();
  let acked: AckedIndex = createAckedIndex();
  let ledgerBadLines = 0;
  // This run's ids as 64-bit fingerprints in flat memory: a ~10 MB table, then sorted runs in a temp folder
  // (~1.3 bytes an id kept in memory). Made out here so that the finally below removes that folder.
  const seen = createSpillingFingerprintSet();
  try {
    if (!o.dryRun) {
      lock = await acquireLedgerLock(o.ledgerPath);
      if (lock.tookOver)
        log.warn({ event: 'ledger.lock.takeover', pid: lock.tookOver.pid }, 'took over a stale ledger lock');
      ledger = await openLedgerWriter(o.ledgerPath);
      if (ledger.repairedTornLine)
        log.warn({ event: 'ledger.torn' }, 'the ledger ended in a torn line (earlier crash); it is skipped');
    }
    if (o.resume) {
      const loaded = await loadAckedIndex(o.ledgerPath);
      acked = loaded.index;
      ledgerBadLines = loaded.stats.bad;
      if (loaded.stats.bad > 0) {
        log.warn(
          { event: 'ledger.bad_lines', count: loaded.stats.bad, lines: loaded.stats.badLines },
          'ledger has unreadable lines (a torn write after a crash); they are skipped',
        );
      }
      log.info(
        { event: 'ledger.loaded', acked: loaded.stats.acked, lines: loaded.stats.lines },
        'resume index loaded',
      );
    }
    if (!o.dryRun || o.rejectsExplicit) rejects = await openRejectsWriter(o.rejectsPath);

    const dispatcher = createDispatcher({
      post: o.post ?? (() => Promise.reject(new Error('no client in dry run'))),
      concurrency: o.concurrency,
      maxRetries: o.maxRetries,
      retryBaseMs: o.retryBaseMs,
      retryMaxMs: o.retryMaxMs,
      splitRetries: o.splitRetries,
      outageMaxMs: o.outageMaxMs,
      async onOutcome(out) {
        const ids = out.items.map((i) => i.id);
        const first = out.items[0]!;
        const last = out.items[out.items.length - 1]!;
        const line: LedgerLine = {
          ts: new Date().toISOString(),
          batchId: out.batchId,
          status: out.status,
          requestId: out.requestId,
          transactionIds: ids,
          attempts: out.attempts,
          httpStatus: out.httpStatus,
          ...(out.error !== undefined ? { error: maskCardNumbers(out.error) } : {}),
          clientRequestId: out.clientRequestId,
          source: first.source,
          lines: [first.line, last.line],
          runId,
        } as LedgerLine;
        await ledger!.append(line);
        c.batches++;
        if (out.status === 'acked') {
          c.sent += ids.length;
          log.debug(
            { event: 'batch.acked', batchId: out.batchId, requestId: out.requestId, attempts: out.attempts },
            'batch acked',
          );
        } else {
          c.failed += ids.length;
          c.failedBatches++;
          log.warn(
            {
              event: 'batch.failed',
              batchId: out.batchId,
              httpStatus: out.httpStatus,
              attempts: out.attempts,
              error: line.error,
            },
            'batch failed after retries',
          );
        }
      },
      onRetry(info) {
        c.retries++;
        log.debug(
          {
            event: 'batch.retry',
            batchId: info.batchId,
            attempt: info.attempt,
            httpStatus: info.failure.httpStatus,
            delayMs: info.delayMs,
          },
          'retrying batch',
        );
      },
      onSplit(info) {
        c.splits++;
        log.info(
          {
            event: 'batch.split',
            batchId: info.batchId,
            size: info.size,
            httpStatus: info.failure.httpStatus,
          },
          'batch keeps failing; splitting it to isolate the bad record',
        );
      },
      onBreaker(info) {
        log.warn(
          { event: `breaker.${info.state}`, waitMs: info.waitMs },
          `service looks down: breaker ${info.state}`,
        );
      },
    });
    exposeInFlight(() => dispatcher.inFlight);
    o.onStop?.(() => dispatcher.stop());

    const batcher = createBatcher(o.batchSize, runId);
    const reject = (
      source: string,
      line: number,
      errors: Array<{ field: string; message: string }>,
      record: unknown,
    ) => {
      c.rejected++;
      try {
        rejects.write({ source, line, errors, record, runId });
      } catch (err) {
        if (err instanceof SvcIngestError) throw err;
        // A record too deep or too big to serialise (JSON.stringify's RangeError): keep the line without it.
        rejects.write({ source, line, errors, runId });
      }
    };
    const submit = async (batch: ReturnType<typeof batcher.push>) => {
      if (!batch) return;
      if (o.dryRun) {
        c.batches++;
        c.batched += batch.items.length;
        return;
      }
      await dispatcher.submit(batch);
    };

    let interrupted: string | null = null;
    let outage = false;
    try {
      outer: for (const spec of specs) {
        // read → map → validate, on worker threads for a large file (prepare/choose.ts).
        const chunks = prepareChunks(spec, profile, {
          mapping: o.mapping,
          delimiter,
          stdin: o.stdin,
          onHeader: spec.path === '-' ? onHeader : undefined,
          columns: headers.get(spec),
          dryRun: o.dryRun,
          concurrency: o.concurrency,
        });
        for await (const chunk of chunks) {
          for (let k = 0; k < chunk.length; k++) {
            const item = chunk[k] as PreparedItem;
            c.read++;
            if (item.kind === 'reject') {
              reject(item.source, item.line, item.errors, item.record);
              continue;
            }
            const id = item.id;
            if (!seen.add(id)) {
              reject(
                item.source,
                item.line,
                [
                  {
                    field: 'transactionId',
                    message: `duplicate transactionId ${id} within this run; the first one is sent`,
                  },
                ],
                // The source record stayed with the thread that parsed it; the mapped one stands in.
                maskDeep(JSON.parse(item.json)),
              );
              continue;
            }
            if (o.resume && acked.has(id)) {
              c.skipped++;
              continue;
            }
            if (item.relaxed !== undefined) noteRelaxed(item);
            await submit(batcher.push({ id, json: item.json, source: item.source, line: item.line }));
          }
          interrupted = o.stopRequested?.() ?? null;
          if (interrupted) break outer;
        }
      }
      await submit(batcher.flush());
    } catch (err) {
      if (err instanceof OutageError) {
        outage = true;
        log.error({ event: 'run.outage' }, err.message);
        const rest = batcher.flush();
        if (rest) await dispatcher.abandon(rest, 'not sent: the service was unavailable');
      } else if (o.stopRequested?.() && err instanceof SvcIngestError && err.code.startsWith('INPUT_')) {
        // A signal closed standard input under the reader: that is the stop, not a read error.
        interrupted = o.stopRequested();
        const rest = batcher.flush();
        if (rest) await dispatcher.abandon(rest, 'not sent: interrupted');
      } else {
        // Stop sending at once; what is in flight settles and is recorded (if the ledger still can).
        dispatcher.stop();
        await dispatcher.drain().catch(() => {});
        throw err;
      }
    }
    await dispatcher.drain();
    interrupted ??= o.stopRequested?.() ?? null;

    const valid = c.read - c.rejected;
    return {
      read: c.read,
      valid,
      rejected: c.rejected,
      skipped: c.skipped,
      sent: c.sent,
      failed: c.failed,
      batches: c.batches,
      failedBatches: c.failedBatches,
      retries: c.retries,
      durationMs: Math.round(performance.now() - started),
      splits: c.splits,
      dryRun: o.dryRun,
      batched: c.batched,
      interrupted,
      outage,
      runId,
      ledger: o.dryRun ? null : o.ledgerPath,
      rejects: o.dryRun && !o.rejectsExplicit ? null : o.rejectsPath,
      ledgerBadLines,
    };
  } finally {
    seen.close?.();
    await rejects.close().catch((err: Error) => log.error({ event: 'rejects.close' }, err.message));
    await ledger?.close();
    await lock?.release();
  }
}
