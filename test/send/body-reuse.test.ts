// Request bodies cut from slabs that are reused (src/client/body.ts) sent by the real dispatcher and client to a
// real server on 127.0.0.1 that reads bodies late, answers 500 and then takes the retry, refuses a record (the batch
// is split, its halves cut from the records' bytes), or makes the client give up in the middle of a body: every
// body it receives is byte-identical to the JSON of the records it names, a retry's to its first attempt's, and each
// acknowledged part's records are the ones the server got under the requestId it answered.
// The server and the client share one event loop: on a loaded machine it may stall for hundreds of ms, so the
// client of the cases that are not about giving up waits long (a 300 ms client gave up on requests then, and their
// bodies, read after the connection closed, came out empty: not the slabs' doing, the same with no slab reused).
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Batch } from '../../src/batch/batcher.ts';
import { batchJson, slabCounts } from '../../src/client/body.ts';
import { createClient, type SvcClient } from '../../src/client/index.ts';
import { loadConfig } from '../../src/config/index.ts';
import { createDispatcher } from '../../src/send/dispatcher.ts';
import type { BatchOutcome } from '../../src/send/sink.ts';
import { type DispatchTestOptions, dispatchSettings } from '../helpers/dispatch.ts';
import { makeTx, range } from '../helpers/transactions.ts';

/** A request's body as it arrives: nothing flows until `resume` (the body waits in the socket meanwhile). */
interface Incoming {
  resume(): void;
  pause(): void;
  /** The first chunk (resumes the request). */
  first(): Promise<Buffer>;
  /**
   * The whole body, or what came of it before the connection closed (resumes the request; such a body is in
   * `cutShort`: a request closed with its body unread drops what it had buffered, so it may even be empty).
   */
  whole(): Promise<Buffer>;
}

/** What the server does with one request. */
type Behaviour = (io: Incoming, res: ServerResponse) => Promise<void>;

const jsonById = new Map<string, string>();
/** Bodies that were not the JSON of the records they name (none, when no slab was reused too early). */
const bad: string[] = [];
/** The ids of each body answered 200, by the requestId answered. */
const answered = new Map<string, string[]>();
/** The bytes of each first attempt, by its first id; and what came of the requests the client gave up. */
const firstBodies = new Map<string, Buffer>();
const abandoned: Array<{ first: string; bytes: Buffer }> = [];
/** Bodies whose connection closed before their end was read (the client gave up on the request). */
const cutShort = new WeakSet<Buffer>();
let behaviour: Behaviour;
let server: ReturnType<typeof createServer>;
/** A client that does not give up on a slow answer (10 s), and one that does (300 ms). */
let client: SvcClient;
let quitter: SvcClient;
let served = 0;

/** The body's ids, after checking it is byte for byte the JSON of those records. */
function check(body: Buffer): string[] {
  const text = body.toString('utf8');
  if (cutShort.has(body)) {
    bad.push(`given up by the client before it was read (${body.length} bytes): ${firstId(body)}`);
    return [];
  }
  try {
    const ids = (JSON.parse(text) as { transactions: Array<{ transactionId: string }> }).transactions.map(
      (t) => t.transactionId,
    );
    const expected = batchJson(ids.map((id) => jsonById.get(id) ?? `unknown ${id}`));
    if (!Buffer.from(expected, 'utf8').equals(body)) bad.push(`${ids[0]}: not the records' JSON`);
    return ids;
  } catch {
    bad.push(`not JSON: ${text.slice(0, 80)}…`);
    return [];
  }
}

/** The first id of a body, read from its start (a body cut short is still named). */
function firstId(body: Buffer): string {
  return /"transactionId":"([^"]+)"/.exec(body.subarray(0, 200).toString('utf8'))?.[1] ?? '?';
}

