// Batching: valid records, in input order, into batches of at most `size` (the service takes 50). A batch never
// spans two inputs, so its ledger line's source and line range name one file (`ledger find` points at the right one).
import type { WireRecord } from '../client/body.ts';

/** One valid record, serialised, with where it came from. */
export interface BatchItem extends WireRecord {
  /** Its transactionId. */
  id: string;
  /**
   * JSON.stringify of its TransactionNotification (serialised where it was prepared, maybe another thread); '' once
   * its batch's body is encoded, which then holds its bytes (WireRecord, jsonOf).
   */
  json: string;
  source: string;
  line: number;
  /** Its code values (codeKey), counted per field once it is sent. */
  codes?: string;
}

/**
 * A batch: one request's worth of records.
 * @example { id: 'r1a2b3c4-17', items: [{ id: 't-1', json: '{"transactionId":"t-1",…}', source: 'a.csv', line: 2 }, …] }
 */
export interface Batch {
  id: string;
  items: BatchItem[];
}

export interface Batcher {
  /** Add a record; returns a batch when one is complete: full, or cut because this record starts another input. */
  push(item: BatchItem): Batch | null;
  /** The partial batch left at the end, if any. */
  flush(): Batch | null;
  /** Records held in the partial batch. */
  readonly pending: number;
}

export function createBatcher(size: number, runId: string): Batcher {
  if (!Number.isInteger(size) || size < 1 || size > 50) {
    throw new TypeError(`Expected batch size to be an integer 1..50, got ${size}`);
  }
  let seq = 0;
  let items: BatchItem[] = [];
  const take = (): Batch => {
    const batch = { id: `${runId}-${++seq}`, items };
    items = [];
    return batch;
  };
  return {
    push(item) {
      // A record of another input closes the partial batch (size > 1: a full one was already taken).
      const cut = items.length > 0 && (items[0] as BatchItem).source !== item.source ? take() : null;
      items.push(item);
      return cut ?? (items.length >= size ? take() : null);
    },
    flush() {
      return items.length > 0 ? take() : null;
    },
    get pending() {
      return items.length;
    },
  };
}
