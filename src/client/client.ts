// The shared service client: one method per endpoint, limits checked before sending, typed errors, no retry.
import { randomUUID } from 'node:crypto';
import type { HTTPError, Options } from 'ky';
import { readSecret } from '../config/secret.ts';
import type { Config } from '../config/types.ts';
import type { Logger } from '../log.ts';
import { guardedHeader, readAnswer } from '../mask/answer.ts';
import { maskDeep } from '../mask/index.ts';
import type { TransactionNotification } from '../model/transaction.ts';
import { type Answer, type Call, expectOk, isObject } from './answer.ts';
import { batchJson, type EncodedBatch, utf8 } from './body.ts';
import { checkTransactionCount } from './checks.ts';
import { startDeadline } from './deadline.ts';
import { EXCHANGE_SIGNAL, PREPARED_BODY } from './dispatch-fetch.ts';
import { createEnumWarner } from './enums.ts';
import {
  parseRetryAfter,
  type RequestInfo,
  redirectOrigin,
  SvcHttpError,
  SvcNetworkError,
  SvcRedirectError,
  SvcRequestError,
  SvcTimeoutError,
  unavailableError,
} from './errors.ts';
import { lookupCalls, type ServiceLookups, sessionProvider } from './lookups.ts';
import { type ErrorEnvelope, INSTITUTION_ID_HEADER, PATHS, REQUEST_ID_HEADER } from './models.ts';
import { createSessionCache, type SessionCache } from './session.ts';
import { createTransport, kyModule, type TransportOptions } from './transport.ts';

/**
 * The service, one method per endpoint. Never retries (callers do), except one session re-start on a 401 from
 * getRedemptions.
 * @example const client = createClient(cfg, { logger }); const { requestId } = await client.postTransactions(batch, { requestId: randomUUID() }); await client.close()
 */
export interface SvcClient extends ServiceLookups {
  /** POST /v2/data/transactions; 1..50 items (checked before sending, SEND_LIMIT error naming the limit). Resolves only on HTTP 200 with a requestId. */
  postTransactions(
    transactions: TransactionNotification[],
    opts: { requestId: string; signal?: AbortSignal },
  ): Promise<{ requestId: string; httpStatus: number }>;
  /** postTransactions with each transaction serialised (JSON.stringify), or the body encoded (encodeRecords). */
  postTransactionsJson(
    transactions: readonly string[] | EncodedBatch,
    opts: { requestId: string; signal?: AbortSignal },
  ): Promise<{ requestId: string; httpStatus: number }>;
  /** Starts a new session for the customer (through the configured provider) and caches its token. */
  startSession(sourceCustomerId: string): Promise<string>;
  /**
   * Checks that the service answers, through the same transport as the batches (mutual TLS included), without
   * sending data: `HEAD /v2/data/transactions`, where any HTTP status but a 3xx counts as an answer.
   * Throws SEND_UNAVAILABLE (exit 5) when no connection or answer comes, SEND_REDIRECT (exit 1) on a 3xx.
   */
  checkService(signal?: AbortSignal): Promise<void>;
  close(): Promise<void>;
}

/** Options of createClient. */
export interface ClientOptions extends TransportOptions {
  logger?: Logger;
}

const SECRET_PARAM = /token|key|secret|sig|pass|auth|session/i;

/** The URL for messages and logs: query values that could be secrets are masked. */
export function displayUrl(url: string): string {
  try {
    const u = new URL(url);
    for (const k of [...u.searchParams.keys()]) if (SECRET_PARAM.test(k)) u.searchParams.set(k, '***');
    return u.toString();
  } catch {
    return url.split('?')[0] ?? url;
  }
}