function ok(res: ServerResponse, ids: string[]): void {
  const requestId = `srv-${++served}`;
  answered.set(requestId, ids);
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ requestId }));
}

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** How many times a batch (by its first id) came before: 0 on its first attempt. */
const seenFirst = new Map<string, number>();
function seenBefore(first: string): number {
  const n = seenFirst.get(first) ?? 0;
  seenFirst.set(first, n + 1);
  return n;
}

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.pause();
    let gotFirst: (b: Buffer) => void = () => {};
    const firstChunk = new Promise<Buffer>((r) => {
      gotFirst = r;
    });
    // The body's end, or the connection's (a request the client gave up).
    let whole = false;
    const ended = new Promise<void>((r) => {
      req.once('end', () => {
        whole = true;
        r();
      });
      req.once('close', r);
    });
    req.on('data', (c: Buffer) => {
      if (chunks.length === 0) gotFirst(c);
      chunks.push(c);
    });
    const io: Incoming = {
      resume: () => req.resume(),
      pause: () => req.pause(),
      first: () => {
        req.resume();
        return firstChunk;
      },
      whole: async () => {
        req.resume();
        await ended;
        const body = Buffer.concat(chunks);
        if (!whole) cutShort.add(body);
        return body;
      },
    };
    behaviour(io, res).catch((err) => {
      bad.push(String(err));
      res.destroy();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const clientFor = (timeoutMs: number) =>
    createClient(
      loadConfig({
        env: {},
        flags: {
          baseUrl: {
            value: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
            flag: '--base-url',
          },
          timeoutMs: { value: timeoutMs, flag: '--timeout' },
        },
      }),
    );
  client = clientFor(10_000);
  quitter = clientFor(300);
});
afterAll(async () => {
  await client.close();
  await quitter.close();
  server.closeAllConnections();
  server.close();
});
afterEach(() => {
  bad.length = 0;
  answered.clear();
  firstBodies.clear();
  abandoned.length = 0;
});

/**
 * `n` batches of 50 records (~35 KB a body: ~30 bodies a slab; `pad` characters more a record), ids unique to the
 * test.
 */
function batches(n: number, prefix: string, pad = 0): Batch[] {
  return range(n).map((b) => ({
    id: `${prefix}-${b + 1}`,
    items: range(50, b * 50).map((i) => {
      const tx = makeTx(i, prefix);
      const json = JSON.stringify(
        pad > 0 ? { ...tx, paymentNetworkMerchant: `${'Café ☕ '.repeat(pad / 8)}${i}` } : tx,
      );
      const id = `${prefix}-${String(i).padStart(8, '0')}`;
      jsonById.set(id, json);
      return { id, json, source: 'mem', line: i + 2 };
    }),
  }));
}

async function run(bs: Batch[], opts: DispatchTestOptions = {}, through: SvcClient = client) {
  const { settings, rest: given } = dispatchSettings(opts, {
    concurrency: 8,
    maxRetries: 3,
    retryBaseMs: 1,
    retryMaxMs: 5,
  });
  const outcomes: Array<{ status: string; ids: string[]; requestId: string | null; attempts: number }> = [];
  const d = createDispatcher({
    post: (txs, o) => through.postTransactionsJson(txs, o),
    settings,
    async onOutcome(o: BatchOutcome) {
      outcomes.push({
        status: o.status,
        ids: o.items.map((i) => i.id),
        requestId: o.requestId,
        attempts: o.attempts,
      });
    },
    ...given,
  });
  const before = slabCounts();
  for (const b of bs) await d.submit(b);
  await d.drain();
  // Each acknowledged part: the records the server got under the requestId it answered.
  for (const o of outcomes.filter((x) => x.status === 'acked'))
    expect(answered.get(o.requestId as string)).toEqual(o.ids);
  return { outcomes, reused: slabCounts().reused - before.reused };
}

