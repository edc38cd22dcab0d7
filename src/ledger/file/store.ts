// The LedgerStore on one NDJSON file (the default): state-file checks, the kernel lock, the group-committed
// writer and the resume index, behind the interface the send chain talks to (../store.ts). The file's format,
// lock and guarantees are the README's "Ledger and rejects".
import { resolve } from 'node:path';
import type { BatchItem } from '../../batch/batcher.ts';
import { decideDestination } from '../destination.ts';
import type { Admission, LedgerStore, OpenLedgerOptions, RecordedOutcome } from '../store.ts';
import { type AckedIndex, loadAckedIndex } from './acked-index.ts';
import { scanDestinations } from './destinations.ts';
import { checkStateFile } from './files.ts';
import type { LedgerLine } from './line.ts';
import { acquireLedgerLock, type LedgerLock, takeLockFallback } from './lock.ts';
import { type LedgerWriter, type LedgerWriterOptions, openLedgerWriter } from './writer.ts';

export interface FileLedgerStoreOptions extends OpenLedgerOptions, LedgerWriterOptions {}

/**
 * Open the ledger file. Write mode checks the ledger and its owner file (no links, regular files), takes the
 * kernel lock and opens the writer (a torn last line is closed off); read mode (a dry run) only checks the path.
 * The resume index is loaded by the first admit() (admit([]) loads it before any record is read); a signal
 * (`o.signal`) while it loads makes that admit reject with the signal's reason.
 * @throws SvcIngestError LEDGER_PATH_INVALID, LEDGER_LOCKED, LEDGER_WRITE
 * @example const store = await openFileLedgerStore('ledger/transactions.ndjson', { mode: 'write', resume: true, runId, logger })
 */
export async function openFileLedgerStore(path: string, o: FileLedgerStoreOptions): Promise<LedgerStore> {
  const log = o.logger;
  // Ledger and owner file must each be a regular file or not exist yet: a link, a directory, a FIFO or a device
  // (/dev/full) is refused here, before anything is created or locked.
  await checkStateFile(path, 'ledger');
  const { lock, writer } = o.mode === 'write' ? await lockAndOpen(path, o) : { lock: null, writer: null };

  let badLines = 0;
  let loading: Promise<AckedIndex | null> | undefined;
  const shouldStop = () => o.signal?.aborted === true;
  const load = async (): Promise<AckedIndex | null> => {
    if (!o.resume) {
      // No resume index, but the destination is still checked (and an adoption recorded) before anything is sent.
      if (o.destination !== undefined) await checkDestination(await scanDestinations(path, shouldStop));
      return null;
    }
    log.info({ event: 'ledger.loading' }, 'loading the resume index');
    const loaded = await loadAckedIndex(path, { shouldStop, destination: o.destination });
    // A signal while loading: nothing was read, nothing is sent.
    if (loaded.interrupted) throw o.signal?.reason ?? new Error('interrupted');
    if (o.destination !== undefined) loaded.index.countLegacy?.(await checkDestination(loaded.census));
    badLines = loaded.stats.bad;
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
    return loaded.index;
  };

  /** Refuses a destination the ledger has not seen (unless asked for); records an adoption or an addition. */
  const checkDestination = async (census: Parameters<typeof decideDestination>[0] | 'stopped') => {
    if (census === 'stopped') throw o.signal?.reason ?? new Error('interrupted');
    const ours = o.destination as string;
    const d = decideDestination(census, ours, o.newDestination === true, resolve(path));
    if (d.action === 'ok') return d.legacyOurs;
    const event = d.action === 'adopt' ? 'destination.adopted' : 'destination.added';
    if (d.action === 'adopt')
      log.warn(
        {
          event: 'ledger.destination.adopted',
          destination: ours,
          legacyLines: census.legacy,
          recorded: !!writer,
        },
        `${census.legacy} ledger line(s) written before destinations were recorded are taken as this run's destination's (${ours}); recorded in the ledger, said once`,
      );
    else
      log.warn(
        { event: 'ledger.destination.added', destination: ours, known: census.known },
        `sending to a destination new to this ledger (${ours}); its acknowledgements count for it alone`,
      );
    await writer?.append({
      ts: new Date().toISOString(),
      event,
      destination: ours,
      runId: o.runId,
      ...(d.action === 'adopt' ? { legacyLines: census.legacy } : {}),
    });
    return d.legacyOurs;
  };

  let closed = false;
  return {
    location: resolve(path),
    get badLines() {
      return badLines;
    },
    async admit(items: readonly BatchItem[]): Promise<Admission> {
      loading ??= load();
      const acked = await loading;
      const out: Admission = { send: [], skipped: [] };
      for (const item of items) {
        if (acked?.has(item.id)) out.skipped.push({ item, reason: 'acked' });
        else out.send.push(item);
      }
      return out;
    },
    record(outcome: RecordedOutcome): Promise<void> {
      if (!writer) return Promise.reject(new Error('the ledger is open for reading only (a dry run)'));
      return writer.append(ledgerLineOf(outcome, o.destination));
    },
    async close() {
      if (closed) return;
      closed = true;
      await loading?.catch(() => {});
      await writer?.close();
      if (writer)
        // Syncs against lines: how well the group commit (writer.ts) shared its fdatasyncs in this run.
        log.info(
          { event: 'ledger.file.closed', ledger: writer.path, groups: { ...writer.groups } },
          'ledger file closed',
        );
      await lock?.release();
    },
  };
}

