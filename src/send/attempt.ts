// One batch's delivery attempts: p-retry around the client's post (the one retry loop of the tool), with the
// retry policy deciding each retry and its wait, and the breaker told of every failed attempt.
import { randomUUID } from 'node:crypto';
import pRetry from 'p-retry';
import type { BatchItem } from '../batch/batcher.ts';
import { type EncodedBatch, encodeRecords, releaseBody } from '../client/body.ts';
import type { SvcClient } from '../client/index.ts';
import { sleep } from '../sleep.ts';
import type { AttemptResult } from './bisect.ts';
import type { Breaker } from './breaker.ts';
import { classifyFailure, type FailureClass } from './classify.ts';
import { backoff, decideRetry, type RetryTiming } from './retry-policy.ts';

/** Sends one batch: each transaction already serialised as JSON (the client's postTransactionsJson). */
export type PostTransactions = SvcClient['postTransactionsJson'];

export interface AttemptOptions {
  post: PostTransactions;
  /** The backoff of a batch's retries. */
  timing: RetryTiming;
  breaker: Breaker;
  /** Aborted when the run stops: no more retries, the wait in progress ends. */
  stop: AbortSignal;
  onRetry?(info: { batchId: string; attempt: number; failure: FailureClass; delayMs: number }): void;
}

/** Sends items with up to `retries` retries; never rejects (a failure is in the result). */
export type Attempt = (batchId: string, items: BatchItem[], retries: number) => Promise<AttemptResult>;

export function createAttempt(o: AttemptOptions): Attempt {
  return async function attempt(
    batchId: string,
    items: BatchItem[],
    retries: number,
  ): Promise<AttemptResult> {
    // Encoded once for all of its attempts; the records then hold where their bytes are, not their JSON. The body's
    // hold on its slab is given back when this returns: each request still writing it holds it too (dispatch-fetch).
    const body = encodeRecords(items);
    try {
      return await attemptWith(body, batchId, retries);
    } finally {
      releaseBody(body.bytes);
    }
  };

  async function attemptWith(body: EncodedBatch, batchId: string, retries: number): Promise<AttemptResult> {
    let attempts = 0;
    let clientRequestId = '';
    let lastFailure: FailureClass | undefined;
    let answer: { requestId: string; httpStatus: number } | undefined;
    let startedAt = 0;
    let willRetry = false;
    let lastError: unknown;
    // The batch's retries end where the outage limit does (p-retry shortens the last wait to meet it). If another
    // batch is acked meanwhile the limit moves on, but this batch keeps the end it started with.
    const left = o.breaker.retryBudget();
    const retryUntil = performance.now() + left;
    try {
      // Not send/retried.ts: a batch's own loop, with Retry-After, the outage limit and the breaker (retry-policy.ts).
      const res = await pRetry(
        async (n) => {
          attempts = n;
          clientRequestId = randomUUID();
          startedAt = performance.now();
          try {
            answer = await o.post(body, { requestId: clientRequestId });
          } catch (err) {
            lastError = err;
            throw err;
          }
          return answer;
        },
        {
          retries,
          ...backoff(o.timing),
          maxRetryTime: Math.max(0, left),
          signal: o.stop,
          // Decided once, in onFailedAttempt (which p-retry calls first), so onRetry counts only real retries.
          shouldRetry: () => willRetry,
          onFailedAttempt: async ({ error, retriesLeft, retryDelay, attemptNumber }) => {
            lastFailure = classifyFailure(error);
            o.breaker.onFail(lastFailure, startedAt);
            const next = decideRetry(lastFailure, {
              retriesLeft,
              backoffMs: retryDelay,
              stopped: o.stop.aborted,
              // The service has been failing for the whole outage limit: no more retries (deliverTop gives up).
              outOfTime: o.breaker.spent(0) || performance.now() >= retryUntil,
              untilLimitMs: o.breaker.untilLimit(),
            });
            willRetry = next.retry;
            if (!next.retry) return;
            o.onRetry?.({ batchId, attempt: attemptNumber, failure: lastFailure, delayMs: next.delayMs });
            // Retry-After is honoured by waiting the difference on top of p-retry's own delay.
            if (next.extraMs > 0) await sleep(next.extraMs, o.stop);
          },
        },
      );
      return { ok: true, requestId: res.requestId, clientRequestId, httpStatus: res.httpStatus, attempts };
    } catch (err) {
      // A stop aborts p-retry, which then rejects even if the attempt in flight was acknowledged: trust the answer.
      if (answer)
        return {
          ok: true,
          requestId: answer.requestId,
          clientRequestId,
          httpStatus: answer.httpStatus,
          attempts,
        };
      // Stopped (a signal, or another batch stopped the run): the last attempt's own error, if it had one.
      const failure =
        o.stop.aborted && err === o.stop.reason
          ? lastError !== undefined
            ? classifyFailure(lastError)
            : lastFailure
          : classifyFailure(err);
      return {
        ok: false,
        requestId: failure?.requestId ?? null,
        clientRequestId,
        httpStatus: failure?.httpStatus ?? null,
        attempts,
        failure: failure ?? { retry: false, httpStatus: null, message: 'interrupted', aborted: true },
      };
    }
  }
}
