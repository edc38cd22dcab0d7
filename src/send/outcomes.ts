// The outcome a sink reports for a part that was acknowledged, failed for good, or was never sent.
import type { Batch, BatchItem } from '../batch/batcher.ts';
import type { AttemptResult, FailedPart } from './bisect.ts';
import type { BatchOutcome } from './sink.ts';

export function ackedOutcome(batchId: string, items: BatchItem[], r: AttemptResult): BatchOutcome {
  return {
    batchId,
    items,
    status: 'acked',
    requestId: r.requestId,
    clientRequestId: r.clientRequestId,
    attempts: r.attempts,
    httpStatus: r.httpStatus,
  };
}

/** A part that failed after its attempts; `stopping` while the run stops for a StopError. */
export function failedOutcome(part: FailedPart, stopping: boolean): BatchOutcome {
  return {
    batchId: part.batchId,
    items: part.items,
    status: 'failed',
    requestId: part.r.requestId,
    clientRequestId: part.r.clientRequestId,
    attempts: part.r.attempts,
    httpStatus: part.r.httpStatus,
    error: part.r.failure?.message ?? 'failed',
    ...(stopping ? { stopping } : {}),
  };
}

/** A batch that will not be sent (a stop, an outage): failed with `reason`, attempts 0, so a rerun sends it. */
export function notSentOutcome(batch: Batch, reason: string, stopping: boolean): BatchOutcome {
  return {
    batchId: batch.id,
    items: batch.items,
    status: 'failed',
    requestId: null,
    clientRequestId: '',
    attempts: 0,
    httpStatus: null,
    error: reason,
    ...(stopping ? { stopping } : {}),
  };
}
