// POST /v2/data/transactions over real HTTP: acceptance, request ids, every 4xx, routing errors.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.ts';
import { startSimulator } from '../../src/simulator/index.ts';
import { batch, call, fields, makeTx, postTx } from './helpers.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
let sim: Simulator;

beforeAll(async () => {
  sim = await startSimulator({ seed: 1 });
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

describe('accepted batches', () => {
  it('answers 200 with a UUID requestId and records each transaction', async () => {
    const res = await postTx(sim.url, batch(1, 50));
    expect(res.status).toBe(200);
    expect(res.body.requestId).toMatch(UUID);
    expect(res.headers.get('x-svc-request-id')).toBe(res.body.requestId);
    expect(sim.deliveries().size).toBe(50);
    expect([...sim.transactions()].map((t) => t.transactionId)).toEqual(
      batch(1, 50).map((t) => t.transactionId),
    );
    const st = sim.stats();
    expect(st.transactions).toEqual({ accepted: 50, distinct: 50, duplicates: 0 });
    expect(st.largestBatch).toBe(50);
    expect(st.requests.byPath['/v2/data/transactions']).toBe(1);
    expect(st.requests.byStatus['200']).toBe(1);
  });

  it('echoes X-SVC-Request-Id in body and header', async () => {
    const res = await postTx(sim.url, [makeTx(1)], { 'X-SVC-Request-Id': 'batch-7-attempt-2' });
    expect(res.body).toEqual({ requestId: 'batch-7-attempt-2' });
    expect(res.headers.get('x-svc-request-id')).toBe('batch-7-attempt-2');
  });

  it('counts a resent batch as duplicates', async () => {
    await postTx(sim.url, batch(1, 3));
    await postTx(sim.url, batch(1, 3));
    expect(sim.stats().transactions).toEqual({ accepted: 6, distinct: 3, duplicates: 3 });
    expect(sim.deliveries().get('tx-000001')).toBe(2);
    expect([...sim.transactions()]).toHaveLength(3);
  });

  it('accepts optional fields left out and a cash back of "0"', async () => {
    const {
      paymentNetworkMerchantAddress1: _a,
      mobileIndicator: _m,
      iin: _i,
      postedAmount: _p,
      ...minimal
    } = makeTx(1);
    expect((await postTx(sim.url, [minimal])).status).toBe(200);
  });

  it('serves deliveries as NDJSON', async () => {
    await postTx(sim.url, batch(1, 2));
    const text = await (await fetch(`${sim.url}/__sim/deliveries`)).text();
    expect(
      text
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual([
      { transactionId: 'tx-000001', count: 1 },
      { transactionId: 'tx-000002', count: 1 },
    ]);
  });
});

describe('refused batches', () => {
  it('400 HttpMessageNotReadable for a body that is not JSON or has the wrong shape', async () => {
    for (const raw of ['{not json', '', '[]', '{"transactions":"x"}', '{"transactions":[1]}', 'null']) {
      const res = await call(`${sim.url}/v2/data/transactions`, { raw });
      expect(res.status, raw).toBe(400);
      expect(res.body.type, raw).toBe('HttpMessageNotReadable');
      expect(res.body.status).toBe(400);
      expect(res.body.requestId).toMatch(UUID);
    }
  });

  it('400 naming the limit for 51 transactions, and for none', async () => {
    const over = await postTx(sim.url, batch(1, 51));
    expect(over.status).toBe(400);
    expect(over.body.type).toBe('ValidationException');
    expect(String(over.body.title)).toContain('50');
    expect(fields(over.body)).toEqual(['transactions']);
    expect(sim.stats().largestBatch).toBe(51);
    const none = await postTx(sim.url, []);
    expect(none.status).toBe(400);
    expect(fields(none.body)).toEqual(['transactions']);
    expect(sim.deliveries().size).toBe(0);
  });

  it('400 listing every bad field of every transaction at once', async () => {
    const res = await postTx(sim.url, [
      makeTx(1),
      makeTx(2, { postedAmount: 12.5, mobileIndicator: 'Y' }),
      makeTx(3),
      makeTx(4, { postedAmount: '12.50', cardNetworkIdentifier: 4.5, surprise: 1 }),
    ]);
    expect(res.status).toBe(400);
    expect(res.body.type).toBe('ValidationException');
    expect(fields(res.body).sort()).toEqual(
      [
        'transactions[1].postedAmount',
        'transactions[1].mobileIndicator',
        'transactions[3].postedAmount',
        'transactions[3].cardNetworkIdentifier',
        'transactions[3].surprise',
      ].sort(),
    );
    expect(sim.deliveries().size).toBe(0);
  });

  it('400 for each missing required field', async () => {
    const required = ['transactionId', 'sourceCustomerId', 'paymentNetworkMCC', 'paymentNetworkMerchantId'];
    for (const field of required) {
      const tx: Record<string, unknown> = { ...makeTx(1) };
      delete tx[field];
      const res = await postTx(sim.url, [tx]);
      expect(res.status, field).toBe(400);
      expect(fields(res.body), field).toContain(`transactions[0].${field}`);
    }
  });

  it.each([
    ['postedAmount', '0'],
    ['postedAmount', '-5'],
    ['postedAmount', '0500'],
    ['authorizationAmount', '1e3'],
    ['cashBackAtPointOfSaleAmount', '-1'],
    ['transactionTimestamp', '2026-11-20T10:00:00Z'],
    ['transactionTimestamp', '2026-11-20T10:00:00.000+01:00'],
    ['transactionPostingTimestamp', '2026-02-30T10:00:00.000Z'],
    ['paymentNetworkMCC', '581'],
    ['paymentNetworkMerchantCountryCode', 'USA'],
    ['paymentNetworkMerchantCountryCode', 'XX'],
    ['paymentNetworkMerchantState', 'Arizona'],
    ['currencyCode', 'usd'],
    ['currencyCode', '840'],
    ['iin', '4111'],
    ['last4', '11111'],
    ['cardNetworkIdentifier', 12],
    ['transactionId', ''],
  ])('400 for %s = %j', async (field, value) => {
    const res = await postTx(sim.url, [makeTx(1, { [field]: value })]);
    expect(res.status).toBe(400);
    expect(fields(res.body)).toEqual([`transactions[0].${field}`]);
  });

  it('400 for a transactionId repeated inside one request, and for an unknown top-level key', async () => {
    const dup = await postTx(sim.url, [makeTx(1), makeTx(1)]);
    expect(fields(dup.body)).toEqual(['transactions[1].transactionId']);
    const extra = await call(`${sim.url}/v2/data/transactions`, {
      body: { transactions: [makeTx(1)], more: true },
    });
    expect(extra.status).toBe(400);
    expect(fields(extra.body)).toEqual(['more']);
  });

  it('never echoes a long digit run from a bad value', async () => {
    const res = await postTx(sim.url, [makeTx(1, { postedAmount: '4111111111111111x' })]);
    expect(JSON.stringify(res.body)).not.toContain('4111111111111111');
  });

  it('415 without a JSON content type; 404 unknown path; 405 wrong method', async () => {
    const res = await fetch(`${sim.url}/v2/data/transactions`, { method: 'POST', body: '{}' });
    expect(res.status).toBe(415);
    const nf = await call(`${sim.url}/v2/nope`);
    expect(nf.status).toBe(404);
    expect(nf.body.type).toBe('NotFound');
    const na = await call(`${sim.url}/v2/data/transactions`);
    expect(na.status).toBe(405);
    expect(na.headers.get('allow')).toBe('POST');
    expect(sim.stats().requests.byStatus).toEqual({ '415': 1, '404': 1, '405': 1 });
  });
});
