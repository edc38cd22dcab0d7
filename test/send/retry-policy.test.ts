// The retry policy, pure: which failure is retried, and the wait (backoff + Retry-After, within the outage limit).
import { describe, expect, it } from 'vitest';
import { SvcHttpError, SvcNetworkError, SvcRedirectError, SvcTimeoutError } from '../../src/client/errors.ts';
import { classifyFailure } from '../../src/send/classify.ts';
import { backoff, decideRetry, type RetryContext } from '../../src/send/retry-policy.ts';

const ctx: RetryContext = {
  retriesLeft: 3,
  backoffMs: 500,
  stopped: false,
  outOfTime: false,
  untilLimitMs: 60_000,
};
/** Where the failed request went: the errors are the client's own classes (classify tells them apart by class). */
const req = { method: 'POST', url: 'http://127.0.0.1/v2/transactions', requestId: 'r-1' };
const http = (status: number, retryAfterMs?: number) =>
  classifyFailure(
    new SvcHttpError({ ...req, status, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) }),
  );

describe('retry policy (pure)', () => {
  it('retries 500, 502, 503, 504, 429, network errors and timeouts; nothing else', () => {
    for (const s of [500, 502, 503, 504, 429]) expect(decideRetry(http(s), ctx).retry).toBe(true);
    for (const s of [400, 404, 409, 413, 422, 501]) expect(decideRetry(http(s), ctx).retry).toBe(false);
    expect(
      decideRetry(classifyFailure(new SvcNetworkError(req, { cause: new Error('reset') })), ctx).retry,
    ).toBe(true);
    expect(decideRetry(classifyFailure(new SvcTimeoutError({ ...req, timeoutMs: 10 })), ctx).retry).toBe(
      true,
    );
    expect(decideRetry(classifyFailure({ name: 'AbortError', message: 'x' }), ctx).retry).toBe(false);
    // 401/403 and redirects stop the run: never retried.
    expect(decideRetry(http(401), ctx).retry).toBe(false);
    expect(
      decideRetry(
        classifyFailure(new SvcRedirectError({ ...req, status: 308, location: 'https://elsewhere.example' })),
        ctx,
      ).retry,
    ).toBe(false);
  });

  it('no retry when none are left, the run stops, or the outage limit is spent', () => {
    expect(decideRetry(http(503), { ...ctx, retriesLeft: 0 })).toEqual({ retry: false });
    expect(decideRetry(http(503), { ...ctx, stopped: true })).toEqual({ retry: false });
    expect(decideRetry(http(503), { ...ctx, outOfTime: true })).toEqual({ retry: false });
  });

  it('waits the backoff, or what Retry-After asks when that is longer, never past the limit', () => {
    expect(decideRetry(http(503), ctx)).toEqual({ retry: true, delayMs: 500, extraMs: 0 });
    expect(decideRetry(http(429, 200), ctx)).toEqual({ retry: true, delayMs: 500, extraMs: 0 });
    expect(decideRetry(http(429, 2000), ctx)).toEqual({ retry: true, delayMs: 2000, extraMs: 1500 });
    expect(decideRetry(http(429, 90_000), { ...ctx, untilLimitMs: 10_000 })).toEqual({
      retry: true,
      delayMs: 10_000,
      extraMs: 9500,
    });
    expect(decideRetry(http(429, 90_000), { ...ctx, untilLimitMs: 100 })).toEqual({
      retry: true,
      delayMs: 500,
      extraMs: 0,
    });
  });

  it("backoff is p-retry's exponential from the base, factor 2, with jitter, capped", () => {
    expect(backoff({ baseDelayMs: 500, maxDelayMs: 30_000 })).toEqual({
      minTimeout: 500,
      maxTimeout: 30_000,
      factor: 2,
      randomize: true,
    });
  });
});
