// The check that the service answers, before a run reads anything, retried with backoff for a window: a blip at
// 02:30 (a restart, a load balancer's failover) does not cost the night. Each try that fails is logged; once the
// window is spent the last error stands (SEND_UNAVAILABLE, exit 5). Any other error is not retried.
import { SvcIngestError } from '../errors.ts';
import type { Logger } from '../log.ts';

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
  const first = o.firstDelayMs ?? 1000;
  const max = o.maxDelayMs ?? 15_000;
  return async (signal) => {
    const start = Date.now();
    for (let attempt = 1, delay = first; ; attempt++, delay = Math.min(delay * 2, max)) {
      try {
        await check(signal);
        if (attempt > 1) o.logger.info({ event: 'service.check.ok', attempt }, 'the service answers');
        return;
      } catch (err) {
        const retried = err instanceof SvcIngestError && err.code === 'SEND_UNAVAILABLE';
        const left = o.windowMs - (Date.now() - start);
        const wait = Math.min(delay, Math.max(left, 0));
        if (!retried || left <= 0 || signal?.aborted) {
          if (retried && attempt > 1)
            o.logger.error(
              { event: 'service.check.gave-up', attempt, windowMs: o.windowMs },
              `the service did not answer in ${attempt} tries over ${Math.round((Date.now() - start) / 1000)} s`,
            );
          throw err;
        }
        o.logger.warn(
          {
            event: 'service.check.retry',
            attempt,
            delayMs: wait,
            leftMs: left,
            error: (err as Error).message,
          },
          `the service does not answer (try ${attempt}); trying again in ${wait} ms`,
        );
        await sleep(wait, signal);
      }
    }
  };
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
