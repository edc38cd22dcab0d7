// `backfill work` through the real CLI against the simulator and a real PostgreSQL: partitions of CSV and NDJSON
// files sent through the chain with the file's line numbers, rejects and metrics per worker and summed by
// `backfill status`; SIGTERM gives the partition and the claims back and exits 143; an input changed since it was
// planned, a profile that differs, no plan: one line, exit 1; failed records resent with --retry-failed.
import { appendFile, copyFile, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { beforeEach, describe, expect, it } from 'vitest';
import { deliveryCounts, NO_FAULTS, readRejects, STACK } from '../faults/helpers.ts';
import {
  dbName,
  openClaims,
  plan,
  runWorker,
  startWorker,
  statusOf,
  until,
  workerSummary,
} from '../helpers/backfill.ts';
import { ROOT, runCliHere } from '../helpers/cli.ts';
import { expectHeldOnceStarted, tracedNode } from '../helpers/heap-trace.ts';
import { usePostgres } from '../helpers/postgres.ts';
import { useSimulator } from '../helpers/simulator.ts';
import { csvOf, makeTx, ndjsonOf, range } from '../helpers/transactions.ts';

const pgs = usePostgres();
const sim = useSimulator({ seed: 77 }, 'reset');
let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-work-'));
});

interface Family {
  name: string;
  metrics: Array<{ value?: string; labels?: Record<string, string> }>;
}
function records(text: string, outcome: string): number {
  const fams = parsePrometheusTextFormat(text) as Family[];
  const fam = fams.find((f) => f.name === 'svc_ingest_records_total');
  const hit = fam?.metrics.find((m) => m.labels?.outcome === outcome);
  if (!hit) throw new Error(`no records_total{outcome="${outcome}"}`);
  return Number(hit.value);
}

