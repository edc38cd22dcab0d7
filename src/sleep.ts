// The one sleep of the tool: a wait that a stop (an AbortSignal) cuts short, and that never rejects.

/**
 * Waits `ms`, or less when `signal` aborts (at once when it already has); resolves either way.
 * @example await sleep(wait, stop.signal); if (stop.signal.aborted) return
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
