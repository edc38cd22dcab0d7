// The transport beneath ky (src/client/transport.ts, dispatch-fetch.ts) over real HTTP: purpose-built node:http
// servers on 127.0.0.1 and the simulator. Each requirement of the fetch it hands ky: connection cap, keep-alive,
// timeouts, aborts, redirects not followed, streamed bodies, ky's hooks, and the error shapes the client classifies.
import { getEventListeners, once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { isNetworkError, isTimeoutError, type Options } from 'ky';
import { Agent } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startDeadline } from '../../src/client/deadline.ts';
import { dispatcherFetch, EXCHANGE_SIGNAL, PREPARED_BODY } from '../../src/client/dispatch-fetch.ts';
import { isConnectionFailure, SvcNetworkError, SvcTimeoutError } from '../../src/client/errors.ts';
import { createClient } from '../../src/client/index.ts';
import { createTransport, type Transport } from '../../src/client/transport.ts';
import { type Simulator, startSimulator } from '../../src/simulator/index.ts';
import { configFor, makeTransactions, rejection } from './fixtures.ts';

/** A node:http server that records its sockets, the requests in flight and the most at once. */
interface Probe {
  url: string;
  sockets: Set<Socket>;
  /** Every socket ever accepted (keep-alive reuse shows as fewer sockets than requests). */
  accepted: number;
  requests: number;
  inFlight: number;
  maxInFlight: number;
  /** Sockets closed by the peer or by us. */
  closed: number;
  server: Server;
  close(): Promise<void>;
}

