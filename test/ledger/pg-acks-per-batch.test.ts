// Schema 7 on a real PostgreSQL: a transaction row is inserted once, by its claim, and an outcome is one `batches` row
// naming the claims its ids were sent under; the record updates no transaction row. Where the claims cannot be
// trusted (an id held by no claim of this store, a lease that ran out) the outcome is recorded row by row, as before,
// so an acknowledgement is never lost to a claim taken over; a worker id started again ends its earlier process's
// claims without touching their rows; a ledger of schema 6 keeps its acknowledged, failed and claimed rows.
import { describe, expect, it } from 'vitest';
import type { BatchItem } from '../../src/batch/batcher.ts';
import { connectPg } from '../../src/ledger/postgres/db.ts';
import { MIGRATIONS, migrate } from '../../src/ledger/postgres/migrations.ts';
import { openPgSession } from '../../src/ledger/postgres/session.ts';
import { openPgLedgerStore } from '../../src/ledger/postgres/store.ts';
import { resolvePgTarget } from '../../src/ledger/postgres/url.ts';
import { createLogger } from '../../src/log.ts';
import { dbName } from '../helpers/backfill.ts';
import { pgConnection, pgRef } from '../helpers/ledger-ref.ts';
import { ids, items, outcome } from '../helpers/pg-outcomes.ts';
import { usePostgres } from '../helpers/postgres.ts';

const pgs = usePostgres();
const logger = createLogger({ level: 'silent', pretty: false });

const open = (url: string, runId: string, resume = true) =>
  openPgLedgerStore(pgRef(url, { leaseMs: 60_000 }), { mode: 'write', resume, runId, logger });

/** The transactions table's row counters once the backends have reported them (within about a second). */
async function tupleCounts(db: string, ins: number): Promise<{ ins: number; upd: number }> {
  const read = async () =>
    (
      await pgs.sql<{ ins: number; upd: number }>(
        db,
        `SELECT n_tup_ins::int AS ins, n_tup_upd::int AS upd FROM pg_stat_user_tables
         WHERE schemaname = 'svc_ingest' AND relname = 'transactions'`,
      )
    )[0] ?? { ins: 0, upd: 0 };
  for (let i = 0; i < 50; i++) {
    const c = await read();
    if (c.ins >= ins) return c;
    await new Promise((r) => setTimeout(r, 100));
  }
  return read();
}

/** State of each id, from the view. */
const states = async (url: string) =>
  Object.fromEntries(
    (
      await pgs.sql<{ id: string; state: string }>(
        dbName(url),
        'SELECT transaction_id AS id, state FROM svc_ingest.transaction_states ORDER BY 1',
      )
    ).map((r) => [r.id, r.state]),
  );