/** Write mode: the lock owner file checked, the kernel lock taken (its fallback and a takeover said), the writer opened. */
async function lockAndOpen(
  path: string,
  o: FileLedgerStoreOptions,
): Promise<{ lock: LedgerLock; writer: LedgerWriter }> {
  const log = o.logger;
  await checkStateFile(`${path}.lock`, 'lock owner file');
  const lock = await acquireLedgerLock(path);
  const fallback = takeLockFallback();
  if (fallback)
    log.warn(
      { event: 'ledger.lock.fallback', folder: fallback.folder, reason: fallback.reason },
      `the kernel lock's addon could not be loaded from ${fallback.folder} (${fallback.reason}): the ledger is held with the socket lock, which excludes runs in this network namespace only; point TMPDIR at a folder that allows executables (not mounted noexec) for the kernel lock`,
    );
  if (lock.tookOver)
    log.warn(
      { event: 'ledger.lock.takeover', pid: lock.tookOver.pid },
      'an earlier run died holding this ledger; the kernel released its lock',
    );
  let writer: LedgerWriter;
  try {
    writer = await openLedgerWriter(lock.file, { wrapHandle: o.wrapHandle, inFlight: o.inFlight });
  } catch (err) {
    await lock.release();
    throw err;
  }
  if (writer.repairedTornLine)
    log.warn({ event: 'ledger.torn' }, 'the ledger ended in a torn line (earlier crash); it is skipped');
  return { lock, writer };
}

/** The ledger line of one outcome, key for key as the README's "Ledger and rejects" shows it. */
function ledgerLineOf(out: RecordedOutcome, destination: string | undefined): LedgerLine {
  const first = out.items[0] as BatchItem;
  const last = out.items[out.items.length - 1] as BatchItem;
  return {
    ts: new Date().toISOString(),
    batchId: out.batchId,
    status: out.status,
    requestId: out.requestId,
    transactionIds: out.items.map((i) => i.id),
    attempts: out.attempts,
    httpStatus: out.httpStatus,
    ...(out.error !== undefined ? { error: out.error } : {}),
    clientRequestId: out.clientRequestId,
    source: first.source,
    lines: [first.line, last.line],
    runId: out.runId,
    ...(destination !== undefined ? { destination } : {}),
  };
}