async function probe(
  handle: (req: IncomingMessage, res: ServerResponse, body: string) => void,
): Promise<Probe> {
  const p = {
    sockets: new Set<Socket>(),
    accepted: 0,
    requests: 0,
    inFlight: 0,
    maxInFlight: 0,
    closed: 0,
  } as Probe;
  const server = createServer((req, res) => {
    p.requests++;
    p.inFlight++;
    p.maxInFlight = Math.max(p.maxInFlight, p.inFlight);
    res.once('close', () => p.inFlight--);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handle(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  server.on('connection', (s: Socket) => {
    p.accepted++;
    p.sockets.add(s);
    s.once('close', () => {
      p.closed++;
      p.sockets.delete(s);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  p.server = server;
  p.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  p.close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return p;
}

const ok = (res: ServerResponse, body: unknown = { requestId: 'r' }) =>
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));

const open: Array<{ close(): Promise<unknown> }> = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((o) => o.close()));
});

function transportFor(
  url: string,
  connections: number,
  flags: Parameters<typeof configFor>[1] = {},
): Transport {
  const t = createTransport(configFor(url, flags), { connections });
  open.push(t);
  return t;
}

describe('connections', () => {
  it('never opens more sockets per origin than the cap, and reuses them (keep-alive)', async () => {
    const server = await probe((_req, res) => setTimeout(() => ok(res), 30));
    open.push(server);
    const t = transportFor(server.url, 3);
    const wave = () =>
      Promise.all(Array.from({ length: 12 }, () => t.ky.post('v2/data/transactions', { json: {} })));
    await wave();
    expect(server.maxInFlight).toBe(3);
    expect(server.accepted).toBe(3);
    await wave();
    // The second wave rode on the same three sockets.
    expect(server.requests).toBe(24);
    expect(server.accepted).toBe(3);
    expect(server.closed).toBe(0);
  });

  it('sends the body with a content-length, the headers ky built, and no accept-encoding', async () => {
    let seen: { headers: IncomingMessage['headers']; body: string; method: string } | undefined;
    const server = await probe((req, res, body) => {
      seen = { headers: req.headers, body, method: req.method ?? '' };
      ok(res);
    });
    open.push(server);
    const t = transportFor(server.url, 1);
    const body = JSON.stringify({ transactions: [{ transactionId: 'é-1' }] });
    const res = await t.ky.post('v2/data/transactions', {
      body,
      headers: { 'content-type': 'application/json', 'x-request-id': 'h-1' },
    });
    expect(await res.json()).toEqual({ requestId: 'r' });
    expect(seen?.method).toBe('POST');
    expect(seen?.body).toBe(body);
    expect(seen?.headers['content-length']).toBe(String(Buffer.byteLength(body)));
    expect(seen?.headers['x-request-id']).toBe('h-1');
    expect(seen?.headers['user-agent']).toMatch(/^svc-ingest\//);
    expect(seen?.headers.accept).toBe('application/json');
    expect(seen?.headers['accept-encoding']).toBeUndefined();
  });

  it('a prepared body (string or bytes) in the PREPARED_BODY option is sent as it is, with its UTF-8 length', async () => {
    const seen: Array<{ headers: IncomingMessage['headers']; body: string }> = [];
    const server = await probe((req, res, body) => {
      seen.push({ headers: req.headers, body });
      ok(res);
    });
    open.push(server);
    const t = transportFor(server.url, 1);
    expect(t.ownOptions).toBe(true);
    const body = JSON.stringify({ transactions: [{ transactionId: 'é-1', merchant: 'Café ☕' }] });
    const headers = { 'content-type': 'application/json' };
    for (const prepared of [body, new TextEncoder().encode(body)]) {
      const res = await t.ky.post('v2/data/transactions', { headers, [PREPARED_BODY]: prepared } as Options);
      expect(await res.json()).toEqual({ requestId: 'r' });
    }
    expect(seen.map((s) => s.body)).toEqual([body, body]);
    for (const s of seen) {
      expect(s.headers['content-length']).toBe(String(Buffer.byteLength(body)));
      expect(s.headers['content-type']).toBe('application/json');
    }
  });

  it('the client hands a fetch given in options its body in the Request, and ours in the option', async () => {
    const server = await probe((_req, res, body) => ok(res, { requestId: `len-${Buffer.byteLength(body)}` }));
    open.push(server);
    const seen: Array<{ requestBody: boolean; option: boolean }> = [];
    const agent = new Agent({ connections: 1 });
    open.push(agent);
    const ours = dispatcherFetch(agent);
    const spy = ((input: Request, init?: RequestInit) => {
      seen.push({
        requestBody: input.body !== null,
        option: (init as Record<string, unknown> | undefined)?.[PREPARED_BODY] !== undefined,
      });
      return ours(input, init);
    }) as typeof fetch;
    const txs = makeTransactions(2).map((x) => JSON.stringify(x));
    const expected = `len-${Buffer.byteLength(`{"transactions":[${txs.join(',')}]}`)}`;
    for (const takes of [false, true]) {
      const client = createClient(configFor(server.url), { fetch: spy, fetchTakesOwnOptions: takes });
      open.push(client);
      expect(await client.postTransactionsJson(txs, { requestId: 'q' })).toEqual({
        requestId: expected,
        httpStatus: 200,
      });
    }
    expect(seen).toEqual([
      { requestBody: true, option: false },
      { requestBody: false, option: true },
    ]);
  });
});

describe('timeouts and aborts', () => {
  it("ky's timeout: no headers within timeoutMs is ky's TimeoutError, and the socket is closed", async () => {
    const server = await probe(() => {}); // never answers
    open.push(server);
    const t = transportFor(server.url, 1, { timeoutMs: { value: '300', flag: '--timeout' } });
    const started = Date.now();
    const err = await rejection(t.ky.get('slow'));
    expect(isTimeoutError(err)).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(280);
    await waitFor(() => server.closed >= 1);
  });

  it('our own deadline covers the body: a body that trickles past timeoutMs is SvcTimeoutError', async () => {
    const server = await probe((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"requestId":'); // and the rest never comes
    });
    open.push(server);
    const client = createClient(configFor(server.url, { timeoutMs: { value: '300', flag: '--timeout' } }));
    open.push(client);
    const started = Date.now();
    const err = await rejection(client.postTransactions(makeTransactions(1), { requestId: 'slow-body' }));
    expect(err).toBeInstanceOf(SvcTimeoutError);
    expect((err as SvcTimeoutError).requestId).toBe('slow-body');
    expect(Date.now() - started).toBeLessThan(3000);
    await waitFor(() => server.closed >= 1);
  });

  it('a deadline aborts with a TimeoutError when its time is up, and never once cleared', async () => {
    const due = startDeadline(40);
    const cleared = startDeadline(40);
    cleared.clear();
    await new Promise((r) => setTimeout(r, 120));
    expect(due.signal.aborted).toBe(true);
    expect((due.signal.reason as DOMException).name).toBe('TimeoutError');
    expect(cleared.signal.aborted).toBe(false);
  });

  it("a deadline follows the caller's signal through one listener, taken off when cleared, without a leak warning", async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      const stop = new AbortController();
      // A send's concurrency of calls at once on its stop signal (an EventTarget warns past 10, an AbortSignal never).
      const calls = Array.from({ length: 64 }, () => startDeadline(10_000, stop.signal));
      expect(getEventListeners(stop.signal, 'abort')).toHaveLength(64);
      for (const d of calls.slice(1)) d.clear();
      expect(getEventListeners(stop.signal, 'abort')).toHaveLength(1);
      stop.abort(new Error('stopping'));
      const first = calls[0] as ReturnType<typeof startDeadline>;
      expect(first.signal.aborted).toBe(true);
      expect((first.signal.reason as Error).message).toBe('stopping');
      expect(calls[1]?.signal.aborted).toBe(false);
      first.clear();
      // Started after the caller's abort: aborted at once, with its reason.
      const late = startDeadline(10_000, stop.signal);
      expect((late.signal.reason as Error).message).toBe('stopping');
      late.clear();
      await new Promise((r) => setImmediate(r));
      expect(warnings.map((w) => w.name)).not.toContain('MaxListenersExceededWarning');
    } finally {
      process.off('warning', onWarning);
    }
  });

  it("the caller's abort before the answer rejects at once (AbortError) and closes that request's socket", async () => {
    const server = await probe(() => {});
    open.push(server);
    const client = createClient(configFor(server.url));
    open.push(client);
    const ac = new AbortController();
    const pending = rejection(
      client.postTransactions(makeTransactions(1), { requestId: 'ab-1', signal: ac.signal }),
    );
    await waitFor(() => server.requests === 1);
    ac.abort();
    const err = (await pending) as SvcNetworkError;
    expect(err).toBeInstanceOf(SvcNetworkError);
    expect(err.aborted).toBe(true);
    await waitFor(() => server.closed >= 1);
  });

  it('an abort after the answer changes nothing: the acknowledged call stays resolved and the socket stays open', async () => {
    const server = await probe((_req, res) => ok(res, { requestId: 'acked-1' }));
    open.push(server);
    const client = createClient(configFor(server.url));
    open.push(client);
    const ac = new AbortController();
    const res = await client.postTransactions(makeTransactions(2), {
      requestId: 'acked-1',
      signal: ac.signal,
    });
    ac.abort();
    expect(res).toEqual({ requestId: 'acked-1', httpStatus: 200 });
    await new Promise((r) => setTimeout(r, 50));
    expect(server.closed).toBe(0);
    // The kept-alive socket carries the next call.
    await client.postTransactions(makeTransactions(1), { requestId: 'acked-2' });
    expect(server.accepted).toBe(1);
  });

  it('an abort in the middle of the body errors the body read with the abort reason', async () => {
    const server = await probe((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('part one;');
    });
    open.push(server);
    const t = transportFor(server.url, 1);
    const ac = new AbortController();
    const res = await t.ky.get('stream', { signal: ac.signal, timeout: false });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    expect(Buffer.from(first.value as Uint8Array).toString()).toBe('part one;');
    ac.abort(new Error('stop now'));
    const err = await rejection(reader.read());
    expect(err.message).toBe('stop now');
    await waitFor(() => server.closed >= 1);
  });

  it('a signal in the EXCHANGE_SIGNAL option aborts as the Request signal does: before the answer, in the body, or before sending', async () => {
    let mode = 'silent';
    const server = await probe((_req, res) => {
      if (mode === 'silent') return;
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('part one;');
    });
    open.push(server);
    const t = transportFor(server.url, 1);
    // Before the answer: the call rejects with the signal's reason and the socket is closed.
    const before = new AbortController();
    const pending = rejection(
      t.ky.get('silent', { [EXCHANGE_SIGNAL]: before.signal, timeout: false } as Options),
    );
    await waitFor(() => server.requests === 1);
    before.abort(new Error('no more waiting'));
    expect((await pending).message).toBe('no more waiting');
    await waitFor(() => server.closed >= 1);
    // In the body: the read fails with the reason.
    mode = 'streaming';
    const inBody = new AbortController();
    const res = await t.ky.get('stream', { [EXCHANGE_SIGNAL]: inBody.signal, timeout: false } as Options);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    expect(Buffer.from((await reader.read()).value as Uint8Array).toString()).toBe('part one;');
    inBody.abort(new Error('stop now'));
    expect((await rejection(reader.read())).message).toBe('stop now');
    await waitFor(() => server.closed >= 2);
    // Aborted already: nothing is sent.
    const requests = server.requests;
    const err = await rejection(
      t.ky.get('never', { [EXCHANGE_SIGNAL]: AbortSignal.abort(new Error('too late')) } as Options),
    );
    expect(err.message).toBe('too late');
    expect(server.requests).toBe(requests);
  });
});

describe('answers', () => {
  it('a 3xx comes back as it came (status, Location) and is never followed', async () => {
    const target = await probe((_req, res) => ok(res));
    const redirector = await probe((_req, res) =>
      res.writeHead(307, { location: `${target.url}/elsewhere` }).end('moved'),
    );
    open.push(target, redirector);
    const t = transportFor(redirector.url, 1);
    const res = await t.ky.post('v2/data/transactions', { json: {}, throwHttpErrors: false });
    expect(res.status).toBe(307);
    expect(res.headers.get('location')).toBe(`${target.url}/elsewhere`);
    expect(await res.text()).toBe('moved');
    expect(target.requests).toBe(0);
  });

  it('streams the body as it arrives, and reads a large chunked body whole', async () => {
    let release: (() => void) | undefined;
    const big = 'x'.repeat(64 * 1024);
    const server = await probe((req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      if (req.url?.endsWith('/big')) {
        for (let i = 0; i < 80; i++) res.write(big); // 5 MiB in 64 KiB chunks
        res.end();
        return;
      }
      res.write('head;');
      release = () => res.end('tail');
    });
    open.push(server);
    const t = transportFor(server.url, 2);
    const res = await t.ky.get('live');
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    // The first part is readable while the server still holds the rest back.
    expect(Buffer.from((await reader.read()).value as Uint8Array).toString()).toBe('head;');
    release?.();
    let rest = '';
    for (;;) {
      const r = await reader.read();
      if (r.done) break;
      rest += Buffer.from(r.value).toString();
    }
    expect(rest).toBe('tail');
    const whole = await (await t.ky.get('big')).text();
    expect(whole.length).toBe(80 * big.length);
  });

  it('no-body answers (204, HEAD) are empty Responses', async () => {
    const server = await probe((req, res) => {
      if (req.method === 'HEAD') res.writeHead(405, { allow: 'POST', 'content-length': '12' }).end();
      else res.writeHead(204).end();
    });
    open.push(server);
    const t = transportFor(server.url, 1);
    const none = await t.ky.post('v2/x', { json: {} });
    expect(none.status).toBe(204);
    expect(await none.text()).toBe('');
    const head = await t.ky.head('v2/data/transactions', { throwHttpErrors: false });
    expect(head.status).toBe(405);
    expect(head.headers.get('allow')).toBe('POST');
    expect(await head.text()).toBe('');
    // Both on one kept-alive socket.
    expect(server.accepted).toBe(1);
  });

  it("ky's hooks see the request and the response (a clone readable beside the caller's body)", async () => {
    const server = await probe((req, res) => ok(res, { echoed: req.headers['x-hooked'] ?? null }));
    open.push(server);
    const t = transportFor(server.url, 1);
    const seen: unknown[] = [];
    const hooked = t.ky.extend({
      hooks: {
        beforeRequest: [({ request }) => request.headers.set('x-hooked', 'yes')],
        afterResponse: [
          async ({ response }) => {
            seen.push(response.status, await response.clone().json());
          },
        ],
      },
    });
    const body = await hooked.get('hooks').json();
    expect(body).toEqual({ echoed: 'yes' });
    expect(seen).toEqual([200, { echoed: 'yes' }]);
  });
});

describe('errors keep the shapes ky and the client classify', () => {
  it("a refused connection is ky's NetworkError around fetch's TypeError('fetch failed') with the errno", async () => {
    const t = transportFor('http://127.0.0.1:1', 1);
    const err = (await rejection(t.ky.get('x'))) as Error & { cause?: Error & { cause?: { code?: string } } };
    expect(isNetworkError(err)).toBe(true);
    expect(err.cause).toBeInstanceOf(TypeError);
    expect(err.cause?.message).toBe('fetch failed');
    expect(err.cause?.cause?.code).toBe('ECONNREFUSED');
    expect(isConnectionFailure(err.cause)).toBe(true);
  });

  it('a connection dropped before the answer is a network error that is not a connection failure', async () => {
    const server = await probe((req) => req.socket.destroy());
    open.push(server);
    const client = createClient(configFor(server.url));
    open.push(client);
    const err = (await rejection(
      client.postTransactions(makeTransactions(1), { requestId: 'drop-1' }),
    )) as SvcNetworkError;
    expect(err).toBeInstanceOf(SvcNetworkError);
    expect(err.aborted).toBe(false);
    expect(err.connection).toBe(false);
  });

  it('a connection dropped in the middle of the answer body is a network error (retried), not a refused request', async () => {
    const server = await probe((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '500' });
      res.write('{"requestId":"');
      setTimeout(() => req.socket.destroy(), 20);
    });
    open.push(server);
    const client = createClient(configFor(server.url));
    open.push(client);
    const err = (await rejection(
      client.postTransactions(makeTransactions(1), { requestId: 'cut-1' }),
    )) as SvcNetworkError;
    expect(err).toBeInstanceOf(SvcNetworkError);
    expect(err.code).toBe('SEND_NETWORK');
    expect(err.aborted).toBe(false);
    expect(err.message).toContain('cut-1');
  });
});

describe('against the simulator', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ seed: 14 });
  });
  afterAll(async () => {
    await sim.close();
  });

  it('64 batches at concurrency 8 are each delivered once, over at most 8 sockets', async () => {
    const client = createClient(configFor(sim.url), { connections: 8 });
    open.push(client);
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < 64) {
          const b = next++;
          const res = await client.postTransactions(makeTransactions(50, b * 50), { requestId: `b-${b}` });
          expect(res.requestId).toBe(`b-${b}`);
        }
      }),
    );
    expect(sim.deliveries().size).toBe(64 * 50);
    expect([...sim.deliveries().values()].every((n) => n === 1)).toBe(true);
    expect(sim.stats().maxInFlight).toBeLessThanOrEqual(8);
  });
});

async function waitFor(cond: () => boolean, ms = 3000): Promise<void> {
  const until = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}
