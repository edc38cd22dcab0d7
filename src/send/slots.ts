// The dispatcher's back-pressure: batches running under p-limit, tracked until they settle; a new batch waits for
// a free slot (so the reader waits while `concurrency` batches are in flight).
import type { LimitFunction } from 'p-limit';

export interface Slots {
  /** Promises of the batches running (each settles, never rejects). */
  readonly running: Set<Promise<void>>;
  /** Follow a running batch; its error goes to `onError`, and its slot frees when it settles. */
  track(p: Promise<void>): void;
  /** Resolves once fewer than `concurrency` batches are running or queued. */
  waitForSlot(): Promise<void>;
}

export function createSlots(limit: LimitFunction, concurrency: number, onError: (err: Error) => void): Slots {
  const running = new Set<Promise<void>>();
  const waiters: Array<() => void> = [];
  return {
    running,
    track(p) {
      const tracked = p
        .catch((err: unknown) => onError(err instanceof Error ? err : new Error(String(err))))
        .finally(() => {
          running.delete(tracked);
          waiters.shift()?.();
        });
      running.add(tracked);
    },
    async waitForSlot() {
      while (limit.activeCount + limit.pendingCount >= concurrency) {
        await new Promise<void>((r) => waiters.push(r));
      }
    },
  };
}
