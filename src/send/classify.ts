// Retry classification: looks at one failed attempt and says whether it may be retried. Pure; schedules nothing.

/** What a failed attempt was, as the dispatcher and the ledger need it. */
export interface FailureClass {
  retry: boolean;
  httpStatus: number | null;
  retryAfterMs?: number;
  /** One line, no card data (the service's error title/type and our own words). */
  message: string;
  requestId?: string;
  aborted?: boolean;
}

const RETRY_STATUS = new Set([500, 502, 503, 504, 429]);

interface ErrorShape {
  code?: string;
  status?: number;
  retryAfterMs?: number;
  requestId?: string;
  aborted?: boolean;
  message?: string;
  name?: string;
}

/**
 * Classify an error thrown by the client's postTransactions.
 * Retried: HTTP 500/502/503/504/429, network errors, timeouts. Not retried: any other status, limits, aborts.
 * @example classifyFailure(new SvcHttpError(…status 500…)) → { retry: true, httpStatus: 500, … }
 */
export function classifyFailure(err: unknown): FailureClass {
  const e = (err ?? {}) as ErrorShape;
  const message = typeof e.message === 'string' ? e.message : String(err);
  if (e.aborted || e.name === 'AbortError') {
    return {
      retry: false,
      httpStatus: null,
      message: 'interrupted before the service answered',
      aborted: true,
    };
  }
  switch (e.code) {
    case 'SEND_HTTP': {
      const status = typeof e.status === 'number' ? e.status : null;
      return {
        retry: status !== null && RETRY_STATUS.has(status),
        httpStatus: status,
        retryAfterMs: e.retryAfterMs,
        message,
        requestId: e.requestId,
      };
    }
    case 'SEND_NETWORK':
    case 'SEND_TIMEOUT':
      return { retry: true, httpStatus: null, message, requestId: e.requestId };
    default:
      return { retry: false, httpStatus: null, message };
  }
}