export function createClient(config: Config, opts: ClientOptions = {}): SvcClient {
  const { logger } = opts;
  const token = readSecret(config);
  const authValue =
    token === undefined ? undefined : config.auth.scheme ? `${config.auth.scheme} ${token}` : token;
  // The same on every call: in ky's instance, so a call's options hold only what changes (measured, issue 14).
  const constant: Record<string, string> = {};
  if (authValue) constant[config.auth.header] = authValue;
  if (config.institutionId) constant[INSTITUTION_ID_HEADER] = config.institutionId;
  const transport = createTransport(config, opts, constant);
  const warn = createEnumWarner(logger);

  // The last URL called and its display form: a send calls the same URL every time (parsing it costs ~10 µs).
  let lastUrl = '';
  let lastDisplay = '';

  async function call(c: Call): Promise<Answer> {
    const requestId = c.requestId ?? randomUUID();
    const url = `${transport.prefix}${c.path}`;
    if (url !== lastUrl) {
      lastDisplay = displayUrl(url);
      lastUrl = url;
    }
    const info: RequestInfo = { method: c.method, url: lastDisplay, requestId };
    if (c.signal?.aborted) throw new SvcNetworkError({ ...info, aborted: true }, { cause: c.signal.reason });
    const headers: Record<string, string> = { [REQUEST_ID_HEADER]: requestId, ...c.headers };
    if (c.body !== undefined) headers['content-type'] = 'application/json';
    // One deadline for the whole exchange, body included (ky's timeout covers the headers only); it follows the
    // caller's signal too (mapError tells the two apart by the caller's signal).
    const timer = startDeadline(config.timeoutMs, c.signal);
    const deadline = timer.signal;
    const started = performance.now();
    try {
      // Only the keys this call uses: ky merges every key it is given, undefined ones too.
      const options: Options & Record<string, unknown> = { method: c.method, headers };
      // Our fetch takes the signal and a prepared body as they are (ky then joins no signal to its own, and its Request
      // carries no body); a fetch given in options gets them through ky's signal and the Request.
      const own = transport.ownOptions;
      // With our fetch the exchange's deadline bounds the whole call, so ky's own timeout (a timer and a promise per
      // call around the same bound, the headers only) is off; a fetch given in options keeps it.
      if (own) {
        options[EXCHANGE_SIGNAL] = deadline;
        options.timeout = false;
      } else options.signal = deadline;
      if (c.body !== undefined) {
        if (own) options[PREPARED_BODY] = c.body;
        else options.body = c.body;
      } else if (c.json !== undefined) options.json = c.json;
      if (c.searchParams !== undefined) options.searchParams = c.searchParams;
      const res = await transport.ky(c.path, options);
      const body = readAnswer(await res.text(), c.guard !== false);
      const answered = isObject(body) && typeof body.requestId === 'string' ? body.requestId : undefined;
      logger?.debug(
        {
          method: c.method,
          url: info.url,
          status: res.status,
          requestId,
          ms: Math.round(performance.now() - started),
        },
        'http.response',
      );
      return {
        status: res.status,
        body,
        requestId: answered ?? guardedHeader(res.headers.get(REQUEST_ID_HEADER)) ?? requestId,
        info,
      };
    } catch (err) {
      const mapped = mapError(err, info, c.signal, deadline, config.timeoutMs);
      logger?.debug(
        {
          method: c.method,
          url: info.url,
          requestId,
          err: mapped.message,
          ms: Math.round(performance.now() - started),
        },
        'http.error',
      );
      throw mapped;
    } finally {
      timer.clear();
    }
  }

  const provider = sessionProvider(config, call);
  const sessions: SessionCache = createSessionCache(provider, {
    refreshBeforeMs: config.session.refreshBeforeMs,
    ...(logger ? { logger } : {}),
  });

  return {
    ...transactionCalls(call),
    ...lookupCalls(call, sessions, warn, logger),
    startSession: (sourceCustomerId) => sessions.renew(sourceCustomerId),

    async checkService(signal) {
      try {
        await call({ method: 'HEAD', path: PATHS.transactions, signal });
      } catch (err) {
        // Any status is an answer (405, 401, 404 …); a redirect means the base URL is wrong.
        if (err instanceof SvcHttpError) return;
        if (err instanceof SvcNetworkError || err instanceof SvcTimeoutError) throw unavailableError(err);
        throw err;
      }
    },

    close: () => transport.close(),
  };
}

