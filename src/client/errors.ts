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
      // One line, whatever the service put in its envelope.
      `${info.method} ${info.url} answered HTTP ${info.status}${what}${title}${detail} [requestId ${info.requestId}]`.replace(
        /[\u0000-\u001f\u007f]+/g,
        ' ',
      ),
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
 * `connection` is true when no connection was made at all (refused, DNS, TLS handshake or verification): that is
 * an outage, never something a batch's content could cause.
 * @example if (err instanceof SvcNetworkError && err.aborted) stopQuietly()
 */
export class SvcNetworkError extends SvcIngestError {
  readonly requestId: string;
  readonly aborted: boolean;
  readonly connection: boolean;
  readonly method: string;
  readonly url: string;
  constructor(info: RequestInfo & { aborted?: boolean }, options?: { cause?: unknown }) {
    const aborted = info.aborted ?? false;
    const connection = !aborted && isConnectionFailure(options?.cause);
    const reason = aborted ? 'aborted' : `network error: ${describeCause(options?.cause)}`;
    super(
      'SEND_NETWORK',
      `${info.method} ${info.url} ${reason} [requestId ${info.requestId}]`,
      {
        requestId: info.requestId,
        aborted,
        connection,
      },
      options,
    );
    this.name = aborted ? 'AbortError' : 'SvcNetworkError';
    this.requestId = info.requestId;
    this.aborted = aborted;
    this.connection = connection;
    this.method = info.method;
    this.url = info.url;
  }
}

/**
 * A 3xx answer. No endpoint of the service redirects, so none is followed: the message names where it pointed
 * (the Location's origin only, never its path or query, which may carry secrets).
 * @example err.status === 308 && err.location === 'https://elsewhere.example'
 */
export class SvcRedirectError extends SvcIngestError {
  readonly status: number;
  readonly requestId: string;
  /** Origin of the Location header ('(none)' when absent, '(unparsable)' when not a URL). */
  readonly location: string;
  readonly method: string;
  readonly url: string;
  constructor(info: RequestInfo & { status: number; location: string }) {
    super(
      'SEND_REDIRECT',
      `${info.method} ${info.url} answered HTTP ${info.status}, a redirect to ${info.location}; redirects are never followed (check baseUrl) [requestId ${info.requestId}]`,
      { status: info.status, requestId: info.requestId, location: info.location },
    );
    this.name = 'SvcRedirectError';
    this.status = info.status;
    this.requestId = info.requestId;
    this.location = info.location;
    this.method = info.method;
    this.url = info.url;
  }
}

/**
 * The request could not be built or handed to the network (an invalid header value, say). Its cause's message is
 * never copied: Node's and undici's header validation quote the value, which may be a token.
 * @example err.code === 'SEND_REQUEST'
 */
export class SvcRequestError extends SvcIngestError {
  readonly requestId: string;
  constructor(info: RequestInfo, cause: unknown) {
    const what = cause instanceof Error ? cause.name : typeof cause;
    super(
      'SEND_REQUEST',
      `${info.method} ${info.url} could not be sent: the request was refused before it left (${what}; detail not shown, it may quote a header value) [requestId ${info.requestId}]`,
      { requestId: info.requestId },
    );
    this.name = 'SvcRequestError';
    this.requestId = info.requestId;
  }
}

/**
 * The origin a Location header points to, resolved against the request URL; never its path or query.
 * @example redirectOrigin('http://evil.example:8080/x?token=1', 'https://svc.example/v2') === 'http://evil.example:8080'
 */
