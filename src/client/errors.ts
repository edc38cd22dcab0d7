// Typed errors of the service client: HTTP status, network, timeout and client-side limit, all SvcIngestError.
import { SvcIngestError } from '../errors.ts';
import type { ErrorEnvelope } from './models.ts';

/** Where a failed request went (method and URL without query secrets) and the request id it carried. */
export interface RequestInfo {
  method: string;
  url: string;
  requestId: string;
}

/**
 * A non-success answer from the service (any non-2xx, or a 200 whose body carries error detail).
 * @example err.status === 429 && err.retryAfterMs === 2000
 */
export class SvcHttpError extends SvcIngestError {
  readonly status: number;
  readonly envelope: ErrorEnvelope | undefined;
  readonly requestId: string;
  readonly retryAfterMs: number | undefined;
  readonly method: string;
  readonly url: string;
  constructor(
    info: RequestInfo & { status: number; envelope?: ErrorEnvelope; retryAfterMs?: number; detail?: string },
    options?: { cause?: unknown },
  ) {
    const what = info.envelope?.type ? ` ${info.envelope.type}` : '';
    const title = info.envelope?.title ? `: ${info.envelope.title}` : '';
    const problems = (info.envelope?.validationErrors ?? [])
      .slice(0, 3)
      .map((v) => `${v.field ?? '?'}: ${v.message ?? '?'}`)
      .join('; ');
    const detail = [info.detail, problems]
      .filter(Boolean)
      .map((d) => ` (${d})`)
      .join('');
    super(
      'SEND_HTTP',
      `${info.method} ${info.url} answered HTTP ${info.status}${what}${title}${detail} [requestId ${info.requestId}]`,
      { status: info.status, requestId: info.requestId },
      options,
    );
    this.name = 'SvcHttpError';
    this.status = info.status;
    this.envelope = info.envelope;
    this.requestId = info.requestId;
    this.retryAfterMs = info.retryAfterMs;
    this.method = info.method;
    this.url = info.url;
  }
}

/**
 * No answer: connection refused or reset, DNS, TLS, or the caller's signal aborted (`aborted: true`).
 * @example if (err instanceof SvcNetworkError && err.aborted) stopQuietly()
 */
export class SvcNetworkError extends SvcIngestError {
  readonly requestId: string;
  readonly aborted: boolean;
  readonly method: string;
  readonly url: string;
  constructor(info: RequestInfo & { aborted?: boolean }, options?: { cause?: unknown }) {
    const aborted = info.aborted ?? false;
    const reason = aborted ? 'aborted' : `network error: ${describeCause(options?.cause)}`;
    super(
      'SEND_NETWORK',
      `${info.method} ${info.url} ${reason} [requestId ${info.requestId}]`,
      {
        requestId: info.requestId,
        aborted,
      },
      options,
    );
    this.name = aborted ? 'AbortError' : 'SvcNetworkError';
    this.requestId = info.requestId;
    this.aborted = aborted;
    this.method = info.method;
    this.url = info.url;
  }
}

/**
 * No answer within the configured timeout (timeoutMs).
 * @example err.timeoutMs === 30000
 */
export class SvcTimeoutError extends SvcIngestError {
  readonly requestId: string;
  readonly timeoutMs: number;
  readonly method: string;
  readonly url: string;
  constructor(info: RequestInfo & { timeoutMs: number }, options?: { cause?: unknown }) {
    super(
      'SEND_TIMEOUT',
      `${info.method} ${info.url} timed out after ${info.timeoutMs} ms [requestId ${info.requestId}]`,
      { requestId: info.requestId, timeoutMs: info.timeoutMs },
      options,
    );
    this.name = 'SvcTimeoutError';
    this.requestId = info.requestId;
    this.timeoutMs = info.timeoutMs;
    this.method = info.method;
    this.url = info.url;
  }
}

/**
 * A request refused before it left because it breaks an interface limit.
 * @example new SvcLimitError('transactionsPerRequestMax', 'expected 1..50 transactions, got 51')
 */
export class SvcLimitError extends SvcIngestError {
  readonly limit: string;
  constructor(limit: string, message: string, field?: string) {
    super('SEND_LIMIT', `limit ${limit}: ${message}`, field ? { limit, field } : { limit });
    this.name = 'SvcLimitError';
    this.limit = limit;
  }
}

function describeCause(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause ?? 'unknown');
  const inner = (cause as { cause?: unknown }).cause;
  const code =
    inner && typeof inner === 'object' && 'code' in inner ? String((inner as { code: unknown }).code) : '';
  const innerMsg = inner instanceof Error ? inner.message : '';
  return [cause.message, code, innerMsg].filter(Boolean).join(': ');
}

/**
 * Retry-After as milliseconds: delta seconds or an HTTP date; undefined when absent or unparsable.
 * @example parseRetryAfter('2') === 2000
 */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  if (value === null || value === undefined) return undefined;
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return Math.round(Number(v) * 1000);
  const at = Date.parse(v);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}
