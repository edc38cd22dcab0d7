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
  /** No connection was made (refused, DNS, TLS handshake or verification): an outage, never a reason to split. */
  connection?: boolean;
  /**
   * The run must stop at once, without splitting or retrying: the service refused our credentials (401, 403), it
   * answered with a redirect (the base URL is wrong), the transactions endpoint is not there (404, 405: the base
   * URL's path is wrong; no record can cause either), or the request could not be built.
   */
  fatal?: 'auth' | 'redirect' | 'endpoint' | 'request' | 'lease';
}

const RETRY_STATUS = new Set([500, 502, 503, 504, 429]);

interface ErrorShape {
  code?: string;
  connection?: boolean;
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
 * Fatal (the run stops): 401 and 403, 404 and 405, any 3xx, a request that could not be built.
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
        ...(status === 401 || status === 403 ? { fatal: 'auth' as const } : {}),
        ...(status === 404 || status === 405 ? { fatal: 'endpoint' as const } : {}),
      };
    }
    case 'SEND_REDIRECT':
      return {
        retry: false,
        httpStatus: typeof e.status === 'number' ? e.status : null,
        message,
        requestId: e.requestId,
        fatal: 'redirect',
      };
    case 'LEDGER_LEASE':
      return { retry: false, httpStatus: null, message, fatal: 'lease' };
    case 'SEND_REQUEST':
      return { retry: false, httpStatus: null, message, requestId: e.requestId, fatal: 'request' };
    case 'SEND_NETWORK':
      return {
        retry: true,
        httpStatus: null,
        message,
        requestId: e.requestId,
        ...(e.connection ? { connection: true } : {}),
      };
    case 'SEND_TIMEOUT':
      return { retry: true, httpStatus: null, message, requestId: e.requestId };
    default:
      return { retry: false, httpStatus: null, message };
  }
}