export function redirectOrigin(location: string | null, requestUrl: string): string {
  if (location === null || location.trim() === '') return '(no Location header)';
  try {
    const u = new URL(location, requestUrl);
    return u.origin !== 'null' ? u.origin : `${u.protocol} (not an http URL)`;
  } catch {
    return '(an unparsable Location)';
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

/** The chain of causes of an error (at most 6 deep), outermost first. */
function causeChain(err: unknown): unknown[] {
  const chain: unknown[] = [];
  let e = err;
  while (e !== undefined && e !== null && chain.length < 6) {
    chain.push(e);
    e = typeof e === 'object' ? (e as { cause?: unknown }).cause : undefined;
  }
  return chain;
}

function codeOf(e: unknown): string {
  return e !== null && typeof e === 'object' && typeof (e as { code?: unknown }).code === 'string'
    ? (e as { code: string }).code
    : '';
}

/** Errno and TLS codes that mean no connection was made: refused, unreachable, DNS, TLS handshake or verification. */
const CONNECTION_CODE =
  /^(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|EAI_NONAME|EAI_FAIL|EAI_NODATA|EHOSTUNREACH|ENETUNREACH|EHOSTDOWN|ENETDOWN|EADDRNOTAVAIL|UND_ERR_CONNECT_TIMEOUT|EPROTO|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|CERT_.*|UNABLE_TO_.*|ERR_TLS_.*|ERR_SSL_.*|ERR_OSSL_.*)$/;

/**
 * True when a fetch failure happened before any connection carried the request (see CONNECTION_CODE).
 * @example isConnectionFailure(fetchFailedWith('ECONNREFUSED')) === true
 */
export function isConnectionFailure(err: unknown): boolean {
  return causeChain(err).some((e) => CONNECTION_CODE.test(codeOf(e)));
}

/**
 * The first errno / TLS code in an error's cause chain, or '' when there is none.
 * @example failureCode(fetchFailedWith('ECONNREFUSED')) === 'ECONNREFUSED'
 */
export function failureCode(err: unknown): string {
  for (const e of causeChain(err)) {
    const code = codeOf(e);
    if (code !== '') return code;
  }
  return '';
}

/**
 * A network failure in words. Messages are copied only from errors that come from the network stack (system
 * errors with a syscall, TLS errors, undici's socket errors, fetch's own 'fetch failed'): other errors (an invalid
 * header, say) may quote a value, so only their name and code are shown.
 */
function describeCause(cause: unknown): string {
  const parts: string[] = [];
  for (const e of causeChain(cause)) {
    if (!(e instanceof Error)) {
      if (parts.length === 0) parts.push(typeof e);
      continue;
    }
    const code = codeOf(e);
    const fromNetwork =
      'syscall' in e ||
      CONNECTION_CODE.test(code) ||
      /^(UND_ERR_SOCKET|UND_ERR_CLOSED|ECONNRESET|EPIPE|ETIMEDOUT|UND_ERR_HEADERS_TIMEOUT|UND_ERR_BODY_TIMEOUT)$/.test(
        code,
      ) ||
      /^(fetch failed|terminated|other side closed)$/.test(e.message);
    const text = fromNetwork ? e.message.replace(/[\r\n]+/g, ' ') : e.name;
    for (const p of [text, code]) if (p && !parts.includes(p)) parts.push(p);
  }
  return parts.join(': ') || 'unknown';
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

/** What kept a request from being answered, in a few words for an operator. */
function unavailableReason(err: SvcNetworkError | SvcTimeoutError): string {
  if (err instanceof SvcTimeoutError) return `no answer within ${err.timeoutMs} ms`;
  const code = failureCode(err.cause);
  if (code === 'ECONNREFUSED') return 'connection refused (ECONNREFUSED)';
  if (/^(ENOTFOUND|EAI_)/.test(code)) return `host name not found (${code})`;
  if (/^(EHOSTUNREACH|ENETUNREACH|EHOSTDOWN|ENETDOWN|EADDRNOTAVAIL)$/.test(code))
    return `unreachable (${code})`;
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return `connect timed out (${code})`;
  if (err.connection) return `TLS handshake or certificate verification failed (${code})`;
  return err.message.replace(`${err.method} ${err.url} `, '').replace(/ \[requestId [^\]]*\]$/, '');
}

/**
 * SEND_UNAVAILABLE for a request that got no answer: names the URL (origin and path; the base URL carries no query
 * or credentials) and why. Exit status 5.
 * @example unavailableError(err).message // 'service unavailable: HEAD https://svc.example/v2/data/transactions: connection refused (ECONNREFUSED)'
 */
export function unavailableError(err: SvcNetworkError | SvcTimeoutError): SvcIngestError {
  const u = new URL(err.url);
  return new SvcIngestError(
    'SEND_UNAVAILABLE',
    `service unavailable: ${err.method} ${u.origin}${u.pathname}: ${unavailableReason(err)}`,
    { requestId: err.requestId },
  );
}
