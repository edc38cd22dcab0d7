// startSession and getCustomerAdRedemptions: tokens (valid, expired, forged, missing), lookback rule, earned redemptions.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { anchorDay, buildCatalog } from '../../src/simulator/catalog.ts';
import type { Simulator } from '../../src/simulator/index.ts';
import { earnsRedemption, startSimulator } from '../../src/simulator/index.ts';
import { call, makeTx, postTx } from './helpers.ts';

const DAY = 86_400_000;
let sim: Simulator;

beforeAll(async () => {
  sim = await startSimulator({ seed: 4 });
});
afterAll(() => sim.close());
beforeEach(() => sim.reset());

async function session(base: string, sourceCustomerId: string): Promise<string> {
  const res = await call(`${base}/v2/session/startSession`, {
    body: { sourceCustomerId, scopes: ['redemptions'], organizationId: 'org-1' },
    headers: { 'X-SVC-Institution-Id': 'inst-1' },
  });
  expect(res.status).toBe(200);
  return res.body.sessionToken as string;
}

function redemptions(base: string, token: string | undefined, query = '') {
  return call(`${base}/v2/customerProfile/getCustomerAdRedemptions${query}`, {
    headers: token === undefined ? {} : { 'X-SVC-Session-Token': token },
  });
}

describe('startSession', () => {
  it('mints a JWT-shaped token carrying the customer, exp (ms), sessionId and organizationId', async () => {
    const before = Date.now();
    const token = await session(sim.url, 'cust-0003');
    const [h, p, sig] = token.split('.');
    expect(JSON.parse(Buffer.from(h!, 'base64url').toString())).toEqual({ alg: 'HS256', typ: 'JWT' });
    const claims = JSON.parse(Buffer.from(p!, 'base64url').toString());
    expect(claims).toMatchObject({
      sourceCustomerId: 'cust-0003',
      organizationId: 'org-1',
      scopes: ['redemptions'],
    });
    expect(claims.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(claims.exp - before).toBeGreaterThanOrEqual(3_600_000 - 1_000);
    expect(sig!.length).toBeGreaterThan(20);
  });

  it('400 for an unknown customer and for a malformed body', async () => {
    const unknown = await call(`${sim.url}/v2/session/startSession`, {
      body: { sourceCustomerId: 'nobody', scopes: [], organizationId: 'org-1' },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({ type: 'ValidationException', title: 'Customer not enrolled' });
    const bad = await call(`${sim.url}/v2/session/startSession`, {
      body: { sourceCustomerId: 5, scopes: 'x' },
    });
    expect(bad.status).toBe(400);
    expect((bad.body.validationErrors as Array<{ field: string }>).map((e) => e.field).sort()).toEqual([
      'organizationId',
      'scopes',
      'sourceCustomerId',
    ]);
  });
});

describe('getCustomerAdRedemptions', () => {
  it('returns the seeded redemptions whose ad offer ended within the lookback window, with full ads', async () => {
    const catalog = buildCatalog(4, anchorDay(Date.now()));
    for (const customer of ['cust-0001', 'cust-0002', 'cust-0007', 'cust-0013']) {
      const token = await session(sim.url, customer);
      for (const days of [0, 30, 120, 396]) {
        const res = await redemptions(sim.url, token, `?lookbackWindowInDays=${days}`);
        expect(res.status).toBe(200);
        const want = catalog.redemptions.filter(
          (r) =>
            r.sourceCustomerId === customer &&
            catalog.ads.get(r.adId)!.offerEndMs >= catalog.anchorMs - days * DAY,
        );
        expect(res.body.redemptions).toEqual(want);
        const ads = res.body.ads as Record<string, Record<string, unknown>>;
        expect(Object.keys(ads).sort()).toEqual([...new Set(want.map((r) => r.adId))].sort());
        for (const ad of Object.values(ads)) {
          expect(ad).toMatchObject({ adType: 'CASH_BACK_OFFER', activationState: 'ACTIVATED' });
          expect(ad).toHaveProperty('assets.copy.type', 'AD_COPY');
          expect(ad).toHaveProperty('assets.callsToAction.value.buyNow.type', 'WEB_LINK');
          expect(ad).toHaveProperty('reward.purchaseRequirement.purchaseChannels');
        }
      }
      const byDefault = await redemptions(sim.url, token);
      const at120 = await redemptions(sim.url, token, '?lookbackWindowInDays=120');
      expect(byDefault.body.redemptions).toEqual(at120.body.redemptions);
    }
    // The seed must give something to filter: some redemption is out at 0 days and in at 396.
    const all = catalog.redemptions.filter((r) => catalog.ads.get(r.adId)!.offerEndMs < catalog.anchorMs);
    expect(all.length).toBeGreaterThan(0);
  });

  it('400 for a lookback outside 0..396 or not an integer', async () => {
    const token = await session(sim.url, 'cust-0001');
    for (const q of ['397', '-1', 'abc', '1.5', '']) {
      const res = await redemptions(sim.url, token, `?lookbackWindowInDays=${q}`);
      expect(res.status, q).toBe(400);
      expect(res.body.type).toBe('ValidationException');
    }
  });

  it('401 SessionValidationException for a missing, forged or expired token', async () => {
    const missing = await redemptions(sim.url, undefined);
    expect(missing.status).toBe(401);
    expect(missing.body).toMatchObject({
      type: 'SessionValidationException',
      title: 'Invalid session token',
    });

    const token = await session(sim.url, 'cust-0001');
    const [h, p] = token.split('.');
    const claims = JSON.parse(Buffer.from(p!, 'base64url').toString());
    const forgedPayload = Buffer.from(JSON.stringify({ ...claims, sourceCustomerId: 'cust-0002' })).toString(
      'base64url',
    );
    const forged = await redemptions(sim.url, `${h}.${forgedPayload}.${token.split('.')[2]}`);
    expect(forged.status).toBe(401);
    expect(forged.body.title).toBe('Invalid session token');

    const other = await startSimulator({ seed: 99 });
    const foreign = await session(other.url, 'cust-0001');
    await other.close();
    expect((await redemptions(sim.url, foreign)).status).toBe(401);

    const short = await startSimulator({ seed: 4, sessionTtlMs: 40 });
    const brief = await session(short.url, 'cust-0001');
    expect((await redemptions(short.url, brief)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 60));
    const expired = await redemptions(short.url, brief);
    await short.close();
    expect(expired.status).toBe(401);
    expect(expired.body).toMatchObject({ type: 'SessionValidationException', title: 'Session Expired' });
  });

  it('accepted transactions whose id hashes to 0 mod 10 earn redemptions; new customers get enrolled', async () => {
    const txs = Array.from({ length: 40 }, (_, i) =>
      makeTx(i, { sourceCustomerId: 'new-cust-1', sourceAccountId: 'acct-n1' }),
    );
    const earning = txs.filter((t) => earnsRedemption(t.transactionId)).map((t) => t.transactionId);
    expect(earning.length).toBeGreaterThan(0);
    expect(
      (
        await call(`${sim.url}/v2/session/startSession`, {
          body: { sourceCustomerId: 'new-cust-1', scopes: [], organizationId: 'o' },
        })
      ).status,
    ).toBe(400);
    expect((await postTx(sim.url, txs)).status).toBe(200);
    await postTx(sim.url, txs); // a resend earns nothing more
    const token = await session(sim.url, 'new-cust-1');
    const res = await redemptions(sim.url, token, '?lookbackWindowInDays=0');
    const got = res.body.redemptions as Array<Record<string, unknown>>;
    expect(got.map((r) => r.transactionId).sort()).toEqual(earning.sort());
    expect(got[0]).toMatchObject({
      sourceCustomerId: 'new-cust-1',
      sourceAccountId: 'acct-n1',
      redeemingTransactionAmount: 12.5,
    });
    for (const r of got) expect(Object.keys(res.body.ads as object)).toContain(r.adId);
  });
});
