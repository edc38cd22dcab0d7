// The recorder: each batch outcome a sink reports becomes one ledger record (store.record(), durable before the
// batch's slot frees), the counters move and the log says what happened; retries, splits and the breaker are
// counted and logged here too.

import type { LedgerStore } from '../ledger/store.ts';
import type { Logger } from '../log.ts';
import { maskCardNumbers } from '../mask/index.ts';
import type { CodeTally } from '../model/code-lists.ts';
import type { FailureClass } from '../send/classify.ts';
import type { BatchOutcome } from '../send/sink.ts';
import type { Counters } from './counters.ts';

export interface RecorderOptions {
  store: LedgerStore;
  runId: string;
  counters: Counters;
  logger: Logger;
  /** The signal name once the run must stop (a batch never sent then was interrupted). */
  stopRequested: () => string | null;
  /** Counts the code values of the records sent. */
  codes?: CodeTally;
}

/** The sink's observer: what DispatcherOptions takes as onOutcome, onRetry, onSplit and onBreaker. */
export interface Recorder {
  onOutcome(out: BatchOutcome): Promise<void>;
  onRetry(info: { batchId: string; attempt: number; failure: FailureClass; delayMs: number }): void;
  onSplit(info: { batchId: string; size: number; failure: FailureClass }): void;
  onBreaker(info: { state: 'open' | 'probe' | 'closed' | 'gave-up'; probeInMs?: number }): void;
}

export function createRecorder(o: RecorderOptions): Recorder {
  const { counters: c, logger: log } = o;
  return {
    async onOutcome(out) {
      const error = out.error !== undefined ? maskCardNumbers(out.error) : undefined;
      await o.store.record({
        batchId: out.batchId,
        runId: o.runId,
        status: out.status,
        requestId: out.requestId,
        clientRequestId: out.clientRequestId,
        attempts: out.attempts,
        httpStatus: out.httpStatus,
        ...(error !== undefined ? { error } : {}),
        items: out.items,
      });
      c.batches++;
      const records = out.items.length;
      if (out.status === 'acked') {
        c.sent += records;
        if (o.codes) for (const item of out.items) o.codes.add(item.codes);
        log.debug(
          { event: 'batch.acked', batchId: out.batchId, requestId: out.requestId, attempts: out.attempts },
          'batch acked',
        );
        return;
      }
      c.failed += records;
      c.failedBatches++;
      // A batch never sent (a stop, or the service gave up on) is not a batch that failed after retries.
      const notSent = out.attempts === 0;
      const stopped = notSent && (o.stopRequested() != null || /interrupt/.test(out.error ?? ''));
      // While the run stops (outage, credentials, redirect) the one error line says why; each batch is info.
      log[out.stopping ? 'info' : 'warn'](
        {
          event: stopped ? 'batch.interrupted' : notSent ? 'batch.not_sent' : 'batch.failed',
          batchId: out.batchId,
          records,
          httpStatus: out.httpStatus,
          attempts: out.attempts,
          error,
        },
        stopped ? 'interrupted, not sent' : notSent ? 'batch not sent' : 'batch failed after retries',
      );
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
        { event: 'batch.split', batchId: info.batchId, size: info.size, httpStatus: info.failure.httpStatus },
        'batch keeps failing; splitting it to isolate the bad record',
      );
    },
    onBreaker(info) {
      // Closing is good news: the service answers again.
      if (info.state === 'closed') {
        log.info({ event: 'breaker.closed' }, 'service answers again: breaker closed');
        return;
      }
      log.warn(
        { event: `breaker.${info.state}`, waitMs: info.probeInMs },
        `service looks down: breaker ${info.state}`,
      );
    },
  };
}
