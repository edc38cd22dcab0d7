// The PostgreSQL ledger out of reach mid-run for longer than the lease and shorter than ledger.waitMs — a fast
// shutdown and a SIGKILL of the postmaster — through the real CLI against the simulator: a lone `send` and a
// `backfill work` wait for it, find on its return that nobody took their claims, and finish: exit 0, every record
// delivered once (counted on the simulator's side). Past ledger.waitMs a worker stops with one LEDGER_WRITE line,
// and that line is the last it writes.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BatchItem } from '../../src/batch/batcher.ts';
import { openPgLedgerStore } from '../../src/ledger/postgres/store.ts';
import { createLogger } from '../../src/log.ts';
import { plan, startWorker, until, workerRow, workerSummary } from '../helpers/backfill.ts';
import { startCli } from '../helpers/cli.ts';
import { pgRef } from '../helpers/ledger-ref.ts';
import { usePostgres } from '../helpers/postgres.ts';
import { useSimulator } from '../helpers/simulator.ts';
import { makeTx } from '../helpers/transactions.ts';
import { deliveryCounts, FAST, NO_FAULTS, report, STACK, workdir, writeNdjson } from './helpers.ts';

// Stopped and killed here: a server of this file's own, whose acknowledged commits a SIGKILL must not cost.
const pgs = usePostgres({ own: true, killSafe: true });
const sim = useSimulator({ seed: 3535 }, 'reset');

/** The lease (the least the configuration takes), the wait, and an outage between the two. */
const LEASE_MS = 1000;
// Generous: a restart after a SIGKILL recovers from the WAL first, seconds on a loaded machine.
const WAIT_MS = 15_000;
const OUTAGE_MS = 2000;
const RECORDS = 6000;

const env = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({
  SVC_BASE_URL: sim.url,
  SVC_LEDGER_LEASE_MS: String(LEASE_MS),
  SVC_LEDGER_WAIT_MS: String(WAIT_MS),
  SVC_LOG_LEVEL: 'info',
  SVC_LOG_FORMAT: 'json',
  ...extra,
});

/** The events of a run's JSON stderr lines, in order. */
function events(rawStderr: string | undefined): string[] {
  return (rawStderr ?? '')
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => String((JSON.parse(l) as { event?: string }).event));
}

/** Take the database down for OUTAGE_MS once `started` holds, then bring it back. */
async function outage(how: 'fast' | 'kill', started: () => Promise<boolean>): Promise<number> {
  await until(started, 60_000, 'the run under way');
  const t0 = Date.now();
  await pgs.down(how);
  await new Promise((r) => setTimeout(r, OUTAGE_MS));
  await pgs.up();
  return Date.now() - t0;
}

