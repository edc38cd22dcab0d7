// The shared client against the real simulator over HTTP: endpoints, client-side limits, faults, request ids, sessions.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SvcHttpError, SvcLimitError, SvcNetworkError, SvcTimeoutError } from '../../src/client/errors.ts';
import { createClient, type SvcClient } from '../../src/client/index.ts';
import { PATHS } from '../../src/client/models.ts';
import type { SvcIngestError } from '../../src/errors.ts';
import { type Simulator, startSimulator } from '../../src/simulator/index.ts';
import { configFor, makeTransactions, rejection } from './fixtures.ts';

let sim: Simulator;
let client: SvcClient;

beforeAll(async () => {
  sim = await startSimulator({ seed: 7 });
  client = createClient(configFor(sim.url, { timeoutMs: { value: '500', flag: '--timeout' } }));
});
afterAll(async () => {
  await client.close();
  await sim.close();
});
afterEach(() => {
  sim.setFaults({ failRate: 0, rate429: 0, resetRate: 0, hangRate: 0 });
  sim.reset();
});

const count = (path: string): number => sim.stats().requests.byPath[path] ?? 0;

describe('endpoints', () => {
  it('posts transactions and echoes our request id', async () => {
    const res = await client.postTransactions(makeTransactions(50), { requestId: 'batch-1-attempt-1' });
    expect(res).toEqual({ requestId: 'batch-1-attempt-1', httpStatus: 200 });
    expect(sim.deliveries().size).toBe(50);
    expect(sim.stats().largestBatch).toBe(50);
  });

  it('gets redemptions (one startSession for two calls) and passes the lookback', async () => {
    const a = await client.getRedemptions('cust-0002');
    const b = await client.getRedemptions('cust-0002', { lookbackWindowInDays: 396, requestId: 'rd-1' });
    expect(Array.isArray(a.redemptions)).toBe(true);
    expect(typeof a.ads).toBe('object');
    expect(b.requestId).toBe('rd-1');
    expect(count(PATHS.startSession)).toBe(1);
    expect(count(PATHS.redemptions)).toBe(2);
  });

  it('gets store locations by postal code and by latlong (latlong wins)', async () => {
    const adId = await someAdId();
    const byPostal = await client.getStoreLocations({
      adIds: [adId],
      customerLocation: { postalCode: '85004' },
      storeLocationRadiusInMeters: 48000,
    });
    expect(Object.keys(byPostal.adStoreLocations)).toEqual([adId]);
    // An unknown postal code next to a latlong is dropped, so the simulator does not refuse it.
    const both = await client.getStoreLocations({
      adIds: [adId],
      customerLocation: { latlong: { latitude: 33.45, longitude: -112.07 }, postalCode: 'nowhere' },
      storeLocationRadiusInMeters: 48000,
    });
    expect(both.adStoreLocations[adId]).toBeDefined();
    for (const s of both.adStoreLocations[adId] ?? []) expect(s.distance).toBeLessThanOrEqual(48000);
  });

  it('creates a ticket (202) and reads an unknown one as a typed 404', async () => {
    const adId = await someAdId();
    const res = await client.createTicket(
      {
        sourceTicketId: 'tk-a',
        sourceCustomerId: 'cust-0001',
        offerId: Number(adId),
        transactionIds: [1, 2],
        description: 'd',
      },
      { requestId: 'tk-req-1' },
    );
    expect(res).toEqual({ requestId: 'tk-req-1', httpStatus: 202 });
    const err = await rejection(client.getTicket('no-such-ticket', { requestId: 'get-1' }));
    expect(err).toBeInstanceOf(SvcHttpError);
    expect((err as SvcHttpError).status).toBe(404);
    expect((err as SvcHttpError).requestId).toBe('get-1');
    expect((err as SvcHttpError).envelope?.type).toBe('TicketNotFound');
  });

  it('turns a 400 into SvcHttpError with the envelope', async () => {
    const err = await rejection(
      client.getStoreLocations({
        adIds: ['1'],
        customerLocation: { postalCode: '00000' },
        storeLocationRadiusInMeters: 10,
      }),
    );
    expect(err).toBeInstanceOf(SvcHttpError);
    const e = err as SvcHttpError;
    expect(e.status).toBe(400);
    expect(e.code).toBe('SEND_HTTP');
    expect(e.envelope?.validationErrors?.length).toBeGreaterThan(0);
    expect(e.message).toContain(
      `POST ${sim.url}${PATHS.storeLocations} answered HTTP 400 ValidationException`,
    );
  });
});

