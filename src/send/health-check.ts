// The check that the service answers, before a run reads anything, retried with backoff for a window: a blip at
// 02:30 (a restart, a load balancer's failover) does not cost the night. Each try that fails is logged; once the
// window is spent the last error stands (SEND_UNAVAILABLE, exit 5). Any other error is not retried.
import { SvcIngestError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { retried } from './retried.ts';

/** How the check is retried. */
export interface HealthCheckOptions {
  /** How long, from the first try, a check may keep failing before the run gives up (0 = one try only). */
  windowMs: number;
  /** Wait before the second try; it doubles each try, capped at maxDelayMs (defaults 1000 and 15000). */
  firstDelayMs?: number;
  maxDelayMs?: number;
  logger: Logger;
}

/**
 * `check` wrapped so that an unavailable service is tried again, with backoff, until `windowMs` has passed since
 * the first try. `signal` (a SIGINT/SIGTERM) ends a wait at once, and the last error is thrown.
 * @example preflight: retriedHealthCheck((s) => client.checkService(s), { windowMs: 60_000, logger })
 */
export function retriedHealthCheck(
  check: (signal?: AbortSignal) => Promise<void>,
  o: HealthCheckOptions,
): (signal?: AbortSignal) => Promise<void> {
  return async (signal) => {
    const start = Date.now();
    let attempts = 0;
    try {
      await retried(
        (attempt) => {
          attempts = attempt;
          return check(signal);
        },
        {
          // The policy: only an unavailable service is retried, for the window; no jitter (each wait is logged).
          retries: Number.POSITIVE_INFINITY,
          windowMs: o.windowMs,
          baseDelayMs: o.firstDelayMs ?? 1000,
          maxDelayMs: o.maxDelayMs ?? 15_000,
          jitter: false,
          retryable: isUnavailable,
          signal,
          onRetry: (err, attempt, delayMs) =>
            o.logger.warn(
              {
                event: 'service.check.retry',
                attempt,
                delayMs,
                leftMs: o.windowMs - (Date.now() - start),
                error: (err as Error).message,
              },
              `the service does not answer (try ${attempt}); trying again in ${delayMs} ms`,
            ),
        },
      );
    } catch (err) {
      if (isUnavailable(err) && attempts > 1)
        o.logger.error(
          { event: 'service.check.gave-up', attempt: attempts, windowMs: o.windowMs },
          `the service did not answer in ${attempts} tries over ${Math.round((Date.now() - start) / 1000)} s`,
        );
      throw err;
    }
    if (attempts > 1) o.logger.info({ event: 'service.check.ok', attempt: attempts }, 'the service answers');
  };
}

function isUnavailable(err: unknown): boolean {
  return err instanceof SvcIngestError && err.code === 'SEND_UNAVAILABLE';
}
