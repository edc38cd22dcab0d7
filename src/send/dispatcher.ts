// The service sink: sends batches with bounded concurrency (p-limit) and retry (p-retry, the only retry loop in the
// tool), composing the pure retry policy (retry-policy.ts), poison isolation (bisect.ts) and the outage breaker
// (breaker.ts). It stops the run at once on a failure no batch can fix (stop.ts) and records each outcome (through
// onOutcome, the recorder) before freeing the batch's slot.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pLimit from 'p-limit';
import pRetry from 'p-retry';
import type { Batch, BatchItem } from '../batch/batcher.ts';
import type { SvcClient } from '../client/index.ts';
import { type AttemptResult, createBisector, type Delivery } from './bisect.ts';
import { createBreaker } from './breaker.ts';
import { classifyFailure, type FailureClass } from './classify.ts';
import { backoff, decideRetry } from './retry-policy.ts';
import type { BatchOutcome, Sink } from './sink.ts';
import { OutageError, StopError, stopFor } from './stop.ts';

/** Sends one batch: each transaction already serialised as JSON (the client's postTransactionsJson). */
export type PostTransactions = SvcClient['postTransactionsJson'];

export interface DispatcherOptions {
  post: PostTransactions;
  concurrency: number;
  maxRetries: number;
  retryBaseMs: number;
  retryMaxMs: number;
  /** Retries for each part of a split batch (default 1). */
  splitRetries?: number;
  /** Consecutive failed batches that open the breaker (default max(3, concurrency)). */
  breakerThreshold?: number;
  /**
   * Longest time the service may keep failing (counted from the first failed attempt after the last ack) before
   * the dispatcher gives up with an OutageError (default 120000 ms). A batch's retries end at the limit (p-retry's
   * maxRetryTime shortens the last wait); a probe that would wait past it is not made; the attempt under way then
   * can add up to its timeout.
   */
  outageMaxMs?: number;
  /** Called once per outcome, inside the batch's slot; must persist it (the ledger). A throw is fatal. */
  onOutcome(outcome: BatchOutcome): Promise<void>;
  /** Called for every retry scheduled (for counters / logs). */
  onRetry?(info: { batchId: string; attempt: number; failure: FailureClass; delayMs: number }): void;
  onSplit?(info: { batchId: string; size: number; failure: FailureClass }): void;
  onBreaker?(info: { state: 'open' | 'probe' | 'closed' | 'gave-up'; waitMs?: number }): void;
}

/** The service sink: a Sink that sends. */
export type Dispatcher = Sink;

