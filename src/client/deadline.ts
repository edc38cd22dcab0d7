// A call's deadline: an abort signal that fires after `ms`, and is cleared as soon as the call is over.

/**
 * A deadline for one exchange. Unlike AbortSignal.timeout, whose signal and timer live until the time is up even
 * when the call ended long before (30 s of them at every moment of a send: thousands of objects promoted to the
 * old generation), this one is cleared by `clear()` and leaves nothing behind.
 * @example const d = startDeadline(30_000); try { await call(d.signal) } finally { d.clear() }
 */
export interface Deadline {
  signal: AbortSignal;
  clear(): void;
}

export function startDeadline(ms: number): Deadline {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException(`no answer within ${ms} ms`, 'TimeoutError')),
    ms,
  );
  // As AbortSignal.timeout: a pending deadline never keeps the process alive.
  timer.unref();
  return { signal: controller.signal, clear: () => clearTimeout(timer) };
}
