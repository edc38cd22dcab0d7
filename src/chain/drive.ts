// Drives prepared records through the chain: each record is counted as read, then rejected (rejecter), found a
// duplicate within the run (rejected) or admitted by the ledger store (dedupe: skipped or passed), batched and
// handed to the sink. How a run ends is decided here too: the end of the input, a signal, a reject cap, a stop
// the sink raises (credentials, redirect, outage) or an error; whatever was read and not sent is recorded as
// failed ("not sent: …"), so read = sent + skipped + failed + rejected holds in every case.
import type { Batch, Batcher, BatchItem } from '../batch/batcher.ts';
import type { Dedupe } from '../dedupe/dedupe.ts';
import { SvcIngestError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { maskDeep } from '../mask/index.ts';
import type { PreparedChunks, PreparedItem } from '../prepare/choose.ts';
import { isBrokenInput } from '../read/broken.ts';
import type { Counters } from '../record/counters.ts';
import type { Rejecter } from '../record/rejecter.ts';
import type { Sink } from '../send/sink.ts';
import { OutageError, StopError } from '../send/stop.ts';

/** A valid record on its way to a batch. */
export type PreparedTx = Extract<PreparedItem, { kind: 'tx' }>;

export interface ChainStages {
  counters: Counters;
  rejecter: Rejecter;
  dedupe: Dedupe<BatchItem>;
  batcher: Batcher;
  sink: Sink;
  logger: Logger;
  /** Told of each record about to be batched (the relaxed-field notice). */
  onPass?: (item: PreparedTx) => void;
  /** Polled between chunks: a signal name once the run must stop. */
  stopRequested: () => string | null;
  /**
   * An input that breaks part-way (read/broken.ts: cut gzip, ended mid-record) ends the run accounted for: what
   * was read and not sent is recorded failed and the chain returns the error in `inputError` (send); without it
   * the error is thrown (a backfill partition fails as a whole).
   */
  accountBrokenInput?: boolean;
}

/** How the chain ended. */
export interface ChainEnd {
  interrupted: string | null;
  outage: boolean;
  /** The broken input that ended the run (accountBrokenInput), as the summary's `error`. */
  inputError?: { code: string; message: string };
}

/** Groups of records (about a batch each) admitted by the ledger store ahead of the batch being handed to the sink. */
const LOOKAHEAD = 2;

/** What a within-run duplicate is rejected with (the id itself is in `record`, masked, never in a message). */
const DUPLICATE = {
  field: 'transactionId',
  message: 'duplicate transactionId within this run; the first one is sent',
};

/**
 * Run the chunks through the chain until the input ends or the run must stop; the sink is drained before it
 * resolves. Rejects with the error that ends the run (a ledger write, a refused credential, an input error).
 * @example const end = await driveChain(source.chunks, stages) // { interrupted: null, outage: false }
 */
export async function driveChain(chunks: PreparedChunks, s: ChainStages): Promise<ChainEnd> {
  const { counters: c, rejecter, dedupe, batcher, sink } = s;
  const submit = (batch: Batch) => sink.submit(batch);
  /**
   * Groups under admission by the ledger store, oldest first: the reader goes on while the store answers (a
   * database's round trip overlaps the wait for a free slot), and their records are batched in input order.
   */
  const ahead: Array<Promise<BatchItem[]>> = [];
  const admitNow = (): void => {
    const p = dedupe.admit();
    p.catch(() => {}); // awaited below, in order; a rejection ends the run there
    ahead.push(p);
  };
  /**
   * The admitted records of the oldest group into batches; a full batch goes to `onFull`. A group may hold several
   * batches (the store's `admitBatches`): when `onFull` throws (the run stops), the group's records not yet batched
   * go back to the front of `ahead`, so the stop's `rest` records them as not sent instead of losing them.
   */
  const batchOldest = async (onFull: (batch: Batch) => Promise<void>): Promise<void> => {
    const items = await (ahead.shift() as Promise<BatchItem[]>);
    for (let i = 0; i < items.length; i++) {
      const item = items[i] as BatchItem;
      if ((item as PreparedTx).relaxed !== undefined) s.onPass?.(item as PreparedTx);
      // The prepared item itself goes into the batch (it is a BatchItem): no copy per record.
      const batch = batcher.push(item);
      if (batch === null) continue;
      try {
        await onFull(batch);
      } catch (err) {
        if (i + 1 < items.length) ahead.unshift(Promise.resolve(items.slice(i + 1)));
        throw err;
      }
    }
  };
  /** The queued records go to the ledger store; once more than LOOKAHEAD groups are in admission, the oldest is batched. */
  const pass = async (): Promise<void> => {
    admitNow();
    while (ahead.length > LOOKAHEAD) await batchOldest(submit);
  };
  /** What was read and not yet sent: every group admitted and batched (full batches to `onFull`), and the partial batch. */
  const rest = async (onFull: (batch: Batch) => Promise<void> = submit): Promise<Batch | null> => {
    admitNow();
    while (ahead.length > 0) await batchOldest(onFull);
    return batcher.flush();
  };
  let interrupted: string | null = null;
  let outage = false;
  let inputError: ChainEnd['inputError'];
  try {
    outer: for await (const chunk of chunks) {
      for (let k = 0; k < chunk.length; k++) {
        // Checked before the next record is counted, so every record read is settled.
        if (rejecter.stopBefore(c.read)) break outer;
        const item = chunk[k] as PreparedItem;
        // A notification `expand` added beyond its record's first is not a record read: counted apart.
        if (item.expanded === true) c.expanded++;
        else c.read++;
        if (item.kind === 'reject')
          rejecter.reject(item.source, item.line, item.errors, item.record, item.expanded === true);
        // The source record stayed with the thread that parsed it; the mapped one stands in.
        else if (!dedupe.offer(item))
          rejecter.reject(
            item.source,
            item.line,
            [DUPLICATE],
            maskDeep(JSON.parse(item.json)),
            item.expanded === true,
          );
        else if (dedupe.full) await pass();
      }
      interrupted = s.stopRequested();
      if (interrupted) break;
    }
    const last = await rest();
    // Read and valid, never sent: failed in the ledger, so the accounting holds and a rerun sends them.
    if (last && rejecter.tooMany) await sink.abandon(last, 'not sent: stopped, too many rejects');
    else if (last) await sink.submit(last);
    await sink.drain();
  } catch (err) {
    if (err instanceof StopError) {
      // The run stops (outage, refused credentials, a redirect): records read but not sent are recorded as
      // failed ("not sent: …"), so read = sent + skipped + failed + rejected holds and a rerun sends them.
      const notSent = (b: Batch) => sink.abandon(b, err.notSent, true);
      const last = await rest(notSent);
      if (last) await notSent(last);
      await sink.drain().catch((e: unknown) => {
        if (e !== err) throw e;
      });
      if (!(err instanceof OutageError)) throw err;
      outage = true;
      s.logger.error({ event: 'run.outage' }, err.message);
    } else if (s.stopRequested() && err instanceof SvcIngestError && err.code.startsWith('INPUT_')) {
      // A signal closed standard input under the reader: that is the stop, not a read error.
      interrupted = s.stopRequested();
      const notSent = (b: Batch) => sink.abandon(b, 'not sent: interrupted');
      const last = await rest(notSent);
      if (last) await notSent(last);
      await sink.drain();
    } else if (s.accountBrokenInput && isBrokenInput(err)) {
      // The input broke part-way: what is in flight settles; what was read and not sent is failed ("not sent:
      // …"), so `ledger failed` lists it and a rerun of a whole input sends it.
      inputError = { code: err.code, message: err.message };
      const notSent = (b: Batch) =>
        sink.abandon(b, `not sent: the input broke: ${String(err.context.brief)}`);
      const last = await rest(notSent);
      if (last) await notSent(last);
      await sink.drain();
      s.logger.error({ event: 'input.broken', code: err.code, ...err.context }, err.message);
    } else {
      // Stop sending at once; what is in flight settles and is recorded (if the ledger still can).
      sink.stop();
      await sink.drain().catch(() => {});
      throw err;
    }
  }
  return { interrupted: interrupted ?? s.stopRequested(), outage, ...(inputError ? { inputError } : {}) };
}
