// The send pipeline in one readable chain: read → map → validate → dedupe/resume → batch → send → ledger.
// Every record read settles in exactly one counter: rejected, skipped, sent or failed.
import { randomBytes } from 'node:crypto';
import { fstatSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { createBatcher } from './batch/batcher.ts';
import { SvcIngestError } from './errors.ts';
import { type AckedIndex, createAckedIndex, loadAckedIndex } from './ledger/file/acked-index.ts';
import { checkStateFile } from './ledger/file/files.ts';
import type { LedgerLine } from './ledger/file/line.ts';
import { acquireLedgerLock, type LedgerLock } from './ledger/file/lock.ts';
import { type LedgerWriter, openLedgerWriter } from './ledger/file/writer.ts';
import type { Logger } from './log.ts';
import { checkHeader as checkProfileHeader } from './map/columns.ts';
import { loadProfile } from './map/profile.ts';
import { maskCardNumbers, maskDeep } from './mask.ts';
import type { InputFormat } from './model/input.ts';
import { type PreparedItem, prepareChunks } from './prepare/choose.ts';
import { type InputSpec, readCsvHeader, resolveInputs, sourceName } from './read/open.ts';
import { nullRejectsWriter, openRejectsWriter, type RejectsWriter } from './record/rejects.ts';
import { createDispatcher, type PostTransactions } from './send/dispatcher.ts';
import { OutageError, StopError } from './send/stop.ts';
import { createSpillingFingerprintSet } from './sorted-runs/fingerprint-set.ts';

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
  /** Most reject lines this run appends (0 or absent: no limit); reaching it stops the run (INPUT_TOO_MANY_REJECTS). */
  maxRejects?: number;
  /** Most bytes this run appends to the rejects file (0 or absent: no limit). */
  maxRejectBytes?: number;
  /** Stop when at least this percent of the first `rejectSample` records are rejected (0 or absent: off). */
  maxRejectPercent?: number;
  rejectSample?: number;
  resume: boolean;
  dryRun: boolean;
  /** The client's postTransactions; unused in a dry run. */
  post?: PostTransactions;
  /** Checks that the service answers (the client's checkService); run before any record is read. */
  preflight?: () => Promise<void>;
  logger: Logger;
  stdin?: NodeJS.ReadableStream;
  /** Polled between records: a signal name once the run must stop. */
  stopRequested?: () => string | null;
  /** Called when a stop request is seen, after which nothing new is read. */
  onStop?: (stop: () => void) => void;
  /** An input without records is logged at info instead of warn (`--allow-empty`). */
  allowEmpty?: boolean;
}

/**
 * What a run did (the `--json` summary of docs/contract.md).
 * read = valid + rejected; valid = sent + skipped + failed (dry run: + batched).
 */
export interface RunSummary {
  read: number;
  valid: number;
  rejected: number;
  /** Rejects not in the rejects file before this run (rejected = rejectedNew + rejectedKnown). */
  rejectedNew: number;
  /** Rejects of the same record of the same source already recorded by an earlier run (not appended again). */
  rejectedKnown: number;
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
  /** Absolute paths of the ledger (null in a dry run) and of the rejects file (null when none is written). */
  ledger: string | null;
  rejects: string | null;
  ledgerBadLines: number;
  /** Inputs that held no record (an empty file, only a header, empty standard input), by source name. */
  emptyInputs: string[];
  /** Why the run stopped before the end of its input and exits 1 (too many rejects); absent otherwise. */
  error?: { code: string; message: string };
}

/** The counters a run moves as it goes; the summary and the progress line read them. */
type Counters = Pick<
  RunSummary,
  | 'read'
  | 'rejected'
  | 'rejectedKnown'
  | 'skipped'
  | 'sent'
  | 'failed'
  | 'batches'
  | 'failedBatches'
  | 'retries'
  | 'splits'
  | 'batched'
>;

/** A snapshot of a run under way: its counters, what is in flight, and how far through the input it is. */
export type RunProgress = Counters & {
  /** Batches handed to the dispatcher and not yet settled. */
  inFlight: number;
  /** Input bytes consumed so far (compressed bytes for a .gz file), all inputs together. */
  bytesRead: number;
  /** Size of all inputs together, or null when one has no known size (a pipe on standard input). */
  bytesTotal: number | null;
};

