// ky's `fetch`: one undici dispatch per call, answered with a standard Response whose body streams as it arrives.
import type { Dispatcher } from 'undici';
import { holdBody, releaseBody, utf8 } from './body.ts';

/** Statuses whose Response must have no body (the Response constructor refuses one). */
export const NULL_BODY_STATUS = new Set([101, 103, 204, 205, 304]);

/** Response body chunks queued before the socket is paused (the consumer's reads resume it). */
const QUEUED_CHUNKS = 16;

/**
 * The fetch option (an option ky does not know, so ky hands it to `fetch(request, init)` as it is) carrying a body
 * already prepared by the caller: a string or bytes that undici writes as they are. ky's Request then carries no
 * body, so the string is not copied into a Request stream, read back and encoded again per call.
 * @example await kyInstance.post(path, { headers: { 'content-type': 'application/json' }, [PREPARED_BODY]: json })
 */
export const PREPARED_BODY = 'svcPreparedBody';

/**
 * The fetch option carrying a signal for the whole exchange (ky does not know it either, so it reaches `fetch` as it
 * is): its abort rejects the call before the answer, or errors the answer's body after, with the signal's reason, as
 * an abort of the Request's signal does. Given here rather than as ky's `signal`, ky does not join it to its own
 * (AbortSignal.any: a composite signal, weak references and listeners per call) and the Request does not follow it.
 * @example await kyInstance.post(path, { [EXCHANGE_SIGNAL]: startDeadline(30_000).signal })
 */
export const EXCHANGE_SIGNAL = 'svcExchangeSignal';

function exchangeSignal(init: RequestInit | undefined): AbortSignal | undefined {
  const s = (init as Record<string, unknown> | undefined)?.[EXCHANGE_SIGNAL];
  return s instanceof AbortSignal ? s : undefined;
}

/** The prepared body handed in `init`, when there is one (a string encoded to UTF-8 bytes). */
function preparedBody(init: RequestInit | undefined): Uint8Array | undefined {
  const b = (init as Record<string, unknown> | undefined)?.[PREPARED_BODY];
  if (typeof b === 'string') return utf8(b);
  return b instanceof Uint8Array ? b : undefined;
}

/**
 * The body of ky's Request as bytes. Read with a reader whose lock is released afterwards: ky cancels the request
 * body when the call ends, and cancelling a stream still locked by a reader fails with an error (~30 µs each).
 */
export async function requestBody(req: Request): Promise<Uint8Array | null> {
  const stream = req.body;
  if (stream === null) return null;
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  for (;;) {
    const r = await reader.read();
    if (r.done) break;
    chunks.push(r.value);
  }
  reader.releaseLock();
  return chunks.length === 1 ? (chunks[0] as Uint8Array) : Buffer.concat(chunks);
}

/** A Request's headers as the plain object undici takes. */
export function requestHeaders(h: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of h) out[name] = value;
  return out;
}

/** undici's parsed response headers as a Headers object (a repeated header keeps each value). */
export function responseHeaders(raw: Record<string, string | string[] | undefined>): Headers {
  const h = new Headers();
  for (const name in raw) {
    const v = raw[name];
    if (v === undefined) continue;
    if (typeof v === 'string') h.append(name, v);
    else for (const x of v) h.append(name, x);
  }
  return h;
}

/** The reason a signal was aborted with, as the Error undici's controller wants. */
function abortError(signal: AbortSignal): Error {
  return signal.reason instanceof Error
    ? signal.reason
    : new DOMException('This operation was aborted', 'AbortError');
}

/** What fetch rejects with when no answer came: ky turns it into its NetworkError, the cause keeps the errno. */
function fetchFailed(cause: unknown): TypeError {
  return new TypeError('fetch failed', { cause });
}

/**
 * A `fetch` for ky on an undici Dispatcher (an Agent: keep-alive, the connection cap per origin and the TLS
 * material live there). It behaves as undici's fetch does where the client relies on it:
 * - redirects are never followed: a 3xx is returned as it came, Location included (as `redirect: 'manual'`);
 * - no answer (refused, reset, TLS failure) rejects with TypeError('fetch failed', { cause }) and the cause's code;
 * - an abort of the Request's signal (ky's timeout, the caller's signal) rejects with the signal's reason, before
 *   or after the headers; a connection lost in the middle of the body errors the body with TypeError('terminated').
 * - a body in the PREPARED_BODY option is sent instead of the Request's (ky's Request then has none);
 * - a signal in the EXCHANGE_SIGNAL option aborts the call as the Request's own signal does.
 * What it leaves out: no decompression (it sends no accept-encoding, so a server has no reason to compress), no
 * cookies, no cache — the service uses none of them.
 * @example const fetch = dispatcherFetch(new Agent({ connections: 8 })); ky.create({ fetch })
 */