export function createDispatcher(o: DispatcherOptions): Dispatcher {
  const concurrency = o.concurrency;
  const limit = pLimit(concurrency);
  const outageMaxMs = o.outageMaxMs ?? 120_000;
  const breaker = createBreaker({
    threshold: o.breakerThreshold ?? Math.max(3, concurrency),
    outageMaxMs,
    baseWaitMs: o.retryBaseMs,
    maxWaitMs: o.retryMaxMs,
  });
  const stopCtl = new AbortController();
  const running = new Set<Promise<void>>();
  const slotWaiters: Array<() => void> = [];
  let fatal: Error | null = null;

  /** Makes the run stop. A StopError aborts retries and probes; any other fatal error (the ledger) wins over it. */
  function raise(err: Error): void {
    if (fatal === null || (fatal instanceof StopError && !(err instanceof StopError))) fatal = err;
    if (err instanceof StopError) stopCtl.abort(err);
  }

  function giveUp(): void {
    o.onBreaker?.({ state: 'gave-up' });
    const { ms, last } = breaker.failing();
    raise(new OutageError(ms, last));
  }

  async function attempt(batchId: string, items: BatchItem[], retries: number): Promise<AttemptResult> {
    const txs = items.map((i) => i.json);
    let attempts = 0;
    let clientRequestId = '';
    let lastFailure: FailureClass | undefined;
    let answer: { requestId: string; httpStatus: number } | undefined;
    let startedAt = 0;
    let willRetry = false;
    let lastError: unknown;
    // The batch's retries end where the outage limit does (p-retry shortens the last wait to meet it). If another
    // batch is acked meanwhile the limit moves on, but this batch keeps the end it started with.
    const left = breaker.retryBudget();
    const retryUntil = performance.now() + left;
    try {
      const res = await pRetry(
        async (n) => {
          attempts = n;
          clientRequestId = randomUUID();
          startedAt = performance.now();
          try {
            answer = await o.post(txs, { requestId: clientRequestId });
          } catch (err) {
            lastError = err;
            throw err;
          }
          return answer;
        },
        {
          retries,
          ...backoff(o),
          maxRetryTime: Math.max(0, left),
          signal: stopCtl.signal,
          // Decided once, in onFailedAttempt (which p-retry calls first), so onRetry counts only real retries.
          shouldRetry: () => willRetry,
          onFailedAttempt: async ({ error, retriesLeft, retryDelay, attemptNumber }) => {
            lastFailure = classifyFailure(error);
            breaker.onFail(lastFailure, startedAt);
            const next = decideRetry(lastFailure, {
              retriesLeft,
              backoffMs: retryDelay,
              stopped: stopCtl.signal.aborted,
              // The service has been failing for the whole outage limit: no more retries (deliverTop gives up).
              outOfTime: breaker.spent(0) || performance.now() >= retryUntil,
              untilLimitMs: breaker.untilLimit(),
            });
            willRetry = next.retry;
            if (!next.retry) return;
            o.onRetry?.({ batchId, attempt: attemptNumber, failure: lastFailure, delayMs: next.delayMs });
            // Retry-After is honoured by waiting the difference on top of p-retry's own delay.
            if (next.extraMs > 0)
              await sleep(next.extraMs, undefined, { signal: stopCtl.signal }).catch(() => {});
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
        stopCtl.signal.aborted && err === stopCtl.signal.reason
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

  const bisector = createBisector({
    attempt,
    acked(batchId, items, r) {
      breaker.onAck();
      return o.onOutcome({
        batchId,
        items,
        status: 'acked',
        requestId: r.requestId,
        clientRequestId: r.clientRequestId,
        attempts: r.attempts,
        httpStatus: r.httpStatus,
      });
    },
    fatal: (f) => raise(stopFor(f)),
    stopped: () => stopCtl.signal.aborted,
    lastAckAt: () => breaker.lastAckAt,
    splitRetries: o.splitRetries ?? 1,
    onSplit: o.onSplit,
  });

  async function deliverTop(batch: Batch, retries: number): Promise<void> {
    const d: Delivery = { startedAt: performance.now(), acked: 0, failed: [] };
    await bisector.deliver(batch.id, batch.items, retries, d);
    const whole = d.failed[0];
    // Only while no batch has failed whole (the breaker counts those), so an outage is not hammered.
    if (
      whole !== undefined &&
      whole.items === batch.items &&
      whole.splittable &&
      breaker.quiet &&
      !stopCtl.signal.aborted &&
      !breaker.spent(0)
    ) {
      await bisector.explore(whole, d);
    }
    // The service has been failing for outageMaxMs (this batch's retries ran up to the limit): give up.
    if (d.acked === 0 && d.failed.length > 0 && !(fatal instanceof StopError) && breaker.spent(0)) giveUp();
    const stopping = fatal instanceof StopError;
    for (const part of d.failed) {
      await o.onOutcome({
        batchId: part.batchId,
        items: part.items,
        status: 'failed',
        requestId: part.r.requestId,
        clientRequestId: part.r.clientRequestId,
        attempts: part.r.attempts,
        httpStatus: part.r.httpStatus,
        error: part.r.failure?.message ?? 'failed',
        ...(stopping ? { stopping } : {}),
      });
    }
    const change = breaker.settle(d.acked > 0, stopping);
    if (change === 'closed') o.onBreaker?.({ state: 'closed' });
    else if (change === 'opened') o.onBreaker?.({ state: 'open' });
  }

  function track(p: Promise<void>): void {
    const tracked = p
      .catch((err: unknown) => {
        raise(err instanceof Error ? err : new Error(String(err)));
      })
      .finally(() => {
        running.delete(tracked);
        slotWaiters.shift()?.();
      });
    running.add(tracked);
  }

  async function waitForSlot(): Promise<void> {
    while (limit.activeCount + limit.pendingCount >= concurrency) {
      await new Promise<void>((r) => slotWaiters.push(r));
    }
  }

  /** Record a batch that will not be sent (stop, outage) as failed, so a rerun sends it. */
  function abandon(batch: Batch, reason: string, stopping = false): Promise<void> {
    return o.onOutcome({
      batchId: batch.id,
      items: batch.items,
      status: 'failed',
      requestId: null,
      clientRequestId: '',
      attempts: 0,
      httpStatus: null,
      error: reason,
      ...(stopping ? { stopping } : {}),
    });
  }

  /** The run is stopping: a batch handed over now is recorded as not sent (when the ledger still works), then the error. */
  async function refuse(batch: Batch): Promise<never> {
    const err = fatal as Error;
    if (err instanceof StopError) await abandon(batch, err.notSent, true);
    throw err;
  }

  /** While the breaker is open, send batches one at a time as probes, with growing waits. */
  async function probe(batch: Batch): Promise<void> {
    while (running.size > 0) await Promise.race(running);
    if (fatal) return refuse(batch);
    if (!breaker.open) return void track(limit(() => deliverTop(batch, o.maxRetries)));
    const wait = breaker.nextWait();
    if (breaker.spent(wait)) {
      giveUp();
      return refuse(batch);
    }
    o.onBreaker?.({ state: 'probe', waitMs: wait });
    await sleep(wait, undefined, { signal: stopCtl.signal }).catch(() => {});
    if (fatal) return refuse(batch);
    if (stopCtl.signal.aborted)
      return abandon(batch, 'not sent: interrupted while the service was unavailable');
    await limit(() => deliverTop(batch, 0));
    breaker.probed();
  }

  return {
    async submit(batch) {
      if (fatal) return refuse(batch);
      if (breaker.open) {
        await probe(batch);
        if (fatal) throw fatal;
        return;
      }
      await waitForSlot();
      if (fatal) return refuse(batch);
      // The breaker may have opened while this batch waited for a slot: it goes as a probe, not a full batch.
      if (breaker.open) {
        await probe(batch);
        if (fatal) throw fatal;
        return;
      }
      track(limit(() => deliverTop(batch, o.maxRetries)));
    },
    async drain() {
      while (running.size > 0) await Promise.all([...running]);
      if (fatal) throw fatal;
    },
    stop() {
      stopCtl.abort(new Error('stopped'));
    },
    abandon,
    get inFlight() {
      return limit.activeCount;
    },
  };
}
