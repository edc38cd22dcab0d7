// A `backfill work` SIGKILLed and started again with the same --worker-id, through the real CLI: the new process proves
// its predecessor gone (same host, its pid gone) and takes its partition back at once — no wait for the lease — and
// the backfill ends with every id delivered once (duplicates within concurrency × batch size), each reject written
// once; a second process with the id of a live worker is refused with one line; a worker stopped by SIGTERM while it
// waits for partitions held by others exits 143 with `interrupted` set.
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { deliveryCounts, NO_FAULTS, STACK } from '../faults/helpers.ts';
import { dbName, plan, runWorker, startWorker, statusOf, until, workerSummary } from '../helpers/backfill.ts';
import { usePostgres } from '../helpers/postgres.ts';
import { useSimulator } from '../helpers/simulator.ts';
import { makeTx, ndjsonOf, range } from '../helpers/transactions.ts';

const pgs = usePostgres();
const sim = useSimulator({ seed: 29 }, 'reset');

/** A lease far longer than the test may wait: taking the partition back must not wait for it. */
const LEASE_MS = 60_000;
const CONCURRENCY = 2;
const BATCH = 50;

describe('a worker restarted with its own id', () => {
  it('takes its partition back at once after a SIGKILL; a live one with the same id is refused; SIGTERM while waiting exits 143', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-restart-'));
    // Three rejects early in the file (lines 11, 21, 31): written by the first process before it dies.
    const { file, ids } = await inputWithRejects(dir, 3000);
    const url = await pgs.createDatabase();
    await plan(url, [file], 10_000_000, ['--base-url', sim.url]); // one partition
    sim.setFaults({ ...NO_FAULTS, latencyMs: 150, jitterMs: 10 });
    const opts = { sim, dir, leaseMs: LEASE_MS, concurrency: CONCURRENCY };

    const first = startWorker(url, 'w1', opts);
    await until(async () => sim.stats().transactions.accepted >= 600, 60_000, 'w1 mid-partition');
    first.child.kill('SIGKILL');
    expect((await first.done).signal).toBe('SIGKILL');

    const restartedAt = performance.now();
    const again = startWorker(url, 'w1', opts);
    const before = sim.stats().transactions.accepted;
    await until(async () => sim.stats().transactions.accepted > before + 200, 30_000, 'w1 again sending');
    // The id is held by a live process now: a second one is refused, in one line, exit 1, having sent nothing.
    const twin = await runWorker(url, 'w1', opts);
    expect(twin.code).toBe(1);
    expect(twin.stderr).not.toMatch(STACK);
    const refusal = twin.stderr
      .trim()
      .split('\n')
      .filter((l) => /USAGE_INVALID/.test(l));
    expect(refusal).toHaveLength(1);
    expect(refusal[0]).toMatch(
      /worker id w1 is held by a live worker \(host .+, pid \d+, started .+\).*another --worker-id/,
    );
    // Another worker finds the only partition held and waits; SIGTERM then is an interruption: 143, `interrupted`.
    const waiter = startWorker(url, 'w2', opts);
    let log = '';
    waiter.child.stderr?.on('data', (c: Buffer) => {
      log += c.toString();
    });
    await until(async () => log.includes('backfill.waiting'), 30_000, 'w2 waiting');
    waiter.child.kill('SIGTERM');
    const stopped = await waiter.done;
    expect(stopped.code, stopped.stderr.slice(-1500)).toBe(143);
    expect(workerSummary(stopped)).toMatchObject({ interrupted: 'SIGTERM', read: 0, sent: 0 });

    const r = await again.done;
    const elapsedMs = performance.now() - restartedAt;
    expect([0, 2], r.stderr.slice(-2000)).toContain(r.code);
    const s = workerSummary(r);
    expect(s.partitions).toMatchObject({ done: 1, takenOver: 1 });
    expect(r.stderr).toMatch(/ledger\.worker\.replaced/);
    // No idle wait: the whole second run took a fraction of the lease.
    expect(elapsedMs).toBeLessThan(LEASE_MS / 3);
    const d = deliveryCounts(sim, ids);
    expect(d.missing).toBe(0);
    expect(d.extra).toBeLessThanOrEqual(CONCURRENCY * BATCH);
    expect(await statusOf(url)).toMatchObject({ done: true, partitions: { done: 1, working: 0, stale: 0 } });
    // Each reject once in the worker's rejects file, though its partition was read twice.
    const rejects = (await readFile(join(dir, 'rejects-w1.ndjson'), 'utf8')).trim().split('\n');
    expect(rejects.map((l) => (JSON.parse(l) as { line: number }).line).sort((a, b) => a - b)).toEqual([
      11, 21, 31,
    ]);
  });

  it('a partition taken over by another worker: the rejects its first holder wrote are not written again', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-takeover-rejects-'));
    const { file, ids } = await inputWithRejects(dir, 1200);
    const url = await pgs.createDatabase();
    await plan(url, [file], 10_000_000, ['--base-url', sim.url]);
    sim.setFaults({ ...NO_FAULTS, latencyMs: 100, jitterMs: 10 });
    const lease = { sim, dir, leaseMs: 1500, concurrency: CONCURRENCY };
    const first = startWorker(url, 'a', lease);
    // Killed once its progress has recorded the rejects it wrote (progress: every third of the lease).
    await until(
      async () =>
        (
          await pgs.sql<{ n: string }>(
            dbName(url),
            'SELECT max(rejects_through) AS n FROM svc_ingest.partitions',
          )
        )[0]?.n === '31',
      30_000,
      'rejects recorded',
    );
    first.child.kill('SIGKILL');
    await first.done;
    const taker = await runWorker(url, 'b', lease);
    expect([0, 2], taker.stderr.slice(-2000)).toContain(taker.code);
    expect(workerSummary(taker)).toMatchObject({ rejected: 3, partitions: { done: 1, takenOver: 1 } });
    expect(deliveryCounts(sim, ids).missing).toBe(0);
    const linesOf = async (id: string) =>
      (await readFile(join(dir, `rejects-${id}.ndjson`), 'utf8').catch(() => ''))
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as { line: number }).line);
    expect([...(await linesOf('a')), ...(await linesOf('b'))].sort((x, y) => x - y)).toEqual([11, 21, 31]);
  });
});

/** `count` records, of which those on file lines 11, 21 and 31 do not parse; the ids of the others. */
async function inputWithRejects(dir: string, count: number): Promise<{ file: string; ids: string[] }> {
  const txs = range(count).map((i) => makeTx(i, 'rj'));
  const lines = ndjsonOf(txs).split('\n');
  for (const at of [10, 20, 30]) lines[at] = '{"transactionId": "broken';
  const file = join(dir, 'in.ndjson');
  await writeFile(file, lines.join('\n'));
  return { file, ids: txs.filter((_, i) => ![10, 20, 30].includes(i)).map((t) => t.transactionId) };
}
