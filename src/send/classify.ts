// Retry classification: looks at one failed attempt and says whether it may be retried. Pure; schedules nothing.
import {
  SvcHttpError,
  SvcNetworkError,
  SvcRedirectError,
  SvcRequestError,
  SvcTimeoutError,
} from '../client/errors.ts';
import { LedgerLeaseError } from '../errors.ts';

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

/**
 * Classify an error thrown by the client's postTransactions, by its class (src/client/errors.ts).
 * Retried: HTTP 500/502/503/504/429 (SvcHttpError), network errors (SvcNetworkError), timeouts (SvcTimeoutError).
 * Not retried: any other status, limits, aborts. Fatal (the run stops): 401 and 403, 404 and 405, any 3xx
 * (SvcRedirectError), a request that could not be built (SvcRequestError), a lease lost (LedgerLeaseError, raised by
 * the claims gate).
 * @example classifyFailure(new SvcHttpError(…status 500…)) → { retry: true, httpStatus: 500, … }
 */
export function classifyFailure(err: unknown): FailureClass {
  const message = err instanceof Error ? err.message : String(err);
  if (
    (err instanceof SvcNetworkError && err.aborted) ||
    (err instanceof Error && err.name === 'AbortError')
  ) {
    return {
      retry: false,
      httpStatus: null,
      message: 'interrupted before the service answered',
      aborted: true,
    };
  }
  if (err instanceof SvcHttpError) {
    const status = err.status;
    return {
      retry: RETRY_STATUS.has(status),
      httpStatus: status,
      retryAfterMs: err.retryAfterMs,
      message,
      requestId: err.requestId,
      ...(status === 401 || status === 403 ? { fatal: 'auth' as const } : {}),
      ...(status === 404 || status === 405 ? { fatal: 'endpoint' as const } : {}),
    };
  }
  if (err instanceof SvcRedirectError)
    return { retry: false, httpStatus: err.status, message, requestId: err.requestId, fatal: 'redirect' };
  if (err instanceof SvcRequestError)
    return { retry: false, httpStatus: null, message, requestId: err.requestId, fatal: 'request' };
  if (err instanceof SvcNetworkError)
    return {
      retry: true,
      httpStatus: null,
      message,
      requestId: err.requestId,
      ...(err.connection ? { connection: true } : {}),
    };
  if (err instanceof SvcTimeoutError)
    return { retry: true, httpStatus: null, message, requestId: err.requestId };
  if (err instanceof LedgerLeaseError) return { retry: false, httpStatus: null, message, fatal: 'lease' };
  return { retry: false, httpStatus: null, message };
}
