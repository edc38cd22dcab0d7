// The retry policy, pure: which failed attempt is retried, and how long to wait before the next one. The waits
// are p-retry's exponential backoff with jitter from `backoff()` (the one retry loop, in dispatcher.ts), topped up
// to honour a Retry-After, and never past the outage limit. Schedules nothing itself.
import type { Config } from '../config/index.ts';
import type { FailureClass } from './classify.ts';

/** A backoff's waits (a batch's: send.retryBaseMs and send.retryMaxMs; retried.ts's: each rule's own). */
export interface RetryTiming {
  /** Wait before the first retry; doubles each retry, with jitter (×1 to ×2). */
  baseDelayMs: number;
  /** Cap on one wait. */
  maxDelayMs: number;
}

/** The table's backoff settings: the waits of a batch's retries and of a ticket's resubmissions. */
export type BackoffSettings = Pick<Config['send'], 'retryBaseMs' | 'retryMaxMs'>;

/**
 * The waits the backoff settings give: the one place they are read.
 * @example retryTimingOf(config.send) // { baseDelayMs: 500, maxDelayMs: 30000 }
 */
export function retryTimingOf(s: BackoffSettings): RetryTiming {
  return { baseDelayMs: s.retryBaseMs, maxDelayMs: s.retryMaxMs };
}

/**
 * p-retry's options for the backoff: attempt n (1-based) waits min(random(1, 2) × base × 2^(n-1), max).
 * @example backoff({ baseDelayMs: 500, maxDelayMs: 30000 }) // { minTimeout: 500, maxTimeout: 30000, factor: 2, randomize: true }
 */
export function backoff(t: RetryTiming) {
  return { minTimeout: t.baseDelayMs, maxTimeout: t.maxDelayMs, factor: 2, randomize: true } as const;
}

/** Where a batch stands when one of its attempts failed. */
export interface RetryContext {
  /** Retries this batch may still make. */
  retriesLeft: number;
  /** The backoff p-retry computed for the next attempt. */
  backoffMs: number;
  /** The run is stopping (a signal, or a failure no batch can fix). */
  stopped: boolean;
  /** The service has been failing for the whole outage limit, or this batch's own retry window is over. */
  outOfTime: boolean;
  /** Time left before the outage limit. */
  untilLimitMs: number;
}

export type RetryDecision = { retry: false } | { retry: true; delayMs: number; extraMs: number };

/**
 * Retry or not, and the wait: the backoff, plus what a Retry-After asks beyond it (never past the limit).
 * Retried: what classifyFailure marks `retry` (500, 502, 503, 504, 429, network errors, timeouts).
 * @example decideRetry({ retry: true, httpStatus: 429, retryAfterMs: 2000, message: '' }, { retriesLeft: 3, backoffMs: 500, stopped: false, outOfTime: false, untilLimitMs: 60000 }) // { retry: true, delayMs: 2000, extraMs: 1500 }
 */
export function decideRetry(f: FailureClass, c: RetryContext): RetryDecision {
  if (c.retriesLeft <= 0 || !f.retry || c.stopped || c.outOfTime) return { retry: false };
  const extraMs = Math.max(0, Math.min((f.retryAfterMs ?? 0) - c.backoffMs, c.untilLimitMs - c.backoffMs));
  return { retry: true, delayMs: c.backoffMs + extraMs, extraMs };
}
