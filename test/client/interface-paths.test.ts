// The client against the service interface as written, not the simulator's tables: a plain HTTP server records
// what arrives, and the methods, paths, query, headers and field names asserted here are copied from the
// interface document (endpoints 1–5), so a wrong path or field name in the client fails here even where the
// simulator shares it.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type SvcClient } from '../../src/client/index.ts';
import { configFor, makeTransaction } from './fixtures.ts';

interface Seen {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

let server: Server;
let client: SvcClient;
const seen: Seen[] = [];
const TOKEN_ENV = 'SVC_TEST_INTERFACE_SESSION_TOKEN';

/** Answers in the shapes the interface gives for each endpoint. */
function answer(method: string, path: string): [number, unknown] {
  const requestId = '8a0c3f0e-8f3c-4d1e-9b1a-2f6f1f0f4b11';
  if (method === 'POST' && path === '/v2/data/transactions') return [200, { requestId }];
  if (method === 'GET' && path === '/v2/customerProfile/getCustomerAdRedemptions')
    return [200, { redemptions: [], ads: {}, requestId }];
  if (method === 'POST' && path === '/v2/ads/getstorelocations') return [200, { adStoreLocations: {} }];
  if (method === 'POST' && path === '/csaapi/v2/tickets') return [202, {}];
  if (method === 'GET' && path === '/csaapi/v2/tickets/T-42')
    return [200, { sourceTicketId: 'T-42', status: 'In Process', processingStatus: 'Success' }];
  return [404, { error: 'not in the interface' }];
}

beforeAll(async () => {
  process.env[TOKEN_ENV] = 'session-token-for-the-test';
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      const [status, body] = answer(req.method ?? '', new URL(req.url ?? '/', 'http://x').pathname);
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  client = createClient(
    configFor(url, {
      'session.provider': { value: 'static', flag: 'test' },
      'session.tokenEnv': { value: TOKEN_ENV, flag: 'test' },
    }),
  );
});
afterAll(async () => {
  delete process.env[TOKEN_ENV];
  await client?.close();
  await new Promise<void>((r) => server?.close(() => r()));
});

const last = (): Seen => seen[seen.length - 1] as Seen;

describe('the client, against the interface document', () => {
  it('5. POST /v2/data/transactions with {"transactions": [...]}', async () => {
    const r = await client.postTransactions([makeTransaction(1)], { requestId: 'req-1' });
    expect(r.httpStatus).toBe(200);
    expect(last().method).toBe('POST');
    expect(last().url).toBe('/v2/data/transactions');
    const body = JSON.parse(last().body);
    expect(Object.keys(body)).toEqual(['transactions']);
    expect(body.transactions[0].transactionId).toBe('tx-1');
  });

  it('1. GET /v2/customerProfile/getCustomerAdRedemptions?lookbackWindowInDays=…, X-SVC-Session-Token, no body', async () => {
    await client.getRedemptions('cust-1', { lookbackWindowInDays: 30 });
    const s = last();
    expect(s.method).toBe('GET');
    const url = new URL(s.url, 'http://x');
    expect(url.pathname).toBe('/v2/customerProfile/getCustomerAdRedemptions');
    expect(url.searchParams.get('lookbackWindowInDays')).toBe('30');
    expect(s.headers['x-svc-session-token']).toBe('session-token-for-the-test');
    expect(s.body).toBe('');
  });

  it('2. POST /v2/ads/getstorelocations with adIds, customerLocation, storeLocationRadiusInMeters', async () => {
    await client.getStoreLocations({
      adIds: ['100001'],
      customerLocation: { postalCode: '10001' },
      storeLocationRadiusInMeters: 5000,
    } as Parameters<SvcClient['getStoreLocations']>[0]);
    expect(last().method).toBe('POST');
    expect(last().url).toBe('/v2/ads/getstorelocations');
    const body = JSON.parse(last().body);
    expect(Object.keys(body).sort()).toEqual(['adIds', 'customerLocation', 'storeLocationRadiusInMeters']);
    expect(body).toMatchObject({ adIds: ['100001'], storeLocationRadiusInMeters: 5000 });
  });

  it('3. POST /csaapi/v2/tickets with sourceTicketId, sourceCustomerId, transactionIds, offerId, description; 202', async () => {
    const r = await client.createTicket({
      sourceTicketId: 'T-42',
      sourceCustomerId: 'cust-1',
      transactionIds: [700001],
      offerId: 100001,
      description: 'Reward not credited after purchase',
    } as Parameters<SvcClient['createTicket']>[0]);
    expect(r.httpStatus).toBe(202);
    expect(last().method).toBe('POST');
    expect(last().url).toBe('/csaapi/v2/tickets');
    const body = JSON.parse(last().body);
    for (const field of ['sourceTicketId', 'sourceCustomerId', 'transactionIds', 'offerId', 'description'])
      expect(body, field).toHaveProperty(field);
    expect(body.transactionIds).toEqual([700001]);
    expect(body.offerId).toBe(100001);
  });

  it('4. GET /csaapi/v2/tickets/{sourceTicketId}, no body', async () => {
    const t = await client.getTicket('T-42');
    expect(t.sourceTicketId).toBe('T-42');
    expect(last().method).toBe('GET');
    expect(last().url).toBe('/csaapi/v2/tickets/T-42');
    expect(last().body).toBe('');
  });
});
