// Candidate `fetch` functions for ky (the transport beneath the client), measured by test/bench/transport.ts.
// Each takes the global Request ky builds and returns a standard Response; network failures reject with
// TypeError('fetch failed', { cause }) as fetch does, so ky and the client classify them the same way.
import http from 'node:http';
import https from 'node:https';
import { Agent, fetch as undiciFetch } from 'undici';
import {
  dispatcherFetch,
  NULL_BODY_STATUS,
  requestBody,
  requestHeaders,
  responseHeaders,
} from '../../src/client/dispatch-fetch.ts';

export type FetchFn = (input: Request | string | URL, init?: RequestInit) => Promise<Response>;

/** What a candidate needs: where its sockets go and how many per origin. */
export interface CandidateOptions {
  connections: number;
  tls?: { cert?: Buffer; key?: Buffer; ca?: Buffer; passphrase?: string };
}

export interface Candidate {
  fetch: FetchFn;
  /** Takes the PREPARED_BODY and EXCHANGE_SIGNAL options (src/client/dispatch-fetch.ts). */
  ownOptions?: boolean;
  close(): Promise<void>;
}

function requestOf(input: Request | string | URL, init?: RequestInit): Request {
  return input instanceof Request ? input : new Request(input, init);
}

/** The Request's body as bytes or undefined (read as src/client/dispatch-fetch.ts reads it: lock released). */
async function bodyBytes(req: Request): Promise<Uint8Array | undefined> {
  return (await requestBody(req)) ?? undefined;
}

function undiciAgent(o: CandidateOptions): Agent {
  return new Agent({
    connections: o.connections,
    keepAliveTimeout: 10_000,
    keepAliveMaxTimeout: 60_000,
    connect: { ...o.tls },
  });
}

/** Today's adapter: read the Request back into an ArrayBuffer and hand the parts to undici's own fetch. */
export function current(o: CandidateOptions): Candidate {
  const agent = undiciAgent(o);
  return {
    fetch: async (input, init) => {
      const req = requestOf(input, init);
      const body = req.method === 'GET' || req.method === 'HEAD' ? undefined : await req.arrayBuffer();
      const res = await undiciFetch(req.url, {
        method: req.method,
        headers: [...req.headers],
        body,
        signal: req.signal,
        redirect: 'manual',
        dispatcher: agent,
      });
      return res as unknown as Response;
    },
    close: () => agent.close(),
  };
}

/** Node's own fetch, given ky's Request as it is, with the npm undici Agent as its dispatcher. */
export function globalFetch(o: CandidateOptions): Candidate {
  const agent = undiciAgent(o);
  return {
    fetch: (input, init) =>
      globalThis.fetch(input, { ...init, dispatcher: agent } as RequestInit & { dispatcher: Agent }),
    close: () => agent.close(),
  };
}

/** undici's Agent.request(); the body (a Node Readable) becomes the Response's stream. */
export function undiciRequest(o: CandidateOptions): Candidate {
  const agent = undiciAgent(o);
  return {
    fetch: async (input, init) => {
      const req = requestOf(input, init);
      const url = new URL(req.url);
      const body = await bodyBytes(req);
      let res: Awaited<ReturnType<Agent['request']>>;
      try {
        res = await agent.request({
          origin: url.origin,
          path: url.pathname + url.search,
          method: req.method as 'GET',
          headers: requestHeaders(req.headers),
          body,
          signal: req.signal,
        });
      } catch (err) {
        if (req.signal.aborted) throw req.signal.reason;
        throw new TypeError('fetch failed', { cause: err });
      }
      const empty = req.method === 'HEAD' || NULL_BODY_STATUS.has(res.statusCode);
      if (empty) res.body.resume();
      return new Response(empty ? null : (res.body as unknown as ReadableStream), {
        status: res.statusCode,
        headers: responseHeaders(res.headers),
      });
    },
    close: () => agent.close(),
  };
}

/** undici's Agent.dispatch() with a handler feeding a web ReadableStream: what src/client/transport.ts uses. */
export function undiciDispatch(o: CandidateOptions): Candidate {
  const agent = undiciAgent(o);
  return { fetch: dispatcherFetch(agent), ownOptions: true, close: () => agent.close() };
}

/** node:http / node:https with a keep-alive Agent capped at `connections` sockets. */
export function nodeHttp(o: CandidateOptions): Candidate {
  const agentOpts = {
    keepAlive: true,
    maxSockets: o.connections,
    keepAliveMsecs: 10_000,
    scheduling: 'lifo' as const,
  };
  const httpAgent = new http.Agent(agentOpts);
  const httpsAgent = new https.Agent({ ...agentOpts, ...o.tls });
  return {
    fetch: async (input, init) => {
      const req = requestOf(input, init);
      const signal = req.signal;
      signal.throwIfAborted();
      const url = new URL(req.url);
      const body = await bodyBytes(req);
      const headers = requestHeaders(req.headers);
      if (body) headers['content-length'] = String(body.byteLength);
      const secure = url.protocol === 'https:';
      return new Promise<Response>((resolve, reject) => {
        let answered = false;
        let sink: ReadableStreamDefaultController<Uint8Array> | undefined;
        const r = (secure ? https : http).request(
          {
            agent: secure ? httpsAgent : httpAgent,
            protocol: url.protocol,
            hostname: url.hostname.replace(/^\[|\]$/g, ''),
            port: url.port,
            path: url.pathname + url.search,
            method: req.method,
            headers,
            signal,
          },
          (res) => {
            answered = true;
            const status = res.statusCode ?? 0;
            const empty = req.method === 'HEAD' || NULL_BODY_STATUS.has(status);
            if (empty) {
              res.resume();
              resolve(new Response(null, { status, headers: responseHeaders(res.headers) }));
              return;
            }
            const stream = new ReadableStream<Uint8Array>({
              start(s) {
                sink = s;
              },
              pull() {
                res.resume();
              },
              cancel() {
                res.destroy();
              },
            });
            res.on('data', (chunk: Buffer) => {
              sink?.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
              if ((sink?.desiredSize ?? 1) <= 0) res.pause();
            });
            res.on('end', () => sink?.close());
            res.on('error', (err) =>
              sink?.error(signal.aborted ? signal.reason : new TypeError('terminated', { cause: err })),
            );
            resolve(
              new Response(stream, {
                status,
                statusText: res.statusMessage ?? '',
                headers: responseHeaders(res.headers),
              }),
            );
          },
        );
        r.on('error', (err) => {
          if (!answered)
            reject(signal.aborted ? signal.reason : new TypeError('fetch failed', { cause: err }));
        });
        r.end(body);
      });
    },
    close: async () => {
      httpAgent.destroy();
      httpsAgent.destroy();
    },
  };
}

export const CANDIDATES: Record<string, (o: CandidateOptions) => Candidate> = {
  current,
  'global-fetch': globalFetch,
  'undici-request': undiciRequest,
  'undici-dispatch': undiciDispatch,
  'node-http': nodeHttp,
};