describe('limits refused before sending', () => {
  it('refuses each limit and nothing reaches the server', async () => {
    const before = sim.stats().requests.total;
    const cases: Array<[Promise<unknown>, string]> = [
      [client.postTransactions(makeTransactions(51), { requestId: 'x' }), 'transactionsPerRequestMax'],
      [client.postTransactions([], { requestId: 'x' }), 'transactionsPerRequestMax'],
      [client.getRedemptions('cust-0001', { lookbackWindowInDays: 397 }), 'lookbackWindowInDays'],
      [client.getRedemptions('cust-0001', { lookbackWindowInDays: -1 }), 'lookbackWindowInDays'],
      [client.getRedemptions('cust-0001', { lookbackWindowInDays: 1.5 }), 'lookbackWindowInDays'],
      [
        client.getStoreLocations({
          adIds: ['1'],
          customerLocation: { postalCode: '85004' },
          storeLocationRadiusInMeters: 48001,
        }),
        'storeLocationRadiusInMeters',
      ],
      [
        client.getStoreLocations({
          adIds: ['1'],
          customerLocation: { postalCode: '85004' },
          storeLocationRadiusInMeters: 0,
        }),
        'storeLocationRadiusInMeters',
      ],
      [
        client.getStoreLocations({
          adIds: [],
          customerLocation: { postalCode: '85004' },
          storeLocationRadiusInMeters: 10,
        }),
        'adIds',
      ],
      [
        client.getStoreLocations({ adIds: ['1'], customerLocation: {}, storeLocationRadiusInMeters: 10 }),
        'customerLocation',
      ],
      [
        client.createTicket({
          sourceTicketId: 't',
          sourceCustomerId: 'c',
          offerId: 1,
          transactionIds: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
          description: 'd',
        }),
        'ticketTransactionIdsMax',
      ],
    ];
    for (const [p, limit] of cases) {
      const err = await rejection(p);
      expect(err).toBeInstanceOf(SvcLimitError);
      expect((err as SvcLimitError).code).toBe('SEND_LIMIT');
      expect((err as SvcLimitError).limit).toBe(limit);
      expect(err.message).toContain(limit);
    }
    expect(sim.stats().requests.total).toBe(before);
  });
});

