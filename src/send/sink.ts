// Where batches go: the Sink interface the chain hands batches to, and the outcome a sink reports for each
// (the recorder turns it into the ledger's RecordedOutcome). The service sink is dispatcher.ts; a dry run's is dry-run.ts.
import type { Batch, BatchItem } from '../batch/batcher.ts';
import type { RecordedOutcome } from '../ledger/store.ts';

/**
 * The final outcome of one batch (or of one part of a split batch): exactly one ledger line.
 * @example { batchId: 'r1-7', items, status: 'acked', requestId: '…', clientRequestId: '…', attempts: 2, httpStatus: 200 }
 */
export interface BatchOutcome extends Omit<RecordedOutcome, 'runId' | 'items' | 'error'> {
  items: BatchItem[];
  /** Why it failed, as the sink saw it (the recorder masks it before the ledger). */
  error?: string;
  /** Recorded while the run stops for a StopError (which says why, once): not a failure of its own to report. */
  stopping?: boolean;
}

export interface Sink {
  /** Hand over a batch; resolves once it is taken (back-pressure), rejects if the run must stop. */
  submit(batch: Batch): Promise<void>;
  /** Wait for every batch handed over to settle. Rejects with the fatal error, if any. */
  drain(): Promise<void>;
  /** Stop scheduling retries and probes (a signal arrived); requests in flight finish or fail. */
  stop(): void;
  /** A batch that will not be sent (the run stops): recorded as failed, so a rerun sends it. */
  abandon(batch: Batch, reason: string, stopping?: boolean): Promise<void>;
  /** Batches handed over and not yet settled. */
  readonly inFlight: number;
}
