// The service sink: sends batches with bounded concurrency (p-limit) and retry (p-retry, the only retry loop in the
// tool), composing the pure retry policy (retry-policy.ts), poison isolation (bisect.ts) and the outage breaker
// (breaker.ts). It stops the run at once on a failure no batch can fix (stop.ts) and records each outcome (through
// onOutcome, the recorder) before freeing the batch's slot.
import pLimit from 'p-limit';
import type { Batch } from '../batch/batcher.ts';
import { releaseWires } from '../client/body.ts';
import type { Config } from '../config/index.ts';
import { sleep } from '../sleep.ts';
import { createAttempt, type PostTransactions } from './attempt.ts';
import { createBisector, type Delivery } from './bisect.ts';
import { type Breaker, createBreaker } from './breaker.ts';
import type { FailureClass } from './classify.ts';
import { ackedOutcome, failedOutcome, notSentOutcome } from './outcomes.ts';
import { type BackoffSettings, retryTimingOf } from './retry-policy.ts';
import type { BatchOutcome, Sink } from './sink.ts';
import { createSlots } from './slots.ts';
import { OutageError, StopError, stopFor } from './stop.ts';

/**
 * The dispatcher's settings, the table's send.* keys (a key renamed in the table does not compile here):
 * concurrency, a batch's retries and their backoff, the retries of each part of a split batch, and outageMaxMs,
 * the longest time the service may keep failing (counted from the first failed attempt after the last ack) before
 * the dispatcher gives up with an OutageError. A batch's retries end at that limit (p-retry's maxRetryTime
 * shortens the last wait); a probe that would wait past it is not made; the attempt under way can add up to its
 * timeout.
 */
export type DispatchConfig = Pick<
  Config['send'],
  'concurrency' | 'maxRetries' | 'splitRetries' | 'outageMaxMs'
> &
  BackoffSettings;

export interface DispatcherOptions {
  post: PostTransactions;
  settings: DispatchConfig;
  /** Consecutive failed batches that open the breaker (default max(3, concurrency)). */
  breakerThreshold?: number;
  /** Called once per outcome, inside the batch's slot; must persist it (the ledger). A throw is fatal. */
  onOutcome(outcome: BatchOutcome): Promise<void>;
  /** Called for every retry scheduled (for counters / logs). */
  onRetry?(info: { batchId: string; attempt: number; failure: FailureClass; delayMs: number }): void;
  onSplit?(info: { batchId: string; size: number; failure: FailureClass }): void;
  onBreaker?(info: { state: 'open' | 'probe' | 'closed' | 'gave-up'; probeInMs?: number }): void;
}

/** The service sink: a Sink that sends. */
export type Dispatcher = Sink;

export function createDispatcher(o: DispatcherOptions): Dispatcher {
  const { concurrency } = o.settings;
  const limit = pLimit(concurrency);
  // A batch's backoff, and the breaker's probe waits: the table's retry settings read here, once.
  const timing = retryTimingOf(o.settings);
  const breaker = createBreaker({
    threshold: o.breakerThreshold ?? Math.max(3, concurrency),
    settings: o.settings,
    probe: timing,
  });
  const stopCtl = new AbortController();
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

  const attempt = createAttempt({
    post: o.post,
    timing,
    breaker,
    stop: stopCtl.signal,
    onRetry: o.onRetry,
  });
  const bisector = createBisector({
    attempt,
    acked(batchId, items, r) {
      breaker.onAck();
      return o.onOutcome(ackedOutcome(batchId, items, r));
    },
    fatal: (f) => raise(stopFor(f)),
    stopped: () => stopCtl.signal.aborted,
    lastAckAt: () => breaker.lastAckAt,
    settings: o.settings,
    onSplit: o.onSplit,
  });

  const parts: DeliveryParts = { o, bisector, breaker, stop: stopCtl.signal, fatal: () => fatal, giveUp };

  /** A batch sent (split if need be) and each outcome recorded; then its records' bytes are let go of (body.ts). */
  async function deliverTop(batch: Batch, retries: number): Promise<void> {
    try {
      await deliverSettled(parts, batch, retries);
    } finally {
      releaseWires(batch.items);
    }
  }

  const { running, track, waitForSlot } = createSlots(limit, concurrency, (err) => raise(err));

  /** Record a batch that will not be sent (stop, outage) as failed, so a rerun sends it. */
  function abandon(batch: Batch, reason: string, stopping = false): Promise<void> {
    return o.onOutcome(notSentOutcome(batch, reason, stopping));
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
    if (!breaker.open) return void track(limit(() => deliverTop(batch, o.settings.maxRetries)));
    const wait = breaker.nextWait();
    if (breaker.spent(wait)) {
      giveUp();
      return refuse(batch);
    }
    o.onBreaker?.({ state: 'probe', probeInMs: wait });
    // Not send/retried.ts: the breaker's growing waits between probes (breaker.ts), across batches, not one call's.
    await sleep(wait, stopCtl.signal);
    if (fatal) return refuse(batch);
    if (stopCtl.signal.aborted)
      return abandon(batch, 'not sent: interrupted while the service was unavailable');
    await limit(() => deliverTop(batch, 0));
    breaker.probed();
  }

  return {
    async submit(batch) {
      if (fatal) return refuse(batch);
      if (!breaker.open) {
        await waitForSlot();
        if (fatal) return refuse(batch);
      }
      // The breaker may have opened while this batch waited for a slot: it goes as a probe, not a full batch.
      if (breaker.open) {
        await probe(batch);
        if (fatal) throw fatal;
        return;
      }
      track(limit(() => deliverTop(batch, o.settings.maxRetries)));
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

/** What deliverSettled works with: the dispatcher's parts, its stop signal and its fatal error so far. */
interface DeliveryParts {
  o: DispatcherOptions;
  bisector: ReturnType<typeof createBisector>;
  breaker: Breaker;
  stop: AbortSignal;
  fatal: () => Error | null;
  giveUp: () => void;
}

/**
 * A batch sent, split if need be: a batch failed whole is explored (its refused record isolated) while the service
 * otherwise answers; each failed part recorded, and the breaker told how the batch went.
 */
async function deliverSettled(c: DeliveryParts, batch: Batch, retries: number): Promise<void> {
  const d: Delivery = { startedAt: performance.now(), acked: 0, failed: [] };
  await c.bisector.deliver(batch.id, batch.items, retries, d);
  const whole = d.failed[0];
  // Only while no batch has failed whole (the breaker counts those), so an outage is not hammered.
  if (
    whole !== undefined &&
    whole.items === batch.items &&
    whole.splittable &&
    c.breaker.quiet &&
    !c.stop.aborted &&
    !c.breaker.spent(0)
  ) {
    await c.bisector.explore(whole, d);
  }
  // The service has been failing for outageMaxMs (this batch's retries ran up to the limit): give up.
  if (d.acked === 0 && d.failed.length > 0 && !(c.fatal() instanceof StopError) && c.breaker.spent(0))
    c.giveUp();
  const stopping = c.fatal() instanceof StopError;
  for (const part of d.failed) await c.o.onOutcome(failedOutcome(part, stopping));
  const change = c.breaker.settle(d.acked > 0, stopping);
  if (change === 'closed') c.o.onBreaker?.({ state: 'closed' });
  else if (change === 'opened') c.o.onBreaker?.({ state: 'open' });
}