describe('request bodies from reused slabs reach the server byte for byte', () => {
  it('a server that reads each body late (20-60 ms, some in two halves) gets every body intact', async () => {
    let n = 0;
    behaviour = async (io, res) => {
      const k = n++;
      await wait(20 + (k % 5) * 10);
      if (k % 3 === 0) {
        // The first part now, the rest later: the body is read while other batches are being encoded.
        await io.first();
        io.pause();
        await wait(10);
      }
      ok(res, check(await io.whole()));
    };
    const { outcomes, reused } = await run(batches(300, 'late'));
    expect(bad).toEqual([]);
    expect(outcomes.filter((o) => o.status === 'acked').length).toBe(300);
    // ~10 MB of bodies went through a few slabs, each cut from again many times.
    expect(reused).toBeGreaterThan(5);
  });

  it('a 500 after reading the first attempt: the retry (after other batches were encoded) sends the same bytes', async () => {
    behaviour = async (io, res) => {
      const body = await io.whole();
      const ids = check(body);
      const first = ids[0] as string;
      if (seenBefore(first) === 0) {
        firstBodies.set(first, body);
        await wait(15);
        res.writeHead(500).end('{"message":"try again"}');
        return;
      }
      if (!firstBodies.get(first)?.equals(body))
        bad.push(`${first}: the retry's body differs from the first`);
      ok(res, ids);
    };
    const { outcomes, reused } = await run(batches(200, 'retry'));
    expect(bad).toEqual([]);
    expect(outcomes.map((o) => `${o.status} ${o.attempts}`)).toEqual(Array(200).fill('acked 2'));
    expect(reused).toBeGreaterThan(3);
  });

  it('a refused record: the batch is split, each part cut from the records bytes and retried after a 500 with the same bytes', async () => {
    const poison = new Set(range(3).map((b) => `split-${String(b * 5000 + 17).padStart(8, '0')}`));
    behaviour = async (io, res) => {
      const body = await io.whole();
      const ids = check(body);
      // A part's first attempt gets a 500 and is retried 100-200 ms later with its own body (its records' bytes are
      // in another batch's slab); a refusal takes longer. The other batches meanwhile go through slabs.
      const part = `${ids[0]} ${ids.length}`;
      if (ids.length < 50 && seenBefore(part) === 0) {
        firstBodies.set(part, body);
        res.writeHead(500).end('{"message":"try again"}');
        return;
      }
      if (ids.length < 50 && !firstBodies.get(part)?.equals(body))
        bad.push(`${part}: the retry's body differs`);
      if (ids.some((id) => poison.has(id))) {
        await wait(40);
        res.writeHead(400).end('{"message":"refused"}');
      } else {
        await wait(5);
        ok(res, ids);
      }
    };
    const { outcomes } = await run(batches(400, 'split'), {
      splitRetries: 1,
      retryBaseMs: 100,
      retryMaxMs: 100,
    });
    expect(bad).toEqual([]);
    const failed = outcomes.filter((o) => o.status === 'failed').flatMap((o) => o.ids);
    expect(new Set(failed)).toEqual(poison);
    expect(outcomes.filter((o) => o.status === 'acked').flatMap((o) => o.ids).length).toBe(20_000 - 3);
  });

  it('the client gives up in the middle of a body (its timeout) and retries: the body read late is still the same bytes', async () => {
    behaviour = async (io, res) => {
      const first = firstId(await io.first());
      // Every other batch's first attempt: its first chunk read (of ~190 KB), then nothing until the client's
      // 300 ms are up (it aborts the request, retries and goes on encoding other batches): the rest read then.
      if (seenBefore(first) === 0 && (Number(first.slice(-8)) / 50) % 2 === 0) {
        io.pause();
        await wait(450);
        abandoned.push({ first, bytes: await io.whole() });
        return;
      }
      const body = await io.whole();
      // Another request the client gave up on (a loaded machine's stall): it retries it.
      if (cutShort.has(body)) return;
      const ids = check(body);
      firstBodies.set(ids[0] as string, body);
      ok(res, ids);
    };
    const { outcomes } = await run(batches(60, 'abort', 3000), {}, quitter);
    expect(bad).toEqual([]);
    expect(outcomes.filter((o) => o.status === 'acked').length).toBe(60);
    // Every other batch was given up once at least (a loaded machine may make the client give up on another).
    const given = outcomes.filter((o) => (Number(o.ids[0]?.slice(-8)) / 50) % 2 === 0);
    expect(given.length).toBe(30);
    expect(given.every((o) => o.attempts >= 2)).toBe(true);
    // The last ones are read 450 ms after their first chunk, maybe after the run is over.
    for (let t = 0; abandoned.length < 30 && t < 100; t++) await wait(20);
    expect(abandoned.length).toBe(30);
    // What the client had written before it gave up (on loopback the kernel took it all) is the retry's bytes.
    for (const p of abandoned) {
      const retry = firstBodies.get(p.first) as Buffer;
      expect(p.bytes.length).toBeGreaterThan(60_000);
      expect(p.bytes.equals(retry.subarray(0, p.bytes.length))).toBe(true);
    }
  });
});