describe('backfill work', () => {
  it('sends every partition of a CSV and an NDJSON file; rejects keep the file’s line numbers; rejects and metrics per worker, summed by backfill status; a later worker finds nothing to do', async () => {
    const csvTx = range(3000).map((i) => makeTx(i, 'wc'));
    // Records 1500 and 2800 are invalid: file lines 1502 and 2802 (line 1 is the header).
    csvTx[1500]!.postedAmount = '12.50';
    csvTx[2800]!.postedAmount = '1.5';
    const csv = join(dir, 'a.csv');
    await writeFile(csv, csvOf(csvTx));
    const ndTx = range(2000).map((i) => makeTx(i, 'wn'));
    const nd = join(dir, 'b.ndjson');
    const lines = ndjsonOf(ndTx).split('\n');
    lines.splice(1234, 0, '{"transactionId": "broken'); // file line 1235, unparsable
    await writeFile(nd, lines.join('\n'));
    const url = await pgs.createDatabase();
    await plan(url, [csv, nd], 150_000, ['--base-url', sim.url]);
    const metricsOf = (id: string) => join(dir, `metrics-${id}.prom`);
    const o = (id: string) => ({ sim, dir, args: ['--metrics-file', metricsOf(id)] });
    const [r1, r2] = await Promise.all([runWorker(url, 'w1', o('w1')), runWorker(url, 'w2', o('w2'))]);
    const s1 = workerSummary(r1);
    const s2 = workerSummary(r2);
    for (const [r, s] of [
      [r1, s1],
      [r2, s2],
    ] as const) {
      expect(r.code, r.stderr.slice(-2000)).toBe(s.rejected > 0 ? 2 : 0);
      expect(r.stderr).not.toMatch(STACK);
      // Its own metrics file says what its summary says.
      const text = await readFile(metricsOf(s.workerId), 'utf8');
      for (const k of ['read', 'sent', 'skipped', 'failed', 'rejected'] as const)
        expect(records(text, k), `${s.workerId} ${k}`).toBe(s[k]);
    }
    expect(s1.rejected + s2.rejected).toBe(3);
    expect(s1.partitions.done + s2.partitions.done).toBeGreaterThan(4);
    const valid = [...csvTx.filter((_, i) => i !== 1500 && i !== 2800), ...ndTx].map((t) => t.transactionId);
    expect(deliveryCounts(sim, valid)).toEqual({ missing: 0, once: valid.length, duplicated: 0, extra: 0 });
    // Each worker's rejects in its own file, with the line numbers of the whole file.
    const rejects = [
      ...(await readRejects(join(dir, 'rejects-w1.ndjson'))),
      ...(await readRejects(join(dir, 'rejects-w2.ndjson'))),
    ].map((r) => [r.source, r.line]);
    expect(rejects.sort()).toEqual(
      [
        [csv, 1502],
        [csv, 2802],
        [nd, 1235],
      ].sort(),
    );
    const st = (await statusOf(url)) as unknown as {
      done: boolean;
      partitions: { total: number; done: number };
      records: Record<string, number>;
      acked: { records: number };
      workers: Array<{ workerId: string; records: { rejected: number } }>;
    };
    expect(st.done).toBe(true);
    expect(st.records).toEqual({ read: 5001, sent: 4998, skipped: 0, failed: 0, rejected: 3 });
    expect(st.acked.records).toBe(4998);
    expect(st.workers.map((w) => w.records.rejected)).toEqual([s1.rejected, s2.rejected]);
    const text = await runCliHere(['backfill', 'status', '--ledger', url]);
    expect(text.stdout).toMatch(/: done$/m);
    expect(text.stdout).toContain('rejected 3');

    const again = await runWorker(url, 'w3', { sim, dir });
    expect(again.code, again.stderr).toBe(0);
    expect(workerSummary(again)).toMatchObject({ read: 0, sent: 0, partitions: { done: 0 } });
  });

  it('SIGTERM mid-partition: in-flight batches settle, the partition and the unsent claims are given back, the lease ends, exit 143; the next worker sends the rest, no duplicate', async () => {
    const ids = range(6000).map((i) => makeTx(i, 'wt'));
    const file = join(dir, 'in.ndjson');
    await writeFile(file, ndjsonOf(ids));
    const url = await pgs.createDatabase();
    await plan(url, [file], 3000 * (JSON.stringify(ids[0]).length + 1), ['--base-url', sim.url]);
    sim.setFaults({ ...NO_FAULTS, latencyMs: 20, jitterMs: 10 });
    // A long lease: anything not given back would stay claimed for a minute.
    const w = startWorker(url, 'term', { sim, dir, leaseMs: 60_000 });
    await until(async () => sim.stats().transactions.accepted >= 1000, 60_000, '1000 accepted');
    w.child.kill('SIGTERM');
    const r = await w.done;
    expect(r.code, r.stderr.slice(-2000)).toBe(143);
    expect(r.stderr).not.toMatch(STACK);
    const s = workerSummary(r);
    expect(s.interrupted).toBe('SIGTERM');
    expect(s.partitions.released).toBe(1);
    expect(s.read).toBe(s.sent + s.skipped + s.failed + s.rejected);
    expect(await openClaims(pgs, url, 'term')).toEqual(new Set());
    const db = dbName(url);
    const [worker] = await pgs.sql<{ stopped: boolean; live: boolean }>(
      db,
      `SELECT stopped_at IS NOT NULL AS stopped, lease_until > now() AS live FROM svc_ingest.workers WHERE worker_id = 'term'`,
    );
    expect(worker).toEqual({ stopped: true, live: false });
    const st = (await statusOf(url)) as unknown as { partitions: Record<string, number> };
    expect(st.partitions).toMatchObject({ working: 0, stale: 0 });
    expect(st.partitions.pending).toBeGreaterThanOrEqual(1);
    // Drained: the service holds exactly what the ledger shows acknowledged.
    const acked = await pgs.sql<{ n: number }>(
      db,
      `SELECT count(*)::int AS n FROM svc_ingest.transaction_states WHERE state = 'acked'`,
    );
    expect(acked).toEqual([{ n: sim.deliveries().size }]);

    sim.setFaults(NO_FAULTS);
    const next = await runWorker(url, 'next', { sim, dir });
    expect(next.code, next.stderr.slice(-2000)).toBe(0);
    expect(
      deliveryCounts(
        sim,
        ids.map((t) => t.transactionId),
      ),
    ).toEqual({
      missing: 0,
      once: ids.length,
      duplicated: 0,
      extra: 0,
    });
    expect(await statusOf(url)).toMatchObject({ done: true, records: { read: 6000, failed: 0 } });
  });

  it('an input changed since it was planned, or a profile that differs from the planned one: one line, exit 1, the partition pending again', async () => {
    const file = join(dir, 'in.csv');
    await writeFile(file, csvOf(range(300).map((i) => makeTx(i, 'ch'))));
    const profile = join(dir, 'profile.json');
    await copyFile(join(ROOT, 'config/mappings/northwind-csv.json'), profile);
    const url = await pgs.createDatabase();
    await plan(url, [file], 1 << 20, ['--base-url', sim.url]);
    await appendFile(file, `${csvOf([makeTx(999, 'ch')]).split('\n')[1]}\n`);
    const r = await runWorker(url, 'x', { sim, dir });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^svc-ingest: USAGE_INVALID: .*in\.csv was planned when it had \d+ bytes/m);
    expect(r.stderr).not.toMatch(STACK);
    expect(await statusOf(url)).toMatchObject({ partitions: { pending: 1, working: 0 } });

    const nw = join(dir, 'nw.csv');
    await writeFile(nw, await readFile(join(ROOT, 'samples/northwind.csv')));
    const url2 = await pgs.createDatabase();
    await plan(url2, [nw], 1 << 20, ['--mapping', profile, '--base-url', sim.url]);
    const json = JSON.parse(await readFile(profile, 'utf8')) as { description?: string };
    await writeFile(profile, JSON.stringify({ ...json, description: 'edited after planning' }));
    const m = await runWorker(url2, 'y', { sim, dir });
    expect(m.code).toBe(1);
    expect(m.stderr).toMatch(/^svc-ingest: MAPPING_INVALID: mapping .*profile\.json differs on this host/m);
    expect(sim.deliveries().size).toBe(0);
  });

  it("holds V8's old generation to twice its live size once its partitions start (V8's own trace)", async () => {
    const csv = join(dir, 'heap.csv');
    await writeFile(csv, csvOf(range(1000).map((i) => makeTx(i, 'wh'))));
    const url = await pgs.createDatabase();
    await plan(url, [csv], 150_000, ['--base-url', sim.url]);
    const r = await startWorker(url, 'heap', { sim, dir, env: { SVC_INGEST_NODE: await tracedNode(dir) } })
      .done;
    expect(r.code, r.stderr).toBe(0);
    expect(workerSummary(r)).toMatchObject({ read: 1000, sent: 1000 });
    expectHeldOnceStarted(r.stdout);
  });

  it('nothing planned: one line, exit 1', async () => {
    const url = await pgs.createDatabase();
    const r = await runWorker(url, 'z', { sim, dir });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^svc-ingest: USAGE_INVALID: no backfill planned in postgres:\/\/postgres@/m);
    expect(r.stderr).not.toContain(pgs.password);
  });

  it('failed records: exit 3, counted by backfill status; --retry-failed reads their partitions again and resends only them', async () => {
    const txs = range(400).map((i) => makeTx(i, 'rf'));
    const poison = txs[123]!.transactionId;
    const file = join(dir, 'in.ndjson');
    await writeFile(file, ndjsonOf(txs));
    const url = await pgs.createDatabase();
    await plan(url, [file], 100 * (JSON.stringify(txs[0]).length + 1), ['--base-url', sim.url]);
    sim.setFaults({ ...NO_FAULTS, poison: [poison] });
    const r = await runWorker(url, 'p', { sim, dir, args: ['--max-retries', '1'] });
    expect(r.code, r.stderr.slice(-2000)).toBe(3);
    expect(workerSummary(r)).toMatchObject({ sent: 399, failed: 1 });
    expect(await statusOf(url)).toMatchObject({ done: true, records: { sent: 399, failed: 1 } });
    // Without the flag there is nothing to do.
    expect((await runWorker(url, 'q', { sim, dir })).code).toBe(0);
    sim.setFaults(NO_FAULTS);
    const again = await runWorker(url, 'r', { sim, dir, args: ['--retry-failed'] });
    expect(again.code, again.stderr.slice(-2000)).toBe(0);
    expect(workerSummary(again)).toMatchObject({ sent: 1, failed: 0, partitions: { done: 1 } });
    expect(deliveryCounts(sim, [...txs.map((t) => t.transactionId)])).toEqual({
      missing: 0,
      once: 400,
      duplicated: 0,
      extra: 0,
    });
    expect(await statusOf(url)).toMatchObject({ done: true, records: { failed: 0 } });
  });
});