/** A failed exchange as the client's own error: an HTTP status, a redirect, the caller's abort, a timeout, the network. */
function mapError(
  err: unknown,
  info: RequestInfo,
  userSignal: AbortSignal | undefined,
  deadline: AbortSignal,
  timeoutMs: number,
): Error {
  // ky's type guards, from the module the request itself loaded.
  const { isHTTPError, isNetworkError, isTimeoutError } = kyModule();
  if (isHTTPError(err)) {
    const e = err as HTTPError;
    const status = e.response.status;
    if (status >= 300 && status < 400) {
      return new SvcRedirectError({
        ...info,
        requestId: guardedHeader(e.response.headers.get(REQUEST_ID_HEADER)) ?? info.requestId,
        status,
        location: redirectOrigin(e.response.headers.get('location'), info.url),
      });
    }
    const data = typeof e.data === 'string' ? readAnswer(e.data) : maskDeep(e.data);
    const envelope = isObject(data) ? (data as ErrorEnvelope) : undefined;
    const requestId =
      (typeof envelope?.requestId === 'string' ? envelope.requestId : undefined) ??
      guardedHeader(e.response.headers.get(REQUEST_ID_HEADER)) ??
      info.requestId;
    const retryAfterMs = parseRetryAfter(e.response.headers.get('retry-after'));
    return new SvcHttpError(
      {
        ...info,
        requestId,
        status: e.response.status,
        ...(envelope ? { envelope } : {}),
        ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
      },
      // No ky error as cause: it holds the request, auth header included.
    );
  }
  if (userSignal?.aborted)
    return new SvcNetworkError({ ...info, aborted: true }, { cause: userSignal.reason });
  if (isTimeoutError(err) || deadline.aborted) return new SvcTimeoutError({ ...info, timeoutMs });
  if (isNetworkError(err)) return new SvcNetworkError(info, { cause: err.cause });
  // The connection was lost while the answer's body was being read (fetch's TypeError('terminated')): no answer.
  if (err instanceof TypeError && err.message === 'terminated')
    return new SvcNetworkError(info, { cause: err });
  // A TypeError that is not a network failure: the request could not even be built (Headers refused a value).
  if (err instanceof TypeError) return new SvcRequestError(info, err);
  return new SvcNetworkError(info, { cause: err });
}

/** POST /v2/data/transactions, from transactions or their serialised (or encoded) form. */
function transactionCalls(
  call: (c: Call) => Promise<Answer>,
): Pick<SvcClient, 'postTransactions' | 'postTransactionsJson'> {
  return {
    async postTransactions(transactions, o) {
      checkTransactionCount(transactions.length);
      return this.postTransactionsJson(
        transactions.map((t) => JSON.stringify(t)),
        o,
      );
    },

    async postTransactionsJson(transactions, o) {
      const encoded = 'bytes' in transactions;
      checkTransactionCount(encoded ? transactions.count : transactions.length);
      const a = await call({
        method: 'POST',
        path: PATHS.transactions,
        requestId: o.requestId,
        // The body is put together from the serialised records (no second JSON.stringify of the batch) and encoded
        // at once: the call then holds bytes in the shared slab while it waits, not a ~40 KB string on the heap that
        // survives scavenges into the old generation (11.5 KB promoted a request before, measured with --trace-gc-nvp).
        body: encoded ? transactions.bytes : utf8(batchJson(transactions)),
        ...(o.signal ? { signal: o.signal } : {}),
      });
      expectOk(a, [200], (b) =>
        isObject(b) && typeof b.requestId === 'string' && b.requestId !== ''
          ? undefined
          : 'no requestId in the answer',
      );
      return { requestId: (a.body as { requestId: string }).requestId, httpStatus: a.status };
    },
  };
}