export function dispatcherFetch(dispatcher: Dispatcher): typeof fetch {
  // The last URL and its parts: a send posts to the same URL every time.
  let lastUrl = '';
  let lastOrigin = '';
  let lastPath = '';
  return async (input, init) => {
    const req = input instanceof Request ? input : new Request(input, init);
    const reqSignal = req.signal;
    const exchange = exchangeSignal(init);
    /** The signal that aborted the call (the exchange's first: it is the one the caller set), if one did. */
    const aborted = (): AbortSignal | undefined =>
      exchange?.aborted ? exchange : reqSignal.aborted ? reqSignal : undefined;
    const throwIfAborted = (): void => {
      const a = aborted();
      if (a) throw a.reason;
    };
    throwIfAborted();
    const href = req.url;
    if (href !== lastUrl) {
      const url = new URL(href);
      lastOrigin = url.origin;
      lastPath = url.pathname + url.search;
      lastUrl = href;
    }
    const origin = lastOrigin;
    const path = lastPath;
    const method = req.method;
    // A prepared body goes to undici as it is; otherwise the Request's own body is read.
    let body: Uint8Array | null | undefined = preparedBody(init);
    if (body === undefined) {
      body = await requestBody(req);
      throwIfAborted();
    }
    // The body's slab is held until undici is done with the request (onResponseEnd, or onResponseError: on an abort
    // undici calls it and destroys the socket in the same synchronous call, so nothing of the body is written after),
    // not until the caller has its answer: a stop or a timeout can end the call while the request is still writing
    // the body, and body.ts reuses a slab once nothing holds it. Left open: a server that answers in full before it
    // has taken the body ends the request while the part of the body the kernel has not accepted yet is still queued
    // in the socket (undici destroys the socket then for a streamed body, not for bytes), and that part is written
    // from the slab after its release. It is the rest of a body already answered; a ≤256 KB body fits the
    // kernel's send buffer as soon as it has grown (loopback: every body taken at once, measured with ss).
    let held = body;
    if (held !== null) holdBody(held);
    const over = (): void => {
      if (held !== null) releaseBody(held);
      held = null;
    };
    return new Promise<Response>((resolve, reject) => {
      let controller: Dispatcher.DispatchController | undefined;
      let sink: ReadableStreamDefaultController<Uint8Array> | undefined;
      let answered = false;
      const onAbort = (): void => {
        const a = aborted();
        if (a) controller?.abort(abortError(a));
      };
      const settle = (): void => {
        reqSignal.removeEventListener('abort', onAbort);
        exchange?.removeEventListener('abort', onAbort);
      };
      reqSignal.addEventListener('abort', onAbort, { once: true });
      exchange?.addEventListener('abort', onAbort, { once: true });
      const handler: Dispatcher.DispatchHandler = {
        onRequestStart(c) {
          controller = c;
          const a = aborted();
          if (a) c.abort(abortError(a));
        },
        onResponseStart(c, status, headers, statusText) {
          if (status < 200) return;
          let res: Response;
          try {
            res = answerOf(c, method, status, headers, statusText, (s) => (sink = s), settle);
          } catch (err) {
            // A status or header the Response cannot carry (a 6xx, say): as undici's fetch, no usable answer.
            settle();
            c.abort(err as Error);
            reject(fetchFailed(err));
            return;
          }
          answered = true;
          resolve(res);
        },
        onResponseData(c, chunk) {
          if (!sink) return;
          sink.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
          if ((sink.desiredSize ?? 1) <= 0) c.pause();
        },
        onResponseEnd() {
          over();
          settle();
          sink?.close();
        },
        onResponseError(_c, err) {
          over();
          settle();
          const a = aborted();
          if (!answered) reject(a ? a.reason : fetchFailed(err));
          else sink?.error(a ? a.reason : new TypeError('terminated', { cause: err }));
        },
      };
      try {
        dispatcher.dispatch(
          {
            origin,
            path,
            method: method as Dispatcher.HttpMethod,
            headers: requestHeaders(req.headers),
            body,
          },
          handler,
        );
      } catch (err) {
        over();
        settle();
        reject(fetchFailed(err));
      }
    });
  };
}

/**
 * The Response of an answer's head: its body a stream that undici's chunks are queued into (undici paused while
 * the queue is full, resumed on a pull); cancelling it aborts the request.
 */
function answerOf(
  c: Dispatcher.DispatchController,
  method: string,
  status: number,
  headers: Record<string, string | string[] | undefined>,
  statusText: string | undefined,
  sinkTo: (s: ReadableStreamDefaultController<Uint8Array>) => void,
  settle: () => void,
): Response {
  const empty = method === 'HEAD' || NULL_BODY_STATUS.has(status);
  const stream = empty
    ? null
    : new ReadableStream<Uint8Array>(
        {
          start(s) {
            sinkTo(s);
          },
          pull() {
            c.resume();
          },
          cancel(reason) {
            settle();
            c.abort(reason instanceof Error ? reason : new Error('response body cancelled'));
          },
        },
        { highWaterMark: QUEUED_CHUNKS },
      );
  return new Response(stream, {
    status,
    statusText: statusText ?? '',
    headers: responseHeaders(headers),
  });
}
