// Schema 6 on a real PostgreSQL: a transaction row is inserted at admit and updated once at record, and that update is
// heap-only (no new index entry: the table keeps half of each page free, and the claims index is a BRIN one); a ledger
// of schema 5 with acknowledged, failed and claimed rows keeps them through the migration, and a worker's claims are
// still released at close (found through the BRIN index) and by the next start of the same worker id.
import { describe, expect, it } from 'vitest';
import type { BatchItem } from '../../src/batch/batcher.ts';
import { connectPg } from '../../src/ledger/postgres/db.ts';
import { MIGRATIONS, migrate } from '../../src/ledger/postgres/migrations.ts';
import { openPgLedgerStore } from '../../src/ledger/postgres/store.ts';
import { resolvePgTarget } from '../../src/ledger/postgres/url.ts';
import { createLogger } from '../../src/log.ts';
import { usePostgres } from '../helpers/postgres.ts';

const pgs = usePostgres();
const logger = createLogger({ level: 'silent', pretty: false });
const dbName = (url: string) => url.split('/').pop() as string;

const items = (prefix: string, n: number): BatchItem[] =>
  Array.from({ length: n }, (_, i) => ({ id: `${prefix}-${i}`, json: '{}', source: 'in.csv', line: i + 2 }));

const open = (url: string, runId: string) =>
  openPgLedgerStore(url, { mode: 'write', resume: true, runId, logger, leaseMs: 60_000 });

const acked = (batchId: string, its: BatchItem[]) => ({
  batchId,
  runId: 'r',
  status: 'acked' as const,
  requestId: `req-${batchId}`,
  clientRequestId: `c-${batchId}`,
  attempts: 1,
  httpStatus: 200,
  items: its,
});

/** The table's row counters once the backends have reported them (they do so within about a second). */
async function tupleCounts(db: string, want: number): Promise<{ ins: number; upd: number; hot: number }> {
  const read = async () =>
    (
      await pgs.sql<{ ins: number; upd: number; hot: number }>(
        db,
        `SELECT n_tup_ins::int AS ins, n_tup_upd::int AS upd, n_tup_hot_upd::int AS hot FROM pg_stat_user_tables
         WHERE schemaname = 'svc_ingest' AND relname = 'transactions'`,
      )
    )[0] ?? { ins: 0, upd: 0, hot: 0 };
  for (let i = 0; i < 50; i++) {
    const c = await read();
    if (c.upd >= want) return c;
    await new Promise((r) => setTimeout(r, 100));
  }
  return read();
}

describe('schema 6: heap-only record updates', () => {
  it('admit inserts each row once, record updates it in place: every update heap-only', async () => {
    const url = await pgs.createDatabase();
    const store = await open(url, 'hot');
    const groups = [items('h1', 50), items('h2', 50), items('h3', 50), items('h4', 50)];
    const admitted = await Promise.all(groups.map((g) => store.admit(g)));
    await Promise.all(admitted.map((a, k) => store.record(acked(`b${k}`, a.send))));
    await store.close();
    const c = await tupleCounts(dbName(url), 200);
    expect(c).toEqual({ ins: 200, upd: 200, hot: 200 });
    const [idx] = await pgs.sql<{ am: string; ff: string[] | null }>(
      dbName(url),
      `SELECT am.amname AS am, (SELECT reloptions FROM pg_class WHERE relname = 'transactions'
                                  AND relnamespace = 'svc_ingest'::regnamespace) AS ff
       FROM pg_class i JOIN pg_am am ON am.oid = i.relam
       WHERE i.relname = 'transactions_claims' AND i.relnamespace = 'svc_ingest'::regnamespace`,
    );
    expect(idx).toEqual({ am: 'brin', ff: ['fillfactor=50'] });
  });

  it('an outcome of ids that have no row (never claimed, or pruned meanwhile) inserts them; one id in two batches once', async () => {
    const url = await pgs.createDatabase();
    const store = await open(url, 'norow');
    const claimed = await store.admit(items('c', 3));
    const unclaimed = items('u', 3);
    await Promise.all([
      store.record(acked('both', [...claimed.send, ...unclaimed])),
      store.record({ ...acked('fail', [unclaimed[0] as BatchItem]), status: 'failed', requestId: null }),
    ]);
    await store.close();
    const rows = await pgs.sql<{ id: string; acked: boolean; claim: number | null }>(
      dbName(url),
      `SELECT transaction_id AS id, acked_seq IS NOT NULL AS acked, claim_worker AS claim
       FROM svc_ingest.transactions ORDER BY 1`,
    );
    expect(rows).toEqual(
      ['c-0', 'c-1', 'c-2', 'u-0', 'u-1', 'u-2'].map((id) => ({ id, acked: true, claim: null })),
    );
  });

  it('a schema-5 ledger keeps its acknowledged, failed and claimed rows; claims are released at close as before', async () => {
    const url = await pgs.createDatabase();
    const db = await connectPg(resolvePgTarget(url), { logger });
    try {
      await migrate(
        db,
        MIGRATIONS.filter((m) => m.version < 6),
      );
    } finally {
      await db.close();
    }
    // Rows as schema 5 holds them: 20 acknowledged, 5 only failed, 5 claimed by a live worker.
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
    const up = await connectPg(resolvePgTarget(url), { logger });
    try {
      expect(await migrate(up)).toMatchObject({ from: 5, to: 6 });
    } finally {
      await up.close();
    }
    const next = await open(url, 'new');
    const again = await next.admit(items('a', 30));
    expect(again.skipped.filter((s) => s.reason === 'acked')).toHaveLength(20);
    expect(again.skipped.filter((s) => s.reason === 'elsewhere')).toHaveLength(5);
    expect(again.send.map((i) => i.id).sort()).toEqual(
      items('a', 30)
        .slice(20, 25)
        .map((i) => i.id)
        .sort(),
    );
    // Closed without recording: its five claims are released (found through the BRIN index); the old worker's
    // lease runs out: its five are free too.
    await next.close();
    await pgs.sql(name, `UPDATE svc_ingest.workers SET lease_until = now() WHERE worker_id = 'old'`);
    const [{ n } = { n: -1 }] = await pgs.sql<{ n: number }>(
      name,
      `SELECT count(*)::int AS n FROM svc_ingest.transactions t JOIN svc_ingest.workers w ON w.worker_no = t.claim_worker
       WHERE w.run_id = 'new'`,
    );
    expect(n).toBe(0);
    const last = await open(url, 'last');
    const free = await last.admit(items('a', 30));
    expect(free.send.map((i) => i.id).sort()).toEqual(
      items('a', 30)
        .slice(20, 30)
        .map((i) => i.id)
        .sort(),
    );
    await last.close();
  });
});