describe('schema 7: acknowledgements per batch', () => {
  it('admit inserts each row once; record writes one batches row per outcome and updates no transaction row', async () => {
    const url = await pgs.createDatabase();
    const store = await open(url, 'per-batch');
    const groups = [items('h1', 50), items('h2', 50), items('h3', 50), items('h4', 50)];
    const admitted = await Promise.all(groups.map((g) => store.admit(g)));
    await Promise.all(
      admitted.map((a, k) => store.record(outcome(`b${k}`, a.send, k === 3 ? 'failed' : 'acked'))),
    );
    await store.close();
    expect(await tupleCounts(dbName(url), 200)).toEqual({ ins: 200, upd: 0 });
    const s = await states(url);
    expect(Object.values(s).filter((v) => v === 'acked')).toHaveLength(150);
    expect(
      Object.entries(s)
        .filter(([, v]) => v === 'failed')
        .map(([k]) => k),
    ).toEqual(ids(groups[3]!));
    const [acked] = await pgs.sql<{ batch: string; request: string }>(
      dbName(url),
      `SELECT acked_batch_id AS batch, acked_request_id AS request FROM svc_ingest.transaction_states
       WHERE transaction_id = 'h2-7'`,
    );
    expect(acked).toEqual({ batch: 'b1', request: 'req-b1' });
    const [shape] = await pgs.sql<{ am: string; ff: string[] | null; rows: number }>(
      dbName(url),
      `SELECT am.amname AS am,
         (SELECT reloptions FROM pg_class WHERE relname = 'transactions' AND relnamespace = 'svc_ingest'::regnamespace) AS ff,
         (SELECT count(*)::int FROM svc_ingest.transactions WHERE acked_seq IS NOT NULL) AS rows
       FROM pg_class i JOIN pg_am am ON am.oid = i.relam
       WHERE i.relname = 'batches_claims' AND i.relnamespace = 'svc_ingest'::regnamespace`,
    );
    expect(shape).toEqual({ am: 'gin', ff: ['fillfactor=100'], rows: 0 });
    // A rerun skips what was acknowledged and sends the failed ones.
    const rerun = await open(url, 'rerun');
    const again = await rerun.admit(groups.flat());
    expect(again.skipped.filter((x) => x.reason === 'acked')).toHaveLength(150);
    expect(ids(again.send)).toEqual(ids(groups[3]!));
    await rerun.close();
  });

  it('resume off sends acknowledged ids again and keeps their acknowledgement; a dry run reads the same states', async () => {
    const url = await pgs.createDatabase();
    const first = await open(url, 'first');
    const group = items('r', 10);
    const got = await first.admit(group);
    await first.record(outcome('first', got.send.slice(0, 6)));
    await first.record(outcome('first-failed', got.send.slice(6), 'failed'));
    await first.close();
    // --no-resume: every id is claimed again (the claim replaces the one the acknowledgement was read through)...
    const again = await open(url, 'again', false);
    const all = await again.admit(group);
    expect(ids(all.send)).toEqual(ids(group));
    // ...and that send fails: the six acknowledged before stay acknowledged, the rest is failed.
    await again.record(outcome('again', all.send, 'failed'));
    await again.close();
    const s = await states(url);
    expect(
      Object.entries(s)
        .filter(([, v]) => v === 'acked')
        .map(([k]) => k),
    ).toEqual(ids(group.slice(0, 6)));
    // A dry run (read mode) skips what is acknowledged and would send the rest.
    const dry = await openPgLedgerStore(pgRef(url), { mode: 'read', resume: true, runId: 'dry', logger });
    const looked = await dry.admit(group);
    expect(ids(looked.send)).toEqual(ids(group.slice(6)));
    expect(looked.skipped.map((x) => x.reason)).toEqual(Array(6).fill('acked'));
    await dry.close();
  });

  it('an outcome with ids this store holds no claim for, or holds twice, is recorded row by row', async () => {
    const url = await pgs.createDatabase();
    const store = await open(url, 'by-row');
    const claimed = await store.admit(items('c', 3));
    const unclaimed = items('u', 3);
    // d-0 admitted twice (two groups of one run): its row names the later claim only.
    const d1 = await store.admit(items('d', 2));
    const d2 = await store.admit(items('d', 1));
    await Promise.all([
      store.record(outcome('both', [...claimed.send, ...unclaimed])),
      store.record(outcome('fail', [unclaimed[0] as BatchItem], 'failed')),
      store.record(outcome('d-first', d1.send)),
      store.record(outcome('d-again', d2.send, 'failed')),
    ]);
    await store.close();
    const rows = await pgs.sql<{ id: string; acked: boolean }>(
      dbName(url),
      'SELECT transaction_id AS id, acked_seq IS NOT NULL AS acked FROM svc_ingest.transactions ORDER BY 1',
    );
    expect(rows).toEqual(
      ['c-0', 'c-1', 'c-2', 'd-0', 'd-1', 'u-0', 'u-1', 'u-2'].map((id) => ({ id, acked: true })),
    );
    expect(new Set(Object.values(await states(url)))).toEqual(new Set(['acked']));
  });

  it('an outcome recorded row by row after one acknowledged its ids through their claim keeps that acknowledgement', async () => {
    const url = await pgs.createDatabase();
    const store = await open(url, 'twice');
    const got = await store.admit(items('k', 5));
    await store.record(outcome('k-acked', got.send));
    // The same ids again, no longer held (row by row: the claim and its number cleared from the rows).
    await store.record(outcome('k-failed', got.send, 'failed'));
    await store.close();
    const rows = await pgs.sql<{ acked: boolean; claim: string | null }>(
      dbName(url),
      'SELECT acked_seq IS NOT NULL AS acked, claim_no AS claim FROM svc_ingest.transactions',
    );
    expect(rows).toEqual(Array.from({ length: 5 }, () => ({ acked: true, claim: null })));
    expect(Object.values(await states(url))).toEqual(Array(5).fill('acked'));
  });

  it('a lease that ran out: the outcome is recorded row by row, so an id another worker took over stays acknowledged', async () => {
    const url = await pgs.createDatabase();
    const a = await open(url, 'a');
    const b = await open(url, 'b', false);
    try {
      const group = items('t', 20);
      const mine = await a.admit(group);
      expect(mine.send).toHaveLength(20);
      // a's lease runs out (a pause): b takes its claims over and sends them too.
      await pgs.sql(dbName(url), `UPDATE svc_ingest.workers SET lease_until = now() WHERE run_id = 'a'`);
      const taken = await b.admit(group);
      expect(taken.send).toHaveLength(20);
      // a's batch had been acknowledged before it knew: it must count, though the rows now name b's claim.
      await a.record(outcome('a-1', mine.send));
      await b.record(outcome('b-1', taken.send, 'failed'));
      const s = await states(url);
      expect(Object.values(s).filter((v) => v === 'acked')).toHaveLength(20);
      const rerun = await open(url, 'c');
      expect((await rerun.admit(group)).skipped.filter((x) => x.reason === 'acked')).toHaveLength(20);
      await rerun.close();
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('a heartbeat that found the lease run out makes every later outcome go row by row', async () => {
    const url = await pgs.createDatabase();
    const a = await open(url, 'lapsed');
    try {
      const got = await a.admit(items('l', 5));
      await pgs.sql(dbName(url), `UPDATE svc_ingest.workers SET lease_until = now() - interval '1 s'`);
      expect(await a.session?.heartbeat()).toEqual({ lapsed: true });
      await a.record(outcome('l-1', got.send));
      const [row] = await pgs.sql<{ n: number; lapses: number }>(
        dbName(url),
        `SELECT (SELECT count(*)::int FROM svc_ingest.transactions WHERE acked_seq IS NOT NULL) AS n,
                (SELECT lapses FROM svc_ingest.workers) AS lapses`,
      );
      expect(row).toEqual({ n: 5, lapses: 1 });
    } finally {
      await a.close();
    }
  });

  it('a worker id started again ends its earlier process’s claims without updating their rows', async () => {
    const url = await pgs.createDatabase();
    const first = await openPgSession(pgRef(url, { leaseMs: 60_000 }), {
      runId: 'r1',
      workerId: 'w',
      logger,
    });
    const dead = await openPgLedgerStore(pgRef(url), {
      mode: 'write',
      resume: true,
      runId: 'r1',
      logger,
      session: first,
    });
    const group = items('k', 10);
    expect((await dead.admit(group)).send).toHaveLength(10);
    // The process is gone without closing: its row is taken by the next process of the same id.
    await pgs.sql(dbName(url), `UPDATE svc_ingest.workers SET lease_until = now() WHERE worker_id = 'w'`);
    const again = await openPgSession(pgRef(url, { leaseMs: 60_000 }), {
      runId: 'r2',
      workerId: 'w',
      logger,
    });
    try {
      // The rows still name the earlier process's claims (nothing updated them), and none of them is open.
      const [row] = await pgs.sql<{ named: number; claimed: number }>(
        dbName(url),
        `SELECT (SELECT count(*)::int FROM svc_ingest.transactions WHERE claim_worker = $1) AS named,
                (SELECT count(*)::int FROM svc_ingest.transaction_states WHERE state = 'claimed') AS claimed`,
        [again.workerNo],
      );
      expect(row).toEqual({ named: 10, claimed: 0 });
      const other = await open(url, 'other');
      expect((await other.admit(group)).send).toHaveLength(10);
      await other.close();
    } finally {
      await again.close();
      await first.close().catch(() => {});
    }
  });

  it('a schema-6 ledger keeps its acknowledged, failed and claimed rows; claims are released at close as before', async () => {
    const url = await pgs.createDatabase();
    const db = await connectPg(resolvePgTarget(url), { logger, connection: pgConnection() });
    try {
      await migrate(
        db,
        MIGRATIONS.filter((m) => m.version < 7),
      );
    } finally {
      await db.close();
    }
    // Rows as schema 6 holds them: 20 acknowledged, 5 only failed, 5 claimed by a live worker.
    const name = dbName(url);
    await pgs.sql(
      name,
      `WITH w AS (INSERT INTO svc_ingest.workers (worker_id, run_id, host, pid, lease_until)
                  VALUES ('old', 'old', 'h', 1, now() + interval '1 hour') RETURNING worker_no),
            b AS (INSERT INTO svc_ingest.batches (batch_id, run_id, worker_no, status, client_request_id, attempts,
                    transaction_ids) VALUES ('old-acked', 'old', 1, 'acked', 'c', 1, '{}') RETURNING seq)
       INSERT INTO svc_ingest.transactions (transaction_id, acked_seq, claim_worker)
       SELECT 'a-' || g, CASE WHEN g < 20 THEN (SELECT seq FROM b) END,
              CASE WHEN g >= 25 THEN (SELECT worker_no FROM w) END
       FROM generate_series(0, 29) g`,
    );
    const up = await connectPg(resolvePgTarget(url), { logger, connection: pgConnection() });
    try {
      expect(await migrate(up)).toMatchObject({ from: 6, to: 7 });
    } finally {
      await up.close();
    }
    const s = await states(url);
    expect(Object.values(s).filter((v) => v === 'acked')).toHaveLength(20);
    expect(Object.values(s).filter((v) => v === 'claimed')).toHaveLength(5);
    const next = await open(url, 'new');
    const again = await next.admit(items('a', 30));
    expect(again.skipped.filter((x) => x.reason === 'acked')).toHaveLength(20);
    expect(again.skipped.filter((x) => x.reason === 'elsewhere')).toHaveLength(5);
    expect(ids(again.send)).toEqual(ids(items('a', 30).slice(20, 25)));
    // Closed without recording: its five claims are released; the old worker's lease runs out: its five are free too.
    await next.close();
    await pgs.sql(name, `UPDATE svc_ingest.workers SET lease_until = now() WHERE worker_id = 'old'`);
    const last = await open(url, 'last');
    const free = await last.admit(items('a', 30));
    expect(ids(free.send)).toEqual(ids(items('a', 30).slice(20, 30)));
    await last.record(outcome('last', free.send));
    await last.close();
    expect(Object.values(await states(url)).filter((v) => v === 'acked')).toHaveLength(30);
  });
});
