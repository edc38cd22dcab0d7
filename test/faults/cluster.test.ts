// Several workers on one PostgreSQL ledger, through the real CLI against the simulator: three workers with one
// killed -9 mid-partition, the database restarted mid-run (waited for; and, past ledger.waitMs, a clean stop),
// two workers given overlapping inputs, and a paused worker whose lease ran out taken over.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  dbName,
  openClaimCount,
  openClaims,
  plan,
  runWorker,
  startWorker,
  statusOf,
  until,
  workerRow,
  workerSummary,
} from '../helpers/backfill.ts';
import { runCliHere, startCli } from '../helpers/cli.ts';
import { usePostgres } from '../helpers/postgres.ts';
import { useSimulator } from '../helpers/simulator.ts';
import { makeTx, ndjsonOf, range } from '../helpers/transactions.ts';
import { deliveryCounts, FAST, NO_FAULTS, report, STACK, workdir, writeNdjson } from './helpers.ts';

const pgs = usePostgres({ own: true });
const sim = useSimulator({ seed: 1212 }, 'reset');

/** NDJSON bytes of one makeTx record (ids of one prefix have one length): to size partitions in records. */
const recordBytes = (prefix: string) => JSON.stringify(makeTx(0, prefix)).length + 1;

// Three CLI workers, the simulator and PostgreSQL per test: on a shared machine with test files running in
// parallel, a test took past the default 60 s (6 s alone); each waits for its conditions, so a longer limit.
describe('workers on a shared PostgreSQL ledger', { timeout: 180_000 }, () => {
  it('three workers, one killed -9 mid-partition: every valid id delivered; extra deliveries only of the killed worker’s in-flight claims, <= its concurrency x 50', async () => {
    const CONCURRENCY = 4;
    const RECORDS = 12_000;
    const w = await workdir('cluster-kill');
    const file = join(w.dir, 'in.ndjson');
    const ids = await writeNdjson(file, RECORDS, 'ck');
    const url = await pgs.createDatabase();
    await plan(url, [file], 1000 * recordBytes('ck'), ['--base-url', sim.url]);
    // A 40 ms service: a partition takes a worker ~0.25 s, long enough for the poll below to find w2 in one on a
    // loaded machine (at 10 ms the whole run took ~0.2 s, and the suite's load once let it pass unseen).
    sim.setFaults({ ...NO_FAULTS, latencyMs: 40, jitterMs: 5 });
    const o = { sim, dir: w.dir, concurrency: CONCURRENCY };
    // w2 is the one killed: a process of its own. w1 and w3 run in this process (no signal reaches them).
    const w1 = runWorker(url, 'w1', o);
    const w2 = startWorker(url, 'w2', o);
    const w3 = runWorker(url, 'w3', o);
    // Mid-partition: it has acknowledged batches, holds a partition, and has records claimed and not yet recorded.
    // Once seen, looked at again with w2 stopped (SIGSTOP), so that it cannot record its claims between the look
    // and the kill (a loaded machine once let it finish everything it held in that gap). Four batches acknowledged
    // are enough: asking for 1,500 records (into its second partition of 1,000) left a window of a few polls when
    // the two workers in this process took most partitions, and once none at all (CI, 2026-11-27).
    const midPartition = async () => {
      const r = await workerRow(pgs, url, 'w2');
      return (
        r !== null &&
        r.recordsAcked >= 4 * 50 &&
        r.holding !== null &&
        (await openClaimCount(pgs, url, 'w2')) >= 100
      );
    };
    await until(
      async () => {
        if (!(await midPartition())) return false;
        w2.child.kill('SIGSTOP');
        if (await midPartition()) return true;
        w2.child.kill('SIGCONT');
        return false;
      },
      60_000,
      'w2 mid-partition',
    );
    w2.child.kill('SIGKILL');
    const killed = await w2.done;
    expect(killed.signal).toBe('SIGKILL');
    // What the dead worker had claimed and not recorded acknowledged: the only ids that may go out twice.
    const inFlight = await openClaims(pgs, url, 'w2');
    expect(inFlight.size).toBeGreaterThan(0);
    const heldPartition = (await workerRow(pgs, url, 'w2'))?.holding;
    expect(heldPartition).not.toBeNull();
    const [r1, r3] = await Promise.all([w1, w3]);
    for (const r of [r1, r3]) {
      expect(r.code, r.stderr.slice(-2000)).toBe(0);
      expect(r.stderr).not.toMatch(STACK);
    }
    const s1 = workerSummary(r1);
    const s3 = workerSummary(r3);
    expect(s1.partitions.takenOver + s3.partitions.takenOver).toBeGreaterThanOrEqual(1);

    const d = deliveryCounts(sim, ids);
    expect(d.missing).toBe(0);
    const deliveries = sim.deliveries();
    const twice = ids.filter((id) => (deliveries.get(id) ?? 0) > 1);
    for (const id of twice) expect(inFlight.has(id), `${id} delivered twice`).toBe(true);
    expect(d.extra).toBeLessThanOrEqual(CONCURRENCY * 50);
    expect(sim.stats().transactions.distinct).toBe(RECORDS);

    const st = (await statusOf(url)) as unknown as {
      done: boolean;
      partitions: { total: number; done: number; stale: number; takenOver: number };
      records: { read: number; sent: number; skipped: number; failed: number; rejected: number };
      acked: { records: number };
      workers: Array<{ workerId: string; state: string }>;
    };
    expect(st.done).toBe(true);
    expect(st.partitions.total).toBeGreaterThanOrEqual(12);
    expect(st.partitions).toMatchObject({ done: st.partitions.total, stale: 0 });
    expect(st.partitions.takenOver).toBeGreaterThanOrEqual(1);
    expect(st.records.read).toBe(RECORDS);
    expect(st.records.sent + st.records.skipped).toBe(RECORDS);
    expect(st.records.failed).toBe(0);
    // Every acknowledgement the workers recorded, the dead one's included: each id once, plus what was in flight.
    expect(st.acked.records).toBeGreaterThanOrEqual(RECORDS);
    expect(st.workers.map((x) => [x.workerId, x.state])).toEqual([
      ['w1', 'stopped'],
      ['w2', 'gone'],
      ['w3', 'stopped'],
    ]);
    report('cluster: 3 workers, one killed -9 mid-partition', {
      records: RECORDS,
      killedInFlightClaims: inFlight.size,
      duplicates: d.extra,
      bound: CONCURRENCY * 50,
      takenOver: st.partitions.takenOver,
      exits: [r1.code, 'SIGKILL', r3.code],
    });
  });

  it('the database restarted mid-run: the workers wait for it and go on; every id delivered exactly once', async () => {
    const RECORDS = 8_000;
    const w = await workdir('cluster-restart');
    const file = join(w.dir, 'in.ndjson');
    const ids = await writeNdjson(file, RECORDS, 'rs');
    const url = await pgs.createDatabase();
    await plan(url, [file], 1000 * recordBytes('rs'), ['--base-url', sim.url]);
    sim.setFaults({ ...NO_FAULTS, latencyMs: 10, jitterMs: 5 });
    // A lease longer than the outage: nothing is taken over, so nothing may go out twice.
    const o = { sim, dir: w.dir, concurrency: 4, leaseMs: 15_000 };
    const a = startWorker(url, 'a', o);
    const b = startWorker(url, 'b', o);
    // Both connected first: a worker whose very first connection meets the closed database stops at once
    // (LEDGER_READ, by design), which a loaded machine once made happen by starting one of them late.
    await until(
      async () =>
        sim.stats().transactions.accepted >= 2000 &&
        (await workerRow(pgs, url, 'a')) !== null &&
        (await workerRow(pgs, url, 'b')) !== null,
      60_000,
      '2000 accepted, both workers registered',
    );
    const t0 = Date.now();
    await pgs.restart(1500);
    const downMs = Date.now() - t0;
    const [ra, rb] = await Promise.all([a.done, b.done]);
    for (const r of [ra, rb]) {
      expect(r.code, r.stderr.slice(-2000)).toBe(0);
      expect(r.stderr).not.toMatch(STACK);
    }
    // At least one of them met the closed database and waited for it.
    expect(ra.stderr + rb.stderr).toMatch(/"event":"ledger\.pg\.retry"/);
    expect(deliveryCounts(sim, ids)).toEqual({ missing: 0, once: RECORDS, duplicated: 0, extra: 0 });
    const st = await statusOf(url);
    expect(st).toMatchObject({ done: true, records: { read: RECORDS, sent: RECORDS, failed: 0 } });
    report('cluster: database restarted mid-run (waits, goes on)', {
      records: RECORDS,
      databaseDownMs: downMs,
      duplicates: 0,
      exits: [ra.code, rb.code],
    });
  });

  it('the database down longer than ledger.waitMs: the workers stop with one LEDGER_WRITE line; a worker started once it is back finishes; nothing lost', async () => {
    const CONCURRENCY = 4;
    const RECORDS = 8_000;
    const w = await workdir('cluster-down');
    const file = join(w.dir, 'in.ndjson');
    const ids = await writeNdjson(file, RECORDS, 'dn');
    const url = await pgs.createDatabase();
    await plan(url, [file], 1000 * recordBytes('dn'), ['--base-url', sim.url]);
    sim.setFaults({ ...NO_FAULTS, latencyMs: 10, jitterMs: 5 });
    const o = { sim, dir: w.dir, concurrency: CONCURRENCY, leaseMs: 2000, waitMs: 1000 };
    const a = startWorker(url, 'a', o);
    const b = startWorker(url, 'b', o);
    await until(async () => sim.stats().transactions.accepted >= 2000, 60_000, '2000 accepted');
    const restarted = pgs.restart(5000);
    const [ra, rb] = await Promise.all([a.done, b.done]);
    await restarted;
    for (const r of [ra, rb]) {
      expect(r.code, r.stderr.slice(-2000)).toBe(1);
      expect(r.stderr).not.toMatch(STACK);
      expect(r.stderr).toMatch(/^svc-ingest: LEDGER_WRITE: .*postgres:\/\/postgres@127\.0\.0\.1/m);
      expect(r.stderr).not.toContain(pgs.password);
    }
    // Started once the database is back (no signal, no outage): in this process.
    const rc = await runWorker(url, 'c', o);
    expect(rc.code, rc.stderr.slice(-2000)).toBe(0);
    const d = deliveryCounts(sim, ids);
    expect(d.missing).toBe(0);
    // Accepted by the service while the database was gone, so never recorded: at most both workers' batches in flight.
    expect(d.extra).toBeLessThanOrEqual(2 * CONCURRENCY * 50);
    expect(await statusOf(url)).toMatchObject({ done: true, records: { read: RECORDS, failed: 0 } });
    report('cluster: database down past ledger.waitMs (stops cleanly, resumed later)', {
      records: RECORDS,
      duplicates: d.extra,
      bound: 2 * CONCURRENCY * 50,
      exits: [ra.code, rb.code, rc.code],
    });
  });

  it('a worker waiting for a partition when the database goes away past ledger.waitMs stops with one LEDGER_WRITE line naming the ledger', async () => {
    const RECORDS = 3_000;
    const w = await workdir('cluster-down-waiting');
    const file = join(w.dir, 'in.ndjson');
    const ids = await writeNdjson(file, RECORDS, 'dw');
    const url = await pgs.createDatabase();
    await plan(url, [file], 64 * 1024 * 1024, ['--base-url', sim.url]); // one partition: a holds it, b can only wait
    sim.setFaults({ ...NO_FAULTS, latencyMs: 100 });
    const o = { sim, dir: w.dir, concurrency: 1, leaseMs: 2000, waitMs: 1000 };
    const a = startWorker(url, 'a', o);
    await until(
      async () => (await workerRow(pgs, url, 'a'))?.holding != null,
      60_000,
      'a holds the partition',
    );
    const b = startWorker(url, 'b', o);
    let bWaiting = false;
    b.child.stderr?.on('data', (d: Buffer) => {
      if (d.toString().includes('"event":"backfill.waiting"')) bWaiting = true;
    });
    await until(async () => bWaiting, 60_000, 'b waiting for a partition');
    const restarted = pgs.restart(4000);
    const [ra, rb] = await Promise.all([a.done, b.done]);
    await restarted;
    // b met the closed database in the statements of the backfill itself (claim, open partitions), not the store's.
    expect(rb.code, rb.stderr.slice(-2000)).toBe(1);
    expect(rb.stderr).not.toMatch(STACK);
    expect(rb.stderr).not.toMatch(/unexpected error/);
    expect(rb.stderr).toMatch(
      /^svc-ingest: LEDGER_WRITE: cannot (claim a partition|read the backfill) in postgres:\/\/postgres@127\.0\.0\.1/m,
    );
    expect(rb.stderr).not.toContain(pgs.password);
    expect(ra.code, ra.stderr.slice(-2000)).toBe(1);
    expect(ra.stderr).not.toMatch(/unexpected error/);
    // Nothing lost: a worker started once the database is back finishes the partition (in this process, and
    // without the 100 ms latency that kept a in the partition).
    sim.setFaults({ ...NO_FAULTS, latencyMs: 5 });
    const rc = await runWorker(url, 'c', o);
    expect(rc.code, rc.stderr.slice(-2000)).toBe(0);
    expect(deliveryCounts(sim, ids).missing).toBe(0);
  });

  it('two workers given overlapping inputs at once: each shared id delivered once', async () => {
    const SHARED = 1500;
    const w = await workdir('cluster-overlap');
    const shared = range(SHARED).map((i) => makeTx(i, 'ov'));
    const onlyA = range(1500, SHARED).map((i) => makeTx(i, 'ov'));
    const onlyB = range(1500, SHARED + 1500).map((i) => makeTx(i, 'ov'));
    const a = join(w.dir, 'a.ndjson');
    const b = join(w.dir, 'b.ndjson');
    // Both files start with the shared ids: the two workers meet them at the same time.
    await writeFile(a, ndjsonOf([...shared, ...onlyA]));
    await writeFile(b, ndjsonOf([...shared, ...onlyB]));
    const url = await pgs.createDatabase();
    await plan(url, [a, b], 64 * 1024 * 1024, ['--base-url', sim.url]); // one partition per file
    sim.setFaults({ ...NO_FAULTS, latencyMs: 5, jitterMs: 5 });
    const o = { sim, dir: w.dir, concurrency: 4 };
    // Both in this process, at once (no signal here: the race is between the two claims on the database).
    const [ra, rb] = await Promise.all([runWorker(url, 'a', o), runWorker(url, 'b', o)]);
    expect(ra.code, ra.stderr.slice(-2000)).toBe(0);
    expect(rb.code, rb.stderr.slice(-2000)).toBe(0);
    const all = [...shared, ...onlyA, ...onlyB].map((t) => t.transactionId);
    expect(deliveryCounts(sim, all)).toEqual({ missing: 0, once: all.length, duplicated: 0, extra: 0 });
    const sa = workerSummary(ra);
    const sb = workerSummary(rb);
    expect(sa.partitions.done + sb.partitions.done).toBe(2);
    // Each shared id was sent by one and skipped by the other.
    expect(sa.sent + sb.sent).toBe(all.length);
    expect(sa.skipped + sb.skipped).toBe(SHARED);
    expect(await statusOf(url)).toMatchObject({
      done: true,
      records: { read: all.length + SHARED, sent: all.length, skipped: SHARED, failed: 0 },
    });
    report('cluster: two workers, overlapping inputs', {
      shared: SHARED,
      sentA: sa.sent,
      sentB: sb.sent,
      skippedA: sa.skipped,
      skippedB: sb.skipped,
      duplicates: 0,
    });
  });

  it('two sends with overlapping inputs at once on one PostgreSQL ledger: each shared id delivered once', async () => {
    const SHARED = 1500;
    const w = await workdir('send-overlap');
    const shared = range(SHARED).map((i) => makeTx(i, 'so'));
    const a = join(w.dir, 'a.ndjson');
    const b = join(w.dir, 'b.ndjson');
    await writeFile(a, ndjsonOf([...shared, ...range(1000, SHARED).map((i) => makeTx(i, 'so'))]));
    await writeFile(b, ndjsonOf([...shared, ...range(1000, SHARED + 1000).map((i) => makeTx(i, 'so'))]));
    const url = await pgs.createDatabase();
    // The schema first, so that both runs start sending at once.
    expect((await runCliHere(['ledger', 'migrate', '--ledger', url])).code).toBe(0);
    sim.setFaults({ ...NO_FAULTS, latencyMs: 5, jitterMs: 5 });
    const env = { SVC_BASE_URL: sim.url, SVC_LEDGER_LEASE_MS: '2000' };
    // Both in this process, at once (no signal here: the race is between the two claims on the database).
    const send = (file: string, rejects: string) =>
      runCliHere(['send', ...FAST, '--ledger', url, '--rejects', rejects, file], { env });
    const [ra, rb] = await Promise.all([
      send(a, join(w.dir, 'ra.ndjson')),
      send(b, join(w.dir, 'rb.ndjson')),
    ]);
    expect(ra.code, ra.stderr).toBe(0);
    expect(rb.code, rb.stderr).toBe(0);
    const sa = JSON.parse(ra.stdout.trim().split('\n').pop()!) as Record<string, number>;
    const sb = JSON.parse(rb.stdout.trim().split('\n').pop()!) as Record<string, number>;
    const all = [...shared.map((t) => t.transactionId)];
    for (let i = SHARED; i < SHARED + 2000; i++) all.push(makeTx(i, 'so').transactionId);
    expect(deliveryCounts(sim, all)).toEqual({ missing: 0, once: all.length, duplicated: 0, extra: 0 });
    expect(sa.sent! + sb.sent!).toBe(all.length);
    expect(sa.skipped! + sb.skipped!).toBe(SHARED);
    const acked = await pgs.sql<{ n: number }>(
      dbName(url),
      `SELECT count(*)::int AS n FROM svc_ingest.transaction_states WHERE state = 'acked'`,
    );
    expect(acked).toEqual([{ n: all.length }]);
  });

  it('a send paused past its lease: another send takes its claims over; when it wakes it sends no further batch (LEDGER_LEASE, exit 1)', async () => {
    const CONCURRENCY = 4;
    const w = await workdir('send-stale');
    const file = join(w.dir, 'in.ndjson');
    const ids = await writeNdjson(file, 4000, 'sp');
    const url = await pgs.createDatabase();
    expect((await runCliHere(['ledger', 'migrate', '--ledger', url])).code).toBe(0);
    // 40 ms a request: a, at 4 in flight, takes ~0.9 s over the 3,800 records left after the first 200 acknowledged,
    // the margin for the poll below to see them and stop it before it ends (at 15 ms, ~0.35 s: a loaded machine's
    // poll missed it once, and a ended with all sent, exit 0).
    sim.setFaults({ ...NO_FAULTS, latencyMs: 40, jitterMs: 5 });
    const env = { SVC_BASE_URL: sim.url, SVC_LEDGER_LEASE_MS: '1500' };
    const args = (rejects: string) => [
      'send',
      ...FAST,
      '--concurrency',
      String(CONCURRENCY),
      '--ledger',
      url,
      '--rejects',
      rejects,
      file,
    ];
    const acked = async () =>
      (
        await pgs.sql<{ n: number }>(
          dbName(url),
          `SELECT count(*)::int AS n FROM svc_ingest.transaction_states WHERE state = 'acked'`,
        )
      )[0]?.n ?? 0;
    // a is stopped (SIGSTOP): a process of its own; b, which takes its claims over, runs in this process.
    const a = startCli(args(join(w.dir, 'ra.ndjson')), { env });
    await until(async () => (await acked()) >= 200, 60_000, 'a acknowledged 200');
    a.child.kill('SIGSTOP');
    try {
      // a's lease (1.5 s) runs out while it is stopped.
      await new Promise((r) => setTimeout(r, 2500));
      const rb = await runCliHere(args(join(w.dir, 'rb.ndjson')), { env });
      expect(rb.code, rb.stderr.slice(-2000)).toBe(0);
    } finally {
      a.child.kill('SIGCONT');
    }
    const ra = await a.done;
    expect(ra.code, ra.stderr.slice(-2000)).toBe(1);
    expect(ra.stderr).toMatch(/LEDGER_LEASE/);
    expect(ra.stderr).not.toMatch(/\n\s+at /);
    const d = deliveryCounts(sim, ids);
    expect(d.missing).toBe(0);
    // Sent twice: only batches a had on the wire, or past the claims check, when it was paused — at most one per
    // slot. Without the check a woken a also sends the groups it had admitted ahead (250-300 measured, over 200).
    expect(d.extra).toBeLessThanOrEqual(CONCURRENCY * 50);
    // Whatever a had read and not sent is failed in the ledger, and the other send delivered it.
    const failedLines = await pgs.sql<{ n: number }>(
      dbName(url),
      "SELECT count(*)::int AS n FROM svc_ingest.batches WHERE status = 'failed' AND error LIKE '%lease on the ledger%'",
    );
    expect(failedLines[0]?.n ?? 0).toBeGreaterThan(0);
    expect(await acked()).toBe(ids.length);
    report('cluster: send paused past its lease', {
      records: ids.length,
      duplicates: d.extra,
      bound: CONCURRENCY * 50,
    });
  });

  it('a paused worker whose lease ran out: its partition is taken over and finished; when it wakes it lets go; extra deliveries only of its in-flight claims', async () => {
    const CONCURRENCY = 4;
    const PER_PARTITION = 3000;
    const w = await workdir('cluster-stale');
    const file = join(w.dir, 'in.ndjson');
    const ids = await writeNdjson(file, 2 * PER_PARTITION, 'st');
    const url = await pgs.createDatabase();
    await plan(url, [file], PER_PARTITION * recordBytes('st'), ['--base-url', sim.url]);
    sim.setFaults({ ...NO_FAULTS, latencyMs: 15, jitterMs: 5 });
    const o = { sim, dir: w.dir, concurrency: CONCURRENCY, leaseMs: 1500 };
    const a = startWorker(url, 'a', o);
    await until(
      async () => ((await workerRow(pgs, url, 'a'))?.recordsAcked ?? 0) >= 500,
      60_000,
      'a acknowledged 500',
    );
    a.child.kill('SIGSTOP');
    const pausedClaims = await openClaims(pgs, url, 'a');
    try {
      // a is stopped (SIGSTOP): a process of its own; b, which takes its partition over, runs in this process.
      const rb = await runWorker(url, 'b', o);
      expect(rb.code, rb.stderr.slice(-2000)).toBe(0);
      const sb = workerSummary(rb);
      const st = (await statusOf(url)) as unknown as { done: boolean; partitions: Record<string, number> };
      expect(st.done).toBe(true);
      expect(st.partitions).toMatchObject({ done: st.partitions.total, takenOver: 1, takeovers: 1 });
      // b did them all: its own, and a's once a's lease had run out.
      expect(sb.partitions).toMatchObject({ done: st.partitions.total, takenOver: 1 });
    } finally {
      a.child.kill('SIGCONT');
    }
    const ra = await a.done;
    expect(ra.code, ra.stderr.slice(-2000)).toBe(0);
    expect(ra.stderr).toMatch(/"event":"ledger\.lease\.lapsed"/);
    expect(ra.stderr).toMatch(/"event":"backfill\.partition\.lost"/);
    expect(workerSummary(ra).partitions).toMatchObject({ done: 0, lost: 1 });
    const d = deliveryCounts(sim, ids);
    expect(d.missing).toBe(0);
    const deliveries = sim.deliveries();
    for (const id of ids.filter((x) => (deliveries.get(x) ?? 0) > 1))
      expect(pausedClaims.has(id), `${id} delivered twice`).toBe(true);
    expect(d.extra).toBeLessThanOrEqual(CONCURRENCY * 50);
    report('cluster: paused worker, stale lease taken over', {
      records: ids.length,
      pausedInFlightClaims: pausedClaims.size,
      duplicates: d.extra,
      bound: CONCURRENCY * 50,
    });
  });
});
