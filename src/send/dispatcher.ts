// Dispatcher: sends batches with bounded concurrency (p-limit) and retry (p-retry, the only retry in the tool),
// splits a batch that keeps failing while the service is otherwise healthy (poison isolation), stops taking
// batches when every recent batch fails (outage breaker) and gives up once the service has been failing for
// outageMaxMs, and stops the run at once on a failure no batch can fix (401/403, a redirect). It records each
// outcome before freeing a slot.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pLimit from 'p-limit';
import pRetry from 'p-retry';
import type { Batch, BatchItem } from '../batch/batcher.ts';
import type { SvcClient } from '../client/index.ts';
import { SvcIngestError } from '../errors.ts';
import { classifyFailure, type FailureClass } from './classify.ts';

/** The one network call the dispatcher needs (the shared client's postTransactions). */
/** Sends one batch: each transaction already serialised as JSON (the client's postTransactionsJson). */
export type PostTransactions = SvcClient['postTransactionsJson'];

/**
 * The final outcome of one batch (or of one part of a split batch): exactly one ledger line.
 * @example { batchId: 'r1-7', items, status: 'acked', requestId: '…', attempts: 2, httpStatus: 200, retries: 1 }
 */
export interface BatchOutcome {
  batchId: string;
  items: BatchItem[];
  status: 'acked' | 'failed';
  requestId: string | null;
  clientRequestId: string;
  attempts: number;
  httpStatus: number | null;
  error?: string;
  /** Recorded while the run stops for a StopError (which says why, once): not a failure of its own to report. */
  stopping?: boolean;
}

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

export interface Dispatcher {
  /** Hand over a batch; resolves once it is running (back-pressure), rejects if the run must stop. */
  submit(batch: Batch): Promise<void>;
  /** Wait for every batch handed over to settle. Rejects with the fatal error, if any. */
  drain(): Promise<void>;
  /** Stop scheduling retries and probes (a signal arrived); requests in flight finish or fail. */
  stop(): void;
  /** Record a batch that will not be sent as failed in the ledger (so a rerun sends it). */
  abandon(batch: Batch, reason: string, stopping?: boolean): Promise<void>;
  readonly inFlight: number;
}

/**
 * The run must stop: no batch can succeed now. Batches not sent are recorded as failed with `notSent` as their
 * error, so a rerun sends them. OutageError is exit 5; the others (credentials, redirect) exit 1.
 * @example if (err instanceof StopError) await dispatcher.abandon(rest, err.notSent, true)
 */
export class StopError extends SvcIngestError {
  readonly notSent: string;
  constructor(
    code: 'SEND_AUTH' | 'SEND_REDIRECT' | 'SEND_REQUEST' | 'SEND_OUTAGE',
    message: string,
    notSent: string,
  ) {
    // One line whatever the service put in its answer.
    super(code, message.replace(/[\u0000-\u001f\u007f]+/g, ' '));
    this.name = 'StopError';
    this.notSent = notSent;
  }
}

/** The service has been failing for longer than outageMaxMs: stop sending (exit 5). */
export class OutageError extends StopError {
  constructor(ms: number, last?: string) {
    super(
      'SEND_OUTAGE',
      `service unavailable: no batch got through for ${(ms / 1000).toFixed(1)} s; stopped sending${last ? ` (last error: ${last})` : ''}`,
      'not sent: service unavailable',
    );
    this.name = 'OutageError';
  }
}

/** The StopError for a failure that ends the run at once. */
function stopFor(f: FailureClass): StopError {
  switch (f.fatal) {
    case 'auth':
      return new StopError(
        'SEND_AUTH',
        `${f.message}; stopped at once: the service refused our credentials (check auth.tokenEnv / auth.tokenFile and tls.*)`,
        `not sent: the service refused our credentials (HTTP ${f.httpStatus})`,
      );
    case 'redirect':
      return new StopError(
        'SEND_REDIRECT',
        `${f.message}; stopped at once`,
        'not sent: the service answered with a redirect',
      );
    default:
      return new StopError(
        'SEND_REQUEST',
        `${f.message}; stopped at once`,
        'not sent: the request could not be built',
      );
  }
}

interface AttemptResult {
  ok: boolean;
  requestId: string | null;
  clientRequestId: string;
  httpStatus: number | null;
  attempts: number;
  failure?: FailureClass;
}