export interface RunHandle {
  progress(): RunProgress;
  done: Promise<RunSummary>;
}

export function startSend(o: SendOptions): RunHandle {
  const c: Counters = {
    read: 0,
    rejected: 0,
    rejectedKnown: 0,
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
  const bytes: InputBytes = { read: 0, total: null };
  const done = runSend(o, c, bytes, (f) => {
    inFlight = f;
  });
  return {
    progress: () => ({ ...c, inFlight: inFlight(), bytesRead: bytes.read, bytesTotal: bytes.total }),
    done,
  };
}

/** How much of the input has been consumed, for the progress line and its ETA. */
interface InputBytes {
  read: number;
  total: number | null;
}

/** Size of each input in bytes where it is known: a file, or standard input redirected from a file. */
async function inputSizes(specs: InputSpec[]): Promise<Map<InputSpec, number | null>> {
  const sizes = new Map<InputSpec, number | null>();
  for (const spec of specs) {
    try {
      const st = spec.path === '-' ? fstatSync(0) : await stat(spec.path);
      sizes.set(spec, st.isFile() ? st.size : null);
    } catch {
      sizes.set(spec, null); // the reader reports an unreadable input
    }
  }
  return sizes;
}

async function runSend(
  o: SendOptions,
  c: Counters,
  bytes: InputBytes,
  exposeInFlight: (f: () => number) => void,
): Promise<RunSummary> {
  const started = performance.now();
  const runId = randomBytes(4).toString('hex');
  const log = o.logger;

  // Everything that can refuse to run does so before anything is sent.
  const profile = await loadProfile(o.mapping);
  // --format beats the extension; the profile's format is only a hint for standard input.
  const specs = (await resolveInputs(o.inputs, { format: o.format })).map((spec) =>
    spec.sniff && profile.format ? { ...spec, format: profile.format, sniff: false } : spec,
  );
  const delimiter = o.delimiter ?? profile.delimiter;
  const headerSeen = new Set<string>();
  // Every column a rule names: a required one missing stops the run, others warn (stop under --strict).
  const checkHeader = (columns: string[], source: string) => {
    headerSeen.add(source);
    checkProfileHeader(profile, columns, source, {
      strict: o.strict,
      warn: (message, use) =>
        log.warn({ event: 'mapping.column_missing', rule: use.rule, column: use.column, source }, message),
    });
  };
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
  const sizes = await inputSizes(specs);
  bytes.total = [...sizes.values()].every((n) => n !== null)
    ? [...sizes.values()].reduce<number>((a, n) => a + (n ?? 0), 0)
    : null;
  // An input without records is its own outcome (exit 4 when every input is so), never a header error.
  const emptyInputs: string[] = [];
  const noRecords = (spec: InputSpec, why: string) => {
    const source = sourceName(spec);
    emptyInputs.push(source);
    log[o.allowEmpty ? 'info' : 'warn']({ event: 'input.empty', source }, `${source}: ${why}`);
  };
  // Each file's header, checked here and handed on to the reader (the worker pool needs it for later chunks).
  const headers = new Map<InputSpec, string[]>();
  for (const spec of specs) {
    if (spec.format !== 'csv' || spec.path === '-' || sizes.get(spec) === 0) continue;
    const columns = await readCsvHeader(spec, { delimiter });
    if (columns.length === 0) continue; // blank lines only: reported as empty when read
    checkHeader(columns, spec.path);
    headers.set(spec, columns);
  }

  let lock: LedgerLock | null = null;
  let ledger: LedgerWriter | null = null;
  let rejects: RejectsWriter = nullRejectsWriter();
  let acked: AckedIndex = createAckedIndex();
  let ledgerBadLines = 0;
  // This run's ids as 64-bit fingerprints in flat memory: a ~10 MB table, then sorted runs in a temp folder
  // (~1.3 bytes an id kept in memory). Made out here so that the finally below removes that folder.
  const seen = createSpillingFingerprintSet();
  const writesRejects = !o.dryRun || Boolean(o.rejectsExplicit);
  const ledgerAbs = resolve(o.ledgerPath);
  const rejectsAbs = resolve(o.rejectsPath);
  try {
    // Ledger, its owner file and the rejects file must each be a regular file or not exist yet: a link, a
    // directory, a FIFO or a device (/dev/full) is refused here, before anything is created or locked.
    await checkStateFile(o.ledgerPath, 'ledger');
    if (!o.dryRun) await checkStateFile(`${o.ledgerPath}.lock`, 'lock owner file');
    if (writesRejects) await checkStateFile(o.rejectsPath, 'rejects file');
    log.info(
      {
        event: 'run.start',
        runId,
        ledger: ledgerAbs,
        rejects: writesRejects ? rejectsAbs : null,
        dryRun: o.dryRun,
      },
      `run ${runId}: ledger ${ledgerAbs}${writesRejects ? `, rejects ${rejectsAbs}` : ''}`,
    );
    if (!o.dryRun) {
      lock = await acquireLedgerLock(o.ledgerPath);
      if (lock.tookOver)
        log.warn(
          { event: 'ledger.lock.takeover', pid: lock.tookOver.pid },
          'an earlier run died holding this ledger; the kernel released its lock',
        );
      ledger = await openLedgerWriter(lock.file);
      if (ledger.repairedTornLine)
        log.warn({ event: 'ledger.torn' }, 'the ledger ended in a torn line (earlier crash); it is skipped');
    }
    // Before any record is read (standard input would be consumed): does the service answer at all?
    if (!o.dryRun) await o.preflight?.();
    let interrupted: string | null = null;
    if (o.resume) {
      log.info({ event: 'ledger.loading' }, 'loading the resume index');
      const loaded = await loadAckedIndex(o.ledgerPath, {
        shouldStop: () => o.stopRequested?.() != null,
      });
      acked = loaded.index;
      ledgerBadLines = loaded.stats.bad;
      if (loaded.interrupted) {
        // A signal while loading: nothing was read, nothing is sent.
        interrupted = o.stopRequested?.() ?? 'SIGTERM';
      } else {
        if (loaded.stats.bad > 0) {
          log.warn(
            { event: 'ledger.bad_lines', count: loaded.stats.bad, lines: loaded.stats.badLines },
            'ledger has unreadable lines (a torn write after a crash, or a line over 1 MiB); they are skipped',
          );
        }
        log.info(
          { event: 'ledger.loaded', acked: loaded.stats.acked, lines: loaded.stats.lines },
          'resume index loaded',
        );
      }
    }
    if (writesRejects && !interrupted) {
      rejects = await openRejectsWriter(o.rejectsPath, {
        maxLines: o.maxRejects,
        maxBytes: o.maxRejectBytes,
        sources: specs.map(sourceName),
      });
    }

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
          // A batch never sent (a stop, or the service gave up on) is not a batch that failed after retries.
          const notSent = out.attempts === 0;
          const stopped = notSent && (o.stopRequested?.() != null || /interrupt/.test(out.error ?? ''));
          // While the run stops (outage, credentials, redirect) the one error line says why; each batch is info.
          log[out.stopping ? 'info' : 'warn'](
            {
              event: stopped ? 'batch.interrupted' : notSent ? 'batch.not_sent' : 'batch.failed',
              batchId: out.batchId,
              records: ids.length,
              httpStatus: out.httpStatus,
              attempts: out.attempts,
              error: line.error,
            },
            stopped ? 'interrupted, not sent' : notSent ? 'batch not sent' : 'batch failed after retries',
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
    // Reject amplification: a run stops when the rejects file would grow past its caps, or when the first
    // records are nearly all rejected: the input is not what the profile expects.
    const sample = o.rejectSample ?? 1000;
    const percent = o.maxRejectPercent ?? 0;
    let tooManyRejects: string | null = null;
    const reject = (
      source: string,
      line: number,
      errors: Array<{ field: string; message: string }>,
      record: unknown,
    ) => {
      c.rejected++;
      if (rejects.write({ source, line, errors, record, runId }) === 'known') c.rejectedKnown++;
      if (rejects.full && !tooManyRejects) {
        tooManyRejects =
          rejects.full === 'lines'
            ? `more than ${o.maxRejects} rejects in this run (--max-rejects)`
            : `the rejects would add more than ${o.maxRejectBytes} bytes to the rejects file in this run (--max-reject-bytes)`;
      }
    };
    const rejectRatioExceeded = (): boolean => {
      if (percent > 0 && c.rejected * 100 >= percent * sample) {
        tooManyRejects = `${c.rejected} of the first ${sample} records were rejected (limit ${percent}%, --max-reject-percent)`;
      }
      return tooManyRejects !== null;
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

    let outage = false;
    try {
      outer: for (const spec of specs) {
        if (interrupted) break;
        if (sizes.get(spec) === 0) {
          noRecords(spec, spec.path === '-' ? 'empty input' : 'empty file');
          continue;
        }
        const readBefore = c.read;
        const bytesBefore = bytes.read;
        // read → map → validate, on worker threads for a large file (prepare/choose.ts).
        const chunks = prepareChunks(spec, profile, {
          onBytes: (n) => {
            bytes.read += n;
          },
          mapping: o.mapping,
          delimiter,
          stdin: o.stdin,
          onHeader: spec.path === '-' ? checkHeader : undefined,
          columns: headers.get(spec),
          dryRun: o.dryRun,
          concurrency: o.concurrency,
        });
        for await (const chunk of chunks) {
          for (let k = 0; k < chunk.length; k++) {
            // Checked before the next record is counted, so every record read is settled.
            if (tooManyRejects || (c.read === sample && rejectRatioExceeded())) break outer;
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
                    // The id itself is in `record` (masked there like every value), never in a message.
                    message: 'duplicate transactionId within this run; the first one is sent',
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
        if (c.read === readBefore) {
          const source = sourceName(spec);
          noRecords(
            spec,
            bytes.read === bytesBefore
              ? spec.path === '-'
                ? 'empty input'
                : 'empty file'
              : headerSeen.has(source)
                ? 'only a header, no records'
                : 'no records (blank lines only)',
          );
        }
      }
      if (tooManyRejects && !o.dryRun) {
        // Read and valid, never sent: failed in the ledger, so the accounting holds and a rerun sends them.
        const rest = batcher.flush();
        if (rest) await dispatcher.abandon(rest, 'not sent: stopped, too many rejects');
      } else {
        await submit(batcher.flush());
      }
      await dispatcher.drain();
    } catch (err) {
      if (err instanceof StopError) {
        // The run stops (outage, refused credentials, a redirect): records read but not sent are recorded as
        // failed ("not sent: …"), so read = sent + skipped + failed + rejected holds and a rerun sends them.
        const rest = batcher.flush();
        if (rest) await dispatcher.abandon(rest, err.notSent, true);
        await dispatcher.drain().catch((e: unknown) => {
          if (e !== err) throw e;
        });
        if (!(err instanceof OutageError)) throw err;
        outage = true;
        log.error({ event: 'run.outage' }, err.message);
      } else if (o.stopRequested?.() && err instanceof SvcIngestError && err.code.startsWith('INPUT_')) {
        // A signal closed standard input under the reader: that is the stop, not a read error.
        interrupted = o.stopRequested();
        const rest = batcher.flush();
        if (rest) await dispatcher.abandon(rest, 'not sent: interrupted');
        await dispatcher.drain();
      } else {
        // Stop sending at once; what is in flight settles and is recorded (if the ledger still can).
        dispatcher.stop();
        await dispatcher.drain().catch(() => {});
        throw err;
      }
    }
    interrupted ??= o.stopRequested?.() ?? null;

    const valid = c.read - c.rejected;
    return {
      read: c.read,
      valid,
      rejected: c.rejected,
      rejectedNew: c.rejected - c.rejectedKnown,
      rejectedKnown: c.rejectedKnown,
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
      ledger: o.dryRun ? null : ledgerAbs,
      rejects: writesRejects ? rejectsAbs : null,
      ledgerBadLines,
      emptyInputs,
      ...(tooManyRejects
        ? {
            error: {
              code: 'INPUT_TOO_MANY_REJECTS',
              message: `the input is not what the profile expects: ${tooManyRejects}; stopped reading. Check --mapping and --format (the rejects file says why records were refused), or raise the limit`,
            },
          }
        : {}),
    };
  } finally {
    seen.close?.();
    await rejects.close().catch((err: Error) => log.error({ event: 'rejects.close' }, err.message));
    await ledger?.close();
    await lock?.release();
  }
}
