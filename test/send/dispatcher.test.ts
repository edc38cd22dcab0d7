import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Batch } from '../../src/batch/batcher.ts';
import { createClient, type SvcClient } from '../../src/client/index.ts';
import { loadConfig } from '../../src/config/index.ts';
import { createDispatcher } from '../../src/send/dispatcher.ts';
import type { BatchOutcome } from '../../src/send/sink.ts';
import { OutageError } from '../../src/send/stop.ts';
import { type DispatchTestOptions, dispatchSettings } from '../helpers/dispatch.ts';
import { useSimulator } from '../helpers/simulator.ts';
import { makeTx, range } from '../helpers/transactions.ts';

const sim = useSimulator({ seed: 3 }, 'reset');
let client: SvcClient;

beforeAll(async () => {
  client = createClient(
    loadConfig({
      env: {},
      flags: {
        baseUrl: { value: sim.url, flag: '--base-url' },
        timeoutMs: { value: 2000, flag: '--timeout' },
      },
    }),
  );
});
afterAll(async () => {
  await client.close();
});

function batches(n: number, size: number, prefix: string): Batch[] {
  return range(n).map((b) => ({
    id: `${prefix}-${b + 1}`,
    items: range(size, b * size).map((i) => {
      const tx = makeTx(i, prefix);
      return { id: tx.transactionId, json: JSON.stringify(tx), source: 'mem', line: i + 2 };
    }),
  }));
}

async function run(bs: Batch[], opts: DispatchTestOptions = {}) {
  const { settings, rest: given } = dispatchSettings(opts, {
    concurrency: 4,
    maxRetries: 5,
    retryBaseMs: 1,
    retryMaxMs: 20,
  });
  const outcomes: BatchOutcome[] = [];
  let retries = 0;
  const d = createDispatcher({
    post: (txs, o) => client.postTransactionsJson(txs, o),
    settings,
    async onOutcome(o) {
      outcomes.push(o);
    },
    onRetry() {
      retries++;
    },
    ...given,
  });
  let error: unknown = null;
  try {
    for (const b of bs) await d.submit(b);
    await d.drain();
  } catch (err) {
    error = err;
    await d.drain().catch(() => {});
  }
  return { outcomes, retries, error };
}

describe('dispatcher against the simulator', () => {
  it('delivers every batch once with at most `concurrency` requests in flight', async () => {
    sim.setFaults({ latencyMs: 20 });
    const { outcomes } = await run(batches(12, 50, 'ok'), { concurrency: 3 });
    expect(outcomes.every((o) => o.status === 'acked' && o.attempts === 1)).toBe(true);
    const st = sim.stats();
    expect(st.transactions).toMatchObject({ accepted: 600, distinct: 600, duplicates: 0 });
    expect(st.maxInFlight).toBe(3);
    expect(st.largestBatch).toBe(50);
  });

  it('retries 500s: requests on the server = attempts, attempts = retries + 1', async () => {
    sim.setFaults({ failFirst: 2 });
    const { outcomes, retries } = await run(batches(5, 10, 'ff'));
    expect(outcomes.map((o) => o.attempts)).toEqual([3, 3, 3, 3, 3]);
    expect(retries).toBe(10);
    expect(sim.stats().requests.byPath['/v2/data/transactions']).toBe(15);
    expect(sim.stats().transactions.distinct).toBe(50);
  });

  it('marks a batch failed after max retries, with the last status, and does not stop the others', async () => {
    sim.setFaults({ failFirst: 3 });
    const { outcomes } = await run(batches(3, 5, 'mx'), { maxRetries: 1, splitRetries: 0 });
    expect(outcomes.map((o) => [o.status, o.attempts, o.httpStatus])).toEqual([
      ['failed', 2, 500],
      ['failed', 2, 500],
      ['failed', 2, 500],
    ]);
    expect(outcomes[0]?.error).toMatch(/500/);
  });

  it('honours Retry-After on 429', async () => {
    sim.setFaults({ rate429: 1, retryAfterS: 1 });
    const t0 = performance.now();
    const p = run(batches(1, 5, 'ra'), { maxRetries: 3 });
    await new Promise((r) => setTimeout(r, 300));
    sim.setFaults({ rate429: 0 });
    const { outcomes } = await p;
    expect(outcomes[0]).toMatchObject({ status: 'acked', attempts: 2 });
    expect(performance.now() - t0).toBeGreaterThanOrEqual(950);
  });

  it('isolates a poison record by splitting, while the good ones are delivered', async () => {
    sim.setFaults({ poison: ['po-00000017'] });
    const { outcomes } = await run(batches(3, 20, 'po'), { maxRetries: 1 });
    const failed = outcomes.filter((o) => o.status === 'failed');
    expect(failed).toHaveLength(1);
    expect(failed[0]?.items.map((i) => i.id)).toEqual(['po-00000017']);
    expect(sim.stats().transactions.distinct).toBe(59);
    expect(sim.deliveries().has('po-00000017')).toBe(false);
    // One poison record in a batch of 20: ceil(log2 20) = 5 levels, 2 halves each, (splitRetries + 1) attempts each.
    const sends = sim.stats().requests.byPath['/v2/data/transactions'] ?? 0;
    expect(sends).toBeLessThanOrEqual(2 /* other batches */ + 2 /* first try + retry */ + 2 * 5 * 2);
  });

  it('does not retry a 400 and splits it down to the refused record', async () => {
    const bad = batches(1, 8, 'v4');
    const item = bad[0]!.items[5]!;
    item.json = JSON.stringify({ ...JSON.parse(item.json), paymentNetworkMCC: '12' });
    const { outcomes } = await run(bad, { maxRetries: 5 });
    const failed = outcomes.filter((o) => o.status === 'failed');
    expect(failed.map((o) => o.items.map((i) => i.id))).toEqual([['v4-00000005']]);
    expect(failed[0]?.httpStatus).toBe(400);
    expect(failed[0]?.attempts).toBe(1);
    expect(sim.stats().transactions.distinct).toBe(7);
  });

  it('opens the breaker when every batch fails, probes, then gives up without hammering', async () => {
    sim.setFaults({ failRate: 1 });
    const { outcomes, error } = await run(batches(40, 5, 'down'), {
      concurrency: 2,
      maxRetries: 1,
      breakerThreshold: 3,
      outageMaxMs: 300,
      retryBaseMs: 20,
      retryMaxMs: 100,
    });
    expect(error).toBeInstanceOf(OutageError);
    const sends = sim.stats().requests.byPath['/v2/data/transactions'] ?? 0;
    expect(sends).toBeLessThan(20);
    // Every batch handed over is accounted for in an outcome; none acked.
    expect(outcomes.every((o) => o.status === 'failed')).toBe(true);
    expect(outcomes.length).toBeLessThan(40);
  });

  it('a ledger failure is fatal: submit rejects, nothing more is sent', async () => {
    let n = 0;
    const { error, outcomes } = await run(batches(20, 5, 'lf'), {
      concurrency: 1,
      async onOutcome() {
        if (++n === 3) throw new Error('disk full');
      },
    });
    expect(String(error)).toMatch(/disk full/);
    expect(outcomes).toHaveLength(0);
    expect(sim.stats().requests.byPath['/v2/data/transactions']).toBeLessThanOrEqual(4);
  });
});