export function createDispatcher(o: DispatcherOptions): Dispatcher {
  const concurrency = o.concurrency;
  const limit = pLimit(concurrency);
  const splitRetries = o.splitRetries ?? 1;
  const threshold = o.breakerThreshold ?? Math.max(3, concurrency);
  const outageMaxMs = o.outageMaxMs ?? 120_000;
  const stopCtl = new AbortController();
  const running = new Set<Promise<void>>();
  const slotWaiters: Array<() => void> = [];
  let fatal: Error | null = null;
  let consecutiveFailed = 0;
  let lastAckAt = 0;
  let breakerOpenedAt = 0;
  let probeWait = o.retryBaseMs;
  /** When the service started failing (the start of the first failed attempt since the last ack); 0 = not failing. */
  let failingSince = 0;
  let lastOutageError = '';

  /** Makes the run stop. A StopError aborts retries and probes; any other fatal error (the ledger) wins over it. */
  function raise(err: Error): void {
    if (fatal === null || (fatal instanceof StopError && !(err instanceof StopError))) fatal = err;
    if (err instanceof StopError) stopCtl.abort(err);
  }

  /** Notes a failed attempt that may mean the service is down (a retryable one). */
  function noteFailure(f: FailureClass, startedAt: number): void {
    if (!f.retry) return;
    lastOutageError = f.message;
    if (failingSince === 0) failingSince = Math.max(startedAt, lastAckAt);
  }

  /** True when waiting `waitMs` more would take the failing period past outageMaxMs. */
  function outageSpent(waitMs: number): boolean {
    return failingSince !== 0 && performance.now() - failingSince + waitMs > outageMaxMs;
  }

  function giveUp(): void {
    o.onBreaker?.({ state: 'gave-up' });
    raise(new OutageError(performance.now() - failingSince, lastOutageError));
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
    const left = failingSince === 0 ? outageMaxMs : outageMaxMs - (performance.now() - failingSince);
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
          minTimeout: o.retryBaseMs,
          maxTimeout: o.retryMaxMs,
          factor: 2,
          randomize: true,
          maxRetryTime: Math.max(0, left),
          signal: stopCtl.signal,
          // Decided once, in onFailedAttempt (which p-retry calls first), so onRetry counts only real retries.
          shouldRetry: () => willRetry,
          onFailedAttempt: async ({ error, retriesLeft, retryDelay, attemptNumber }) => {
            lastFailure = classifyFailure(error);
            noteFailure(lastFailure, startedAt);
            willRetry = false;
            if (retriesLeft <= 0 || !lastFailure.retry || stopCtl.signal.aborted) return;
            // The service has been failing for the whole outage limit: no more retries (deliverTop gives up).
            if (outageSpent(0) || performance.now() >= retryUntil) return;
            // Retry-After on top of p-retry's delay, but never past the outage limit.
            const untilLimit = outageMaxMs - (performance.now() - failingSince) - retryDelay;
            const extra = Math.max(0, Math.min((lastFailure.retryAfterMs ?? 0) - retryDelay, untilLimit));
            willRetry = true;
            o.onRetry?.({
              batchId,
              attempt: attemptNumber,
              failure: lastFailure,
              delayMs: retryDelay + extra,
            });
            // Retry-After is honoured by waiting the difference on top of p-retry's own delay.
            if (extra > 0) await sleep(extra, undefined, { signal: stopCtl.signal }).catch(() => {});
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

  /** One top-level batch being delivered: when it started, how many of its parts were acked, which failed. */
  interface Delivery {
    startedAt: number;
    acked: number;
    failed: FailedPart[];
  }

  /** A part (the whole batch or a split piece) that failed for good; recorded once the batch is settled. */
  interface FailedPart {
    batchId: string;
    items: BatchItem[];
    r: AttemptResult;
    /** More than one record, and not cut short by a stop: halving it could still isolate a bad record. */
    splittable: boolean;
  }

  /** Send items; on final failure, split in halves while the failure looks specific to them. */
  async function deliver(batchId: string, items: BatchItem[], retries: number, d: Delivery): Promise<void> {
    const r = await attempt(batchId, items, retries);
    if (r.ok) {
      lastAckAt = performance.now();
      failingSince = 0;
      d.acked++;
      await o.onOutcome({
        batchId,
        items,
        status: 'acked',
        requestId: r.requestId,
        clientRequestId: r.clientRequestId,
        attempts: r.attempts,
        httpStatus: r.httpStatus,
      });
      return;
    }
    const failure = r.failure!;
    // 401/403, a redirect: no batch can succeed; the run stops, nothing is split.
    if (failure.fatal) raise(stopFor(failure));
    const splittable =
      items.length > 1 &&
      !stopCtl.signal.aborted &&
      !failure.aborted &&
      !failure.fatal &&
      !failure.connection;
    // Split only when the failure looks specific to this batch: the service refused it (4xx), or it
    // acknowledged other batches (or other parts of this one) since this batch was taken. During an
    // outage nothing is split, and a failure to connect (refused, DNS, TLS) is always an outage.
    const refused =
      failure.httpStatus !== null &&
      failure.httpStatus >= 400 &&
      failure.httpStatus < 500 &&
      failure.httpStatus !== 429;
    if (splittable && (refused || lastAckAt > d.startedAt)) {
      await split({ batchId, items, r, splittable }, splitRetries, d);
      return;
    }
    d.failed.push({ batchId, items, r, splittable });
  }

  async function split(part: FailedPart, retries: number, d: Delivery): Promise<void> {
    o.onSplit?.({ batchId: part.batchId, size: part.items.length, failure: part.r.failure! });
    const mid = Math.ceil(part.items.length / 2);
    await deliver(`${part.batchId}.1`, part.items.slice(0, mid), retries, d);
    await deliver(`${part.batchId}.2`, part.items.slice(mid), retries, d);
  }

  async function deliverTop(batch: Batch, retries: number): Promise<void> {
    const d: Delivery = { startedAt: performance.now(), acked: 0, failed: [] };
    await deliver(batch.id, batch.items, retries, d);
    const whole = d.failed[0];
    // A batch that failed while nothing else was acknowledged (concurrency 1, a run of one batch, the last
    // batch) gives no sign whether the service is down or the batch holds a record it refuses. If the batches
    // before it went well, split it once, one attempt per half: an ack of either half shows the service is up,
    // and a half that failed is then split as usual. If neither half is acked it is most likely an outage, and
    // the batch is recorded as it failed. This costs at most two extra requests per batch, and only while no
    // batch has failed whole (the breaker counts those), so an outage is not hammered.
    if (
      whole !== undefined &&
      whole.items === batch.items &&
      whole.splittable &&
      consecutiveFailed === 0 &&
      breakerOpenedAt === 0 &&
      !stopCtl.signal.aborted &&
      !outageSpent(0)
    ) {
      const explored: Delivery = { startedAt: d.startedAt, acked: 0, failed: [] };
      await split(whole, 0, explored);
      d.acked += explored.acked;
      if (explored.acked > 0) {
        d.failed = [];
        for (const part of explored.failed) {
          if (part.splittable && !stopCtl.signal.aborted) await split(part, splitRetries, d);
          else d.failed.push(part);
        }
      }
    }
    // The service has been failing for outageMaxMs (this batch's retries ran up to the limit): give up.
    if (d.acked === 0 && d.failed.length > 0 && !(fatal instanceof StopError) && outageSpent(0)) giveUp();
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
    if (d.acked > 0) {
      if (breakerOpenedAt !== 0) o.onBreaker?.({ state: 'closed' });
      consecutiveFailed = 0;
      breakerOpenedAt = 0;
    } else if (++consecutiveFailed >= threshold && breakerOpenedAt === 0 && !stopping) {
      breakerOpenedAt = performance.now();
      // Batches refused without a retryable failure (every one a 4xx) start the clock here.
      if (failingSince === 0) failingSince = breakerOpenedAt;
      probeWait = Math.max(1, o.retryBaseMs);
      o.onBreaker?.({ state: 'open' });
    }
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
    if (breakerOpenedAt === 0) return void track(limit(() => deliverTop(batch, o.maxRetries)));
    if (outageSpent(probeWait)) {
      giveUp();
      return refuse(batch);
    }
    o.onBreaker?.({ state: 'probe', waitMs: probeWait });
    await sleep(probeWait, undefined, { signal: stopCtl.signal }).catch(() => {});
    if (fatal) return refuse(batch);
    if (stopCtl.signal.aborted)
      return abandon(batch, 'not sent: interrupted while the service was unavailable');
    await limit(() => deliverTop(batch, 0));
    if (breakerOpenedAt !== 0) probeWait = Math.min(probeWait * 2, o.retryMaxMs);
  }

  return {
    async submit(batch) {
      if (fatal) return refuse(batch);
      if (breakerOpenedAt !== 0) {
        await probe(batch);
        if (fatal) throw fatal;
        return;
      }
      await waitForSlot();
      if (fatal) return refuse(batch);
      // The breaker may have opened while this batch waited for a slot: it goes as a probe, not a full batch.
      if (breakerOpenedAt !== 0) {
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