describe('the ledger database out of reach longer than the lease, shorter than ledger.waitMs', {
  timeout: 120_000,
}, () => {
  for (const how of ['fast', 'kill'] as const) {
    it(`send --ledger postgres://…, the server ${how === 'fast' ? 'shut down (fast)' : 'killed -9'}: it waits, keeps its claims, exit 0, each record once`, async () => {
      const w = await workdir(`outage-send-${how}`, { pg: pgs });
      const file = join(w.dir, 'in.ndjson');
      const ids = await writeNdjson(file, RECORDS, `os${how}`);
      sim.setFaults({ ...NO_FAULTS, latencyMs: 25, jitterMs: 5 });
      const run = startCli(['send', '--ledger', w.ledger, '--concurrency', '4', ...FAST, file], {
        env: env({ SVC_REJECTS_PATH: w.rejects }),
      });
      const downMs = await outage(how, async () => sim.stats().transactions.accepted >= 1000);
      const r = await run.done;
      expect(r.code, r.stderr.slice(-3000)).toBe(0);
      expect(r.stderr).not.toMatch(STACK);
      const ev = events(r.rawStderr);
      // The outage did outlast the lease: the heartbeat found it run out, the claims were checked and kept.
      expect(ev).toContain('ledger.pg.retry');
      expect(ev).toContain('ledger.lease.lapsed');
      expect(ev).toContain('ledger.claims.kept');
      expect(ev).not.toContain('ledger.claims.takenOver');
      expect(deliveryCounts(sim, ids)).toEqual({ missing: 0, once: RECORDS, duplicated: 0, extra: 0 });
      report(`ledger outage (${how}) under a lone send`, { records: RECORDS, downMs, exit: r.code });
    });

    it(`backfill work, the server ${how === 'fast' ? 'shut down (fast)' : 'killed -9'}: it waits, keeps its partition, exit 0, each record once`, async () => {
      const w = await workdir(`outage-work-${how}`);
      const file = join(w.dir, 'in.ndjson');
      const ids = await writeNdjson(file, RECORDS, `ow${how}`);
      const url = await pgs.createDatabase();
      const bytes = (JSON.stringify(makeTx(0, `ow${how}`)).length + 1) * 2000;
      await plan(url, [file], bytes, ['--base-url', sim.url]);
      sim.setFaults({ ...NO_FAULTS, latencyMs: 25, jitterMs: 5 });
      const worker = startWorker(url, 'solo', {
        sim,
        dir: w.dir,
        leaseMs: LEASE_MS,
        waitMs: WAIT_MS,
        env: { SVC_LOG_FORMAT: 'json' },
      });
      const downMs = await outage(
        how,
        async () => sim.stats().transactions.accepted >= 1000 && (await workerRow(pgs, url, 'solo')) !== null,
      );
      const r = await worker.done;
      expect(r.code, r.stderr.slice(-3000)).toBe(0);
      expect(r.stderr).not.toMatch(STACK);
      const ev = events(r.rawStderr);
      expect(ev).toContain('ledger.lease.lapsed');
      expect(ev).not.toContain('backfill.partition.lost');
      expect(workerSummary(r).partitions).toMatchObject({ lost: 0, released: 0 });
      expect(deliveryCounts(sim, ids)).toEqual({ missing: 0, once: RECORDS, duplicated: 0, extra: 0 });
      report(`ledger outage (${how}) under backfill work`, { records: RECORDS, downMs, exit: r.code });
    });
  }

  it('past ledger.waitMs a worker stops with LEDGER_WRITE, and that error line is the last line it writes', async () => {
    const w = await workdir('outage-past-wait');
    const file = join(w.dir, 'in.ndjson');
    await writeNdjson(file, RECORDS, 'opw');
    const url = await pgs.createDatabase();
    await plan(url, [file], 64 * 1024 * 1024, ['--base-url', sim.url]);
    sim.setFaults({ ...NO_FAULTS, latencyMs: 25, jitterMs: 5 });
    // Progress written often, so a write is under way when the pool ends.
    const worker = startWorker(url, 'late', {
      sim,
      dir: w.dir,
      leaseMs: LEASE_MS,
      waitMs: 800,
      env: { SVC_LOG_FORMAT: 'json' },
    });
    await until(async () => sim.stats().transactions.accepted >= 1000, 60_000, 'the run under way');
    await pgs.down('fast');
    let r: Awaited<typeof worker.done>;
    try {
      r = await worker.done;
    } finally {
      await pgs.up();
    }
    expect(r.code, r.stderr.slice(-3000)).toBe(1);
    const lines = (r.rawStderr ?? '').trim().split('\n');
    const last = JSON.parse(lines[lines.length - 1] ?? '{}') as { event?: string; msg?: string };
    expect(last.event, lines.slice(-5).join('\n')).toBe('cli.error');
    expect(last.msg).toMatch(/^svc-ingest: LEDGER_WRITE: /);
  });
});

describe('a claim lost with a restart of the server', { timeout: 60_000 }, () => {
  it('outcomes recorded after the server restarted go row by row: acknowledged ids whose claim rows are gone count', async () => {
    const url = await pgs.createDatabase();
    const logger = createLogger({ level: 'silent', pretty: false });
    const store = await openPgLedgerStore(pgRef(url, { leaseMs: 60_000, waitMs: WAIT_MS }), {
      mode: 'write',
      resume: true,
      runId: 'lost',
      logger,
    });
    try {
      const items: BatchItem[] = Array.from({ length: 10 }, (_, i) => ({
        id: `lost-${i}`,
        json: '{}',
        source: 'in.ndjson',
        line: i + 1,
      }));
      expect((await store.admit(items)).send).toHaveLength(10);
      // The claim committed without a flush and the server crashed before its WAL reached the disk: its rows are
      // gone (removed here), while the batch was sent and acknowledged.
      const db = new URL(url).pathname.slice(1);
      await pgs.sql(db, `DELETE FROM svc_ingest.transactions WHERE transaction_id LIKE 'lost-%'`);
      await pgs.restart();
      await store.record({
        batchId: 'lost-1',
        runId: 'lost',
        status: 'acked',
        requestId: 'req-lost',
        clientRequestId: 'c-lost',
        attempts: 1,
        httpStatus: 200,
        items,
      });
      const [row] = await pgs.sql<{ n: number }>(
        db,
        `SELECT count(*)::int AS n FROM svc_ingest.transaction_states WHERE state = 'acked' AND transaction_id LIKE 'lost-%'`,
      );
      expect(row?.n).toBe(10);
    } finally {
      await store.close();
    }
  });
});
