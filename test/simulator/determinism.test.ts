// Same seed, same service: ids, data and fault draws repeat; another seed differs.
import { describe, expect, it } from 'vitest';
import { startSimulator } from '../../src/simulator/index.ts';
import { batch, call, makeTx, postTx } from './helpers.ts';

async function transcript(seed: number): Promise<string> {
  const sim = await startSimulator({ seed, failRate: 0.25, rate429: 0.1, retryAfterS: 0 });
  const out: unknown[] = [];
  try {
    for (let i = 0; i < 20; i++) {
      const res = await postTx(sim.url, batch(i * 3, 3));
      out.push(res.status, res.body);
    }
    out.push((await postTx(sim.url, [makeTx(0, { postedAmount: 'x' })])).body);
    const s = await call(`${sim.url}/v2/session/startSession`, {
      body: { sourceCustomerId: 'cust-0002', scopes: [], organizationId: 'o' },
    });
    const token = s.body.sessionToken as string;
    out.push(JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).sessionId);
    out.push(
      (
        await call(`${sim.url}/v2/customerProfile/getCustomerAdRedemptions?lookbackWindowInDays=396`, {
          headers: { 'X-SVC-Session-Token': token, 'X-SVC-Request-Id': 'fixed' },
        })
      ).body,
    );
    out.push(
      (
        await call(`${sim.url}/v2/ads/getstorelocations`, {
          body: {
            adIds: ['100001', '100005'],
            customerLocation: { postalCode: '10001' },
            storeLocationRadiusInMeters: 48_000,
          },
          headers: { 'X-SVC-Request-Id': 'fixed' },
        })
      ).body,
    );
    out.push(sim.stats().faults);
  } finally {
    await sim.close();
  }
  return JSON.stringify(out);
}

describe('determinism', () => {
  it('a seed repeats request ids, data and fault draws exactly; another seed does not', async () => {
    const a = await transcript(11);
    expect(await transcript(11)).toBe(a);
    expect(await transcript(12)).not.toBe(a);
  });

  it('reset() starts the sequences again', async () => {
    const sim = await startSimulator({ seed: 8 });
    try {
      const first = (await postTx(sim.url, [makeTx(1)])).body.requestId;
      sim.reset();
      expect((await postTx(sim.url, [makeTx(1)])).body.requestId).toBe(first);
    } finally {
      await sim.close();
    }
  });
});
