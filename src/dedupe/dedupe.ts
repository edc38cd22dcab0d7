// The dedupe stage: a valid record whose transactionId was already seen in this run is a duplicate (the caller
// rejects it); the others are admitted by the ledger store in groups (resume: an id acknowledged earlier, or
// claimed by another live worker, is skipped). A group closes when it would fill the batch under way, so batches
// form exactly as if each record were checked alone, and whatever a stop leaves behind fits one batch.
import type { BatchItem } from '../batch/batcher.ts';
import type { LedgerStore, SkipReason } from '../ledger/store.ts';
import type { FingerprintSet } from '../sorted-runs/fingerprint-set.ts';

export interface DedupeOptions {
  store: Pick<LedgerStore, 'admit'>;
  /** Ids seen in this run (a spilling fingerprint set: flat memory). */
  seen: FingerprintSet;
  /** Records the batch under way can still take (batch size less what the batcher holds). */
  room: () => number;
  /** Told of the records the store skipped. */
  onSkipped?: (n: number, reason: SkipReason) => void;
}

export interface Dedupe<T extends BatchItem> {
  /** False for a within-run duplicate (not queued); else the record is queued for admission. */
  offer(item: T): boolean;
  /** The queue fills the batch under way: admit it now. */
  readonly full: boolean;
  /** Admits the queued records; resolves with those to send, in input order (the very items offered). */
  admit(): Promise<T[]>;
  /**
   * Records handed to the store less those it skipped so far: where the batch under way will stand once every
   * group under admission is batched (if none of them is skipped). A caller admitting ahead sizes groups by it.
   */
  readonly expected: number;
}

export function createDedupe<T extends BatchItem>(o: DedupeOptions): Dedupe<T> {
  let queue: T[] = [];
  let handed = 0;
  let skipped = 0;
  return {
    offer(item) {
      if (!o.seen.add(item.id)) return false;
      queue.push(item);
      return true;
    },
    get full() {
      return queue.length >= o.room();
    },
    async admit() {
      if (queue.length === 0) return [];
      const group = queue;
      queue = [];
      handed += group.length;
      const a = await o.store.admit(group);
      skipped += a.skipped.length;
      if (a.skipped.length > 0 && o.onSkipped) {
        let acked = 0;
        for (const s of a.skipped) if (s.reason === 'acked') acked++;
        if (acked > 0) o.onSkipped(acked, 'acked');
        if (a.skipped.length > acked) o.onSkipped(a.skipped.length - acked, 'elsewhere');
      }
      return a.send as T[];
    },
    get expected() {
      return handed - skipped;
    },
  };
}
