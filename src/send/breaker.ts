// The outage breaker, a pure state machine (time comes from `now`): when the service has been failing since
// when, whether the breaker is open (max(3, concurrency) batches failed in a row: no new batch, single probes with
// doubling waits), and when the failing period has run past outageMaxMs (give up: exit 5). Sends nothing itself.
import type { Config } from '../config/index.ts';
import type { FailureClass } from './classify.ts';
import type { RetryTiming } from './retry-policy.ts';

export interface BreakerOptions {
  /** Consecutive failed batches that open the breaker. */
  threshold: number;
  /** outageMaxMs: the longest time the service may keep failing (from the first failed attempt since the last ack). */
  settings: Pick<Config['send'], 'outageMaxMs'>;
  /** The probe waits, a batch's backoff (dispatcher.ts): the first baseDelayMs, doubling, capped by maxDelayMs. */
  probe: RetryTiming;
  /** Clock in ms (default performance.now). */
  now?: () => number;
}

/** What settling a batch did to the breaker. */
export type BreakerChange = 'opened' | 'closed' | null;

export interface Breaker {
  /** A batch (or part) was acknowledged: the service is up. */
  onAck(): void;
  /** A failed attempt that started at `startedAt`; a retryable one may mean the service is down. */
  onFail(f: FailureClass, startedAt: number): void;
  /** A whole batch settled: acked (any part) or not. Opens the breaker after `threshold` failures in a row. */
  settle(acked: boolean, stopping: boolean): BreakerChange;
  /** Open: new batches go one at a time as probes. */
  readonly open: boolean;
  /** No batch has failed whole since the last ack and the breaker is closed (a lone failure may be explored). */
  readonly quiet: boolean;
  /** The wait before the next probe. */
  nextWait(): number;
  /** A probe settled and the breaker is still open: the next wait doubles (capped). */
  probed(): void;
  /** True when waiting `delayMs` more would take the failing period past outageMaxMs. */
  spent(delayMs: number): boolean;
  /** Time a batch starting now may spend on retries before the outage limit (p-retry's maxRetryTime). */
  retryBudget(): number;
  /** Time left before the outage limit (meaningful while failing). */
  untilLimit(): number;
  /** How long the service has been failing, and the last retryable failure's message. */
  failing(): { ms: number; last: string };
  readonly lastAckAt: number;
}

export function createBreaker(o: BreakerOptions): Breaker {
  const now = o.now ?? (() => performance.now());
  let consecutiveFailed = 0;
  let lastAckAt = 0;
  let openedAt = 0;
  const { settings, probe } = o;
  let probeWait = probe.baseDelayMs;
  /** When the service started failing (the start of the first failed attempt since the last ack); 0 = not failing. */
  let failingSince = 0;
  let lastError = '';
  /** Time left before the outage limit after `elapsed` ms of failing (negative: past it). */
  const left = (elapsed: number): number => settings.outageMaxMs - elapsed;
  const spent = (delayMs: number): boolean => failingSince !== 0 && left(now() - failingSince + delayMs) < 0;
  return {
    onAck() {
      lastAckAt = now();
      failingSince = 0;
    },
    onFail(f, startedAt) {
      if (!f.retry) return;
      lastError = f.message;
      if (failingSince === 0) failingSince = Math.max(startedAt, lastAckAt);
    },
    settle(acked, stopping) {
      if (acked) {
        const was = openedAt !== 0;
        consecutiveFailed = 0;
        openedAt = 0;
        return was ? 'closed' : null;
      }
      if (++consecutiveFailed >= o.threshold && openedAt === 0 && !stopping) {
        openedAt = now();
        // Batches refused without a retryable failure (every one a 4xx) start the clock here.
        if (failingSince === 0) failingSince = openedAt;
        probeWait = Math.max(1, probe.baseDelayMs);
        return 'opened';
      }
      return null;
    },
    get open() {
      return openedAt !== 0;
    },
    get quiet() {
      return consecutiveFailed === 0 && openedAt === 0;
    },
    nextWait: () => probeWait,
    probed() {
      if (openedAt !== 0) probeWait = Math.min(probeWait * 2, probe.maxDelayMs);
    },
    spent,
    retryBudget: () => left(failingSince === 0 ? 0 : now() - failingSince),
    untilLimit: () => left(now() - failingSince),
    failing: () => ({ ms: now() - failingSince, last: lastError }),
    get lastAckAt() {
      return lastAckAt;
    },
  };
}
