// Each fault kind observed over real HTTP with plain fetch, counted on the server side; runtime changes and reset.
import { afterEach, describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.ts';
import { startSimulator } from '../../src/simulator/index.ts';
import { batch, call, makeTx, postTx } from './helpers.ts';

let sim: Simulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

describe('faults', () => {
  it('failRate 1 answers 500 InternalServerError and accepts nothing', async () => {
    sim = await startSimulator({ failRate: 1 });
    const res = await postTx(sim.url, batch(1, 5), { 'X-SVC-Request-Id': 'r-1' });
    expect(res.status).toBe(500);
    expect(res.body).toMatchObject({ type: 'InternalServerError', status: 500, requestId: 'r-1' });
    expect(sim.stats().faults.fail500).toBe(1);
    expect(sim.deliveries().size).toBe(0);
  });

  it('failFirst K fails the first K attempts of each distinct batch, in any order of its ids', async () => {
    sim = await startSimulator({ failFirst: 2 });
    const a = batch(1, 3);
    const b = batch(10, 3);
    const statuses: number[] = [];
    for (const txs of [a, b, [...a].reverse(), b, a, b]) statuses.push((await postTx(sim.url, txs)).status);
    expect(statuses).toEqual([500, 500, 500, 500, 200, 200]);
    expect(sim.stats().faults.failFirst).toBe(4);
    expect(sim.stats().transactions).toEqual({ accepted: 6, distinct: 6, duplicates: 0 });
  });

  it('resetRate 1 destroys the socket without an answer', async () => {
    sim = await startSimulator({ resetRate: 1 });
    await expect(postTx(sim.url, [makeTx(1)])).rejects.toThrow();
    expect(sim.stats().faults.reset).toBe(1);
    expect(sim.stats().requests.byStatus).toEqual({});
    expect(sim.deliveries().size).toBe(0);
  });

  it('hangRate 1 never answers until the client gives up; close() still ends promptly', async () => {
    sim = await startSimulator({ hangRate: 1 });
    const started = Date.now();
    await expect(
      call(`${sim.url}/v2/data/transactions`, {
        body: { transactions: [makeTx(2)] },
        signal: AbortSignal.timeout(150),
      }),
    ).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(sim.stats().faults.hang).toBe(1);
    // The server notices the client's abort a moment later; the hung request then leaves the in-flight gauge.
    for (let i = 0; i < 100 && sim.stats().inFlight > 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(sim.stats().inFlight).toBe(0);
    // A second hung request is still open when close() is called: close must destroy it.
    const pending = postTx(sim.url, [makeTx(3)]).catch((err: unknown) => err);
    for (let i = 0; i < 100 && sim.stats().inFlight === 0; i++) await new Promise((r) => setTimeout(r, 10));
    const closing = Date.now();
    await sim.close();
    expect(Date.now() - closing).toBeLessThan(1_000);
    expect(await pending).toBeInstanceOf(Error);
  }, 10_000);

  it('rate429 answers 429 with Retry-After', async () => {
    sim = await startSimulator({ rate429: 1, retryAfterS: 7 });
    const res = await postTx(sim.url, [makeTx(1)]);
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('7');
    expect(res.body).toMatchObject({ type: 'TooManyRequests', status: 429 });
    expect(sim.stats().faults.rate429).toBe(1);
  });

  it('poison fails every batch holding a poisoned id, always', async () => {
    sim = await startSimulator({ poison: ['tx-000002'] });
    for (let i = 0; i < 3; i++) expect((await postTx(sim.url, batch(1, 3))).status).toBe(500);
    expect((await postTx(sim.url, batch(3, 3))).status).toBe(200);
    expect(sim.stats().faults.poison).toBe(3);
  });

  it('faults come after validation for poison/failFirst/failRate: an invalid batch gets its 400', async () => {
    sim = await startSimulator({ failRate: 1, failFirst: 3, poison: ['tx-000001'] });
    const res = await postTx(sim.url, [makeTx(1, { paymentNetworkMCC: 'x' })]);
    expect(res.status).toBe(400);
    expect(sim.stats().faults).toEqual({
      fail500: 0,
      failFirst: 0,
      reset: 0,
      hang: 0,
      rate429: 0,
      poison: 0,
    });
  });

  it('latency delays answers and maxInFlight sees concurrent requests', async () => {
    sim = await startSimulator({ latencyMs: 120 });
    const started = Date.now();
    const answers = await Promise.all([1, 2, 3, 4].map((k) => postTx(sim!.url, batch(k * 100, 2))));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(115);
    expect(sim.stats().maxInFlight).toBe(4);
    expect(sim.stats().inFlight).toBe(0);
  });

  it('failRate 0.3 fails about 30% and a seed repeats the same pattern', async () => {
    const pattern = async (seed: number): Promise<string> => {
      const s = await startSimulator({ seed, failRate: 0.3 });
      let out = '';
      for (let i = 0; i < 60; i++) out += (await postTx(s.url, [makeTx(i)])).status === 200 ? '.' : 'x';
      await s.close();
      return out;
    };
    const one = await pattern(5);
    expect(await pattern(5)).toBe(one);
    expect(await pattern(6)).not.toBe(one);
    const fails = one.split('').filter((c) => c === 'x').length;
    expect(fails).toBeGreaterThan(6);
    expect(fails).toBeLessThan(35);
  });

  it('setFaults and reset over HTTP, with bad fault options refused', async () => {
    sim = await startSimulator();
    expect((await postTx(sim.url, [makeTx(1)])).status).toBe(200);
    const set = await call(`${sim.url}/__sim/faults`, { body: { failRate: 1 } });
    expect(set.status).toBe(200);
    expect(set.body.failRate).toBe(1);
    expect((await postTx(sim.url, [makeTx(2)])).status).toBe(500);
    const bad = await call(`${sim.url}/__sim/faults`, { body: { failRate: 3 } });
    expect(bad.status).toBe(400);
    expect(String(bad.body.detail)).toContain('failRate');
    expect((await call(`${sim.url}/__sim/faults`, { body: { nope: 1 } })).status).toBe(400);
    const stats = (await call(`${sim.url}/__sim/stats`)).body;
    expect(stats).toMatchObject({
      requests: { total: 2 },
      faults: { fail500: 1 },
      transactions: { accepted: 1 },
    });
    expect((await call(`${sim.url}/__sim/reset`, { body: {} })).status).toBe(200);
    expect(sim.stats().requests.total).toBe(0);
    expect(sim.deliveries().size).toBe(0);
    sim.setFaults({ failRate: 0 });
    expect((await postTx(sim.url, [makeTx(2)])).status).toBe(200);
    expect(() => sim!.setFaults({ hangRate: -1 })).toThrow(/hangRate/);
  });

  it('refuses bad options at start with USAGE_INVALID naming the option', async () => {
    await expect(startSimulator({ failRate: 1.5 })).rejects.toMatchObject({ code: 'USAGE_INVALID' });
    await expect(startSimulator({ webhookUrl: 'ftp://x' })).rejects.toThrow(/webhookUrl/);
    await expect(startSimulator({ port: 70_000 })).rejects.toThrow(/port/);
  });
});
