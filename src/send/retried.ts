// The one retry loop of what is not a batch (a batch's is attempt.ts): p-retry with the backoff of the one retry
// policy (retry-policy.ts backoff()). What differs between its uses is policy each states, not code: which
// failures are retried, how many tries or how long a window, and whether the waits carry jitter.
import pRetry from 'p-retry';
import { backoff } from './retry-policy.ts';

/**
 * How a call is retried.
 * @example { retries: 7, baseDelayMs: 500, maxDelayMs: 30000, retryable: (e) => e instanceof SvcNetworkError }
 */
export interface RetryRule {
  /** Retries after the first attempt at most (Infinity: the window bounds them). */
  retries: number;
  /** How long from the first attempt retries may go on; the last wait is shortened to meet it (0: one try). */
  windowMs?: number;
  /** Wait before the first retry; doubles each retry, capped at maxDelayMs. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** Jitter: each wait ×1 to ×2, as a batch's (default); false where the wait is said in a log line beforehand. */
  jitter?: boolean;
  /** Which failures are retried; the others are thrown at once. */
  retryable(err: unknown): boolean;
  /** Each failure that is retried, with the attempt it ended and the wait before the next one. */
  onRetry?(err: unknown, attempt: number, delayMs: number): void;
  /** Ends a wait at once; the last failure is then thrown. */
  signal?: AbortSignal | undefined;
}

/**
 * `fn` called until it resolves, or a failure is not retried, or the rule's retries or window are spent: then the
 * last failure is thrown (as `fn` threw it).
 * @example await retried((attempt) => client.createTicket(req), { retries: 7, baseDelayMs: 500, maxDelayMs: 30000, jitter: false, retryable })
 */
export async function retried<T>(fn: (attempt: number) => Promise<T>, rule: RetryRule): Promise<T> {
  let last: { error: unknown } | undefined;
  let done: { value: T } | undefined;
  const start = Date.now();
  const b = backoff(rule);
  try {
    return await pRetry(
      async (attempt) => {
        try {
          const value = await fn(attempt);
          done = { value };
          return value;
        } catch (error) {
          last = { error };
          // p-retry takes an Error only; the thrown value itself is what the caller gets back.
          throw error instanceof Error ? error : new Error(String(error));
        }
      },
      {
        ...b,
        randomize: rule.jitter ?? b.randomize,
        retries: rule.retries,
        ...(rule.windowMs === undefined ? {} : { maxRetryTime: rule.windowMs }),
        ...(rule.signal === undefined ? {} : { signal: rule.signal }),
        shouldRetry: ({ attemptNumber, retryDelay }) => {
          if (!rule.retryable(last?.error)) return false;
          const left = rule.windowMs === undefined ? retryDelay : rule.windowMs - (Date.now() - start);
          rule.onRetry?.(last?.error, attemptNumber, Math.max(0, Math.min(retryDelay, left)));
          return true;
        },
      },
    );
  } catch (err) {
    // A success the signal arrived after still stands; an abort ends with the last failure, not the abort's reason.
    if (done !== undefined) return done.value;
    throw last !== undefined ? last.error : err;
  }
}
