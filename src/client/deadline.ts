// A call's deadline: an abort signal that fires after `ms`, or when the caller's signal does, and is cleared as soon
// as the call is over.

/**
 * A deadline for one exchange. Unlike AbortSignal.timeout, whose signal and timer live until the time is up even
 * when the call ended long before (30 s of them at every moment of a send: thousands of objects promoted to the
 * old generation), this one is cleared by `clear()` and leaves nothing behind.
 * @example const d = startDeadline(30_000, stop); try { await call(d.signal) } finally { d.clear() }
 */
export interface Deadline {
  signal: AbortSignal;
  clear(): void;
}

/**
 * `ms` from now, or as soon as `follow` aborts (with its reason), whichever comes first. The caller's signal is
 * followed through one listener, removed by clear(): not AbortSignal.any, whose composite signal the long-lived
 * source keeps a weak reference to, with a finalizer, until a full collection (the request-path bench with a send's
 * stop signal, concurrency 8: ~25 MB more resident with it, its CPU not apart beyond the noise; docs/performance.md).
 */
export function startDeadline(ms: number, follow?: AbortSignal): Deadline {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException(`no answer within ${ms} ms`, 'TimeoutError')),
    ms,
  );
  // As AbortSignal.timeout: a pending deadline never keeps the process alive.
  timer.unref();
  if (follow === undefined) return { signal: controller.signal, clear: () => clearTimeout(timer) };
  const onAbort = () => controller.abort(follow.reason);
  if (follow.aborted) onAbort();
  // An AbortSignal has no listener limit in the Nodes we run on (22.18 and 24 checked; nodejs/node#55816): a send's
  // stop signal holds one per call in flight without a warning.
  else follow.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    clear: () => {
      clearTimeout(timer);
      follow.removeEventListener('abort', onAbort);
    },
  };
}