describe('faults', () => {
  it('500 is SvcHttpError with status and request id, sent exactly once (no retry inside)', async () => {
    sim.setFaults({ failRate: 1 });
    const err = await rejection(client.postTransactions(makeTransactions(2), { requestId: 'f-500' }));
    expect(err).toBeInstanceOf(SvcHttpError);
    expect((err as SvcHttpError).status).toBe(500);
    expect((err as SvcHttpError).requestId).toBe('f-500');
    expect((err as SvcHttpError).envelope?.type).toBe('InternalServerError');
    expect(count(PATHS.transactions)).toBe(1);
  });

  it('429 carries Retry-After in ms', async () => {
    sim.setFaults({ rate429: 1, retryAfterS: 2 });
    const err = (await rejection(
      client.postTransactions(makeTransactions(1), { requestId: 'f-429' }),
    )) as SvcHttpError;
    expect(err).toBeInstanceOf(SvcHttpError);
    expect(err.status).toBe(429);
    expect(err.retryAfterMs).toBe(2000);
    expect(err.requestId).toBe('f-429');
    expect(count(PATHS.transactions)).toBe(1);
  });

  it('a reset connection is SvcNetworkError', async () => {
    sim.setFaults({ resetRate: 1 });
    const err = (await rejection(
      client.postTransactions(makeTransactions(1), { requestId: 'f-reset' }),
    )) as SvcNetworkError;
    expect(err).toBeInstanceOf(SvcNetworkError);
    expect(err.code).toBe('SEND_NETWORK');
    expect(err.aborted).toBe(false);
    expect(err.requestId).toBe('f-reset');
    expect(count(PATHS.transactions)).toBe(1);
  });

  it('a hang is SvcTimeoutError after timeoutMs', async () => {
    sim.setFaults({ hangRate: 1 });
    const started = Date.now();
    const err = (await rejection(
      client.postTransactions(makeTransactions(1), { requestId: 'f-hang' }),
    )) as SvcTimeoutError;
    expect(err).toBeInstanceOf(SvcTimeoutError);
    expect(err.code).toBe('SEND_TIMEOUT');
    expect(err.requestId).toBe('f-hang');
    expect(Date.now() - started).toBeGreaterThanOrEqual(450);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('an aborted signal is an AbortError-like SvcNetworkError', async () => {
    sim.setFaults({ hangRate: 1 });
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 50);
    const err = (await rejection(
      client.postTransactions(makeTransactions(1), { requestId: 'f-abort', signal: ac.signal }),
    )) as SvcNetworkError;
    expect(err).toBeInstanceOf(SvcNetworkError);
    expect(err.aborted).toBe(true);
    expect(err.name).toBe('AbortError');
    const before = count(PATHS.transactions);
    const again = (await rejection(
      client.postTransactions(makeTransactions(1), { requestId: 'f-abort2', signal: ac.signal }),
    )) as SvcNetworkError;
    expect(again.aborted).toBe(true);
    expect(count(PATHS.transactions)).toBe(before);
  });

  it('a refused connection is SvcNetworkError', async () => {
    const dead = createClient(configFor('http://127.0.0.1:1'));
    const err = await rejection(dead.postTransactions(makeTransactions(1), { requestId: 'dead' }));
    await dead.close();
    expect(err).toBeInstanceOf(SvcNetworkError);
  });
});

describe('sessions', () => {
  it('starts a new session after the token expires', async () => {
    const short = await startSimulator({ seed: 7, sessionTtlMs: 300 });
    const c = createClient(configFor(short.url, { 'session.refreshBeforeMs': { value: '0', flag: '--x' } }));
    try {
      await c.getRedemptions('cust-0003');
      await c.getRedemptions('cust-0003');
      expect(short.stats().requests.byPath[PATHS.startSession]).toBe(1);
      await new Promise((r) => setTimeout(r, 350));
      await c.getRedemptions('cust-0003');
      expect(short.stats().requests.byPath[PATHS.startSession]).toBe(2);
    } finally {
      await c.close();
      await short.close();
    }
  });

  it('on a 401 drops the token, starts one new session and retries once (command provider)', async () => {
    // The command prints a bad token the first time, then a real one from the simulator's startSession.
    const dir = mkdtempSync(join(tmpdir(), 'svc-session-'));
    const script = join(dir, 'token.mjs');
    writeFileSync(
      script,
      `import { existsSync, writeFileSync } from 'node:fs';
const mark = ${JSON.stringify(join(dir, 'called'))};
if (!existsSync(mark)) { writeFileSync(mark, '1'); process.stdout.write('bad.token.here'); process.exit(0); }
const r = await fetch(process.env.SIM_URL + '/v2/session/startSession', { method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ sourceCustomerId: process.env.SVC_CUSTOMER_ID, scopes: [], organizationId: 'o' }) });
process.stdout.write((await r.json()).sessionToken);`,
    );
    process.env.SIM_URL = sim.url;
    const c = createClient(
      configFor(sim.url, {
        'session.provider': { value: 'command', flag: '--x' },
        'session.command': { value: `"${process.execPath}" "${script}"`, flag: '--x' },
        // The command's environment is PATH, HOME, SVC_CUSTOMER_ID and this allow-list only.
        'session.commandEnv': { value: 'SIM_URL', flag: '--x' },
      }),
    );
    try {
      const res = await c.getRedemptions('cust-0001');
      expect(Array.isArray(res.redemptions)).toBe(true);
      expect(count(PATHS.redemptions)).toBe(2);
      expect(count(PATHS.startSession)).toBe(1);
      expect(sim.stats().requests.byStatus['401']).toBe(1);
      // The new token is cached: no further start.
      await c.getRedemptions('cust-0001');
      expect(count(PATHS.startSession)).toBe(1);
    } finally {
      delete process.env.SIM_URL;
      await c.close();
    }
  });

  it('a token refused twice surfaces the 401 after exactly one retry', async () => {
    const c = createClient(
      configFor(sim.url, {
        'session.provider': { value: 'command', flag: '--x' },
        'session.command': { value: 'printf "not-a-jwt-for-$SVC_CUSTOMER_ID"', flag: '--x' },
      }),
    );
    try {
      const err = (await rejection(c.getRedemptions('cust-0001'))) as SvcHttpError;
      expect(err).toBeInstanceOf(SvcHttpError);
      expect(err.status).toBe(401);
      expect(err.envelope?.type).toBe('SessionValidationException');
      expect(count(PATHS.redemptions)).toBe(2);
    } finally {
      await c.close();
    }
  });

  it('a failing session command is SEND_SESSION and sends nothing', async () => {
    const c = createClient(
      configFor(sim.url, {
        'session.provider': { value: 'command', flag: '--x' },
        'session.command': { value: 'exit 3', flag: '--x' },
      }),
    );
    try {
      const err = (await rejection(c.getRedemptions('cust-0001'))) as SvcIngestError;
      expect(err.code).toBe('SEND_SESSION');
      expect(err.message).toContain('exited with 3');
      expect(count(PATHS.redemptions)).toBe(0);
    } finally {
      await c.close();
    }
  });

  it('refuses a customer who is not enrolled', async () => {
    const err = (await rejection(client.getRedemptions('nobody'))) as SvcHttpError;
    expect(err.status).toBe(400);
    expect(count(PATHS.redemptions)).toBe(0);
  });
});

describe('auth and 200 bodies', () => {
  it('sends the bearer token from the named env variable', async () => {
    const locked = await startSimulator({ seed: 7, requireToken: 'tok-123' });
    process.env.SVC_TEST_TOKEN = 'tok-123';
    const ok = createClient(
      configFor(locked.url, { 'auth.tokenEnv': { value: 'SVC_TEST_TOKEN', flag: '--x' } }),
    );
    const none = createClient(configFor(locked.url));
    try {
      expect((await ok.postTransactions(makeTransactions(1), { requestId: 'a-1' })).httpStatus).toBe(200);
      const err = (await rejection(
        none.postTransactions(makeTransactions(1), { requestId: 'a-2' }),
      )) as SvcHttpError;
      expect(err.status).toBe(401);
    } finally {
      delete process.env.SVC_TEST_TOKEN;
      await ok.close();
      await none.close();
      await locked.close();
    }
  });
});

async function someAdId(): Promise<string> {
  const r = await client.getRedemptions('cust-0001', { lookbackWindowInDays: 396 });
  const id = Object.keys(r.ads)[0];
  if (!id) throw new Error('simulator has no ads for cust-0001');
  return id;
}
