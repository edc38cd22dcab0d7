// `ledger status|failed|find` on a PostgreSQL ledger: the same answers, in the same shapes, as for a ledger file
// (ledger/file/query.ts, ledger/file/find.ts), from SQL over svc_ingest.batches (one row per batch outcome, the
// file's line) and svc_ingest.transactions (whether an id was ever acknowledged). A batch's `seq` stands where a
// file has its line number.
import type { FoundLine } from '../file/find.ts';
import type { LedgerRun, LedgerStatus, OutstandingFailure } from '../file/query.ts';
import type { PgDb } from './db.ts';

const num = (v: unknown): number => Number(v ?? 0);
const iso = (v: unknown): string | null => (v instanceof Date ? v.toISOString() : null);
const MAX_RUN_SOURCES = 20;

/** Ids in failed outcomes that no acknowledged outcome holds, each counted in the run of its last failure. */
const OUTSTANDING_BY_RUN = `
WITH f AS (
  SELECT b.seq, b.run_id, u.id FROM svc_ingest.batches b, unnest(b.transaction_ids) AS u(id) WHERE b.status = 'failed'
),
last AS (
  SELECT DISTINCT ON (f.id) f.id, f.seq, f.run_id
  FROM f JOIN svc_ingest.transactions t ON t.transaction_id = f.id
  WHERE t.acked_seq IS NULL
  ORDER BY f.id, f.seq DESC
)
SELECT run_id, count(*)::int AS ids, count(DISTINCT seq)::int AS batches FROM last GROUP BY run_id`;

/**
 * `ledger status` of a PostgreSQL ledger (ledgers: one entry, its `lines` the batch outcomes; nothing unreadable).
 * @example const s = await pgLedgerStatus(db); s.ids.outstanding
 */
export async function pgLedgerStatus(db: PgDb): Promise<LedgerStatus> {
  const runs = await db.query(
    'other',
    `SELECT run_id, min(ts) AS first_ts, max(ts) AS last_ts, min(seq) AS first_seq,
       count(*) FILTER (WHERE status = 'acked')::int AS batches_acked,
       count(*) FILTER (WHERE status = 'failed')::int AS batches_failed,
       coalesce(sum(cardinality(transaction_ids)) FILTER (WHERE status = 'acked'), 0) AS ids_acked,
       coalesce(sum(cardinality(transaction_ids)) FILTER (WHERE status = 'failed'), 0) AS ids_failed,
       (array_agg(DISTINCT source) FILTER (WHERE source IS NOT NULL))[1:${MAX_RUN_SOURCES}] AS sources
     FROM svc_ingest.batches GROUP BY run_id ORDER BY first_seq`,
  );
  const outstanding = await db.query<{ run_id: string; ids: number; batches: number }>(
    'other',
    OUTSTANDING_BY_RUN,
  );
  const distinct = await db.query<{ n: string }>(
    'other',
    'SELECT count(*) AS n FROM svc_ingest.transactions WHERE acked_seq IS NOT NULL',
  );
  const byRun = new Map(outstanding.rows.map((r) => [r.run_id, r]));
  const list: LedgerRun[] = runs.rows.map((r) => ({
    runId: r.run_id === null ? null : String(r.run_id),
    firstTs: iso(r.first_ts),
    lastTs: iso(r.last_ts),
    batches: { acked: num(r.batches_acked), failed: num(r.batches_failed) },
    ids: {
      acked: num(r.ids_acked),
      failed: num(r.ids_failed),
      outstanding: num(byRun.get(r.run_id)?.ids),
    },
    sources: Array.isArray(r.sources) ? (r.sources as string[]) : [],
  }));
  let lastRun: LedgerRun | null = null;
  for (const r of list) if (lastRun === null || (r.lastTs ?? '') >= (lastRun.lastTs ?? '')) lastRun = r;
  const sum = (pick: (r: LedgerRun) => number) => list.reduce((s, r) => s + pick(r), 0);
  const lines = sum((r) => r.batches.acked + r.batches.failed);
  const stamps = list
    .flatMap((r) => [r.firstTs, r.lastTs])
    .filter((t): t is string => t !== null)
    .sort();
  return {
    ledgers: [{ path: db.location, lines, badLines: 0, badLineNumbers: [] }],
    lines,
    badLines: 0,
    firstTs: stamps[0] ?? null,
    lastTs: stamps[stamps.length - 1] ?? null,
    batches: {
      acked: sum((r) => r.batches.acked),
      failed: sum((r) => r.batches.failed),
      outstanding: outstanding.rows.reduce((s, r) => s + num(r.batches), 0),
    },
    ids: {
      acked: sum((r) => r.ids.acked),
      ackedDistinct: num(distinct.rows[0]?.n),
      failed: sum((r) => r.ids.failed),
      outstanding: outstanding.rows.reduce((s, r) => s + num(r.ids), 0),
    },
    runs: list,
    lastRun,
  };
}

/** Outstanding ids with their last failure, in the order of that failure (then of the id in its batch), a page at a time. */
const OUTSTANDING_PAGE = `
WITH f AS (
  SELECT b.seq, u.id, u.n FROM svc_ingest.batches b, unnest(b.transaction_ids) WITH ORDINALITY AS u(id, n)
  WHERE b.status = 'failed'
),
o AS (SELECT f.id, count(*)::int AS failures, max(f.seq) AS last FROM f GROUP BY f.id),
w AS (
  SELECT o.id, o.failures, o.last, f.n
  FROM o JOIN f ON f.id = o.id AND f.seq = o.last
  JOIN svc_ingest.transactions t ON t.transaction_id = o.id
  WHERE t.acked_seq IS NULL
)
SELECT w.id, w.failures, w.last, w.n, b.ts, b.batch_id, b.run_id, b.request_id, b.client_request_id, b.attempts,
       b.http_status, b.error, b.source, b.first_line, b.last_line
FROM w JOIN svc_ingest.batches b ON b.seq = w.last
WHERE (w.last, w.n) > ($1::bigint, $2::bigint)
ORDER BY w.last, w.n
LIMIT $3`;

const lines = (r: Record<string, unknown>): [number, number] | null =>
  r.first_line === null || r.first_line === undefined ? null : [num(r.first_line), num(r.last_line)];

/**
 * `ledger failed` of a PostgreSQL ledger: every outstanding id once with its last failure, `pageSize` at a time
 * (memory stays flat however many there are).
 * @example for await (const f of pgOutstandingFailures(db)) console.log(f.transactionId)
 */
export async function* pgOutstandingFailures(db: PgDb, pageSize = 5000): AsyncGenerator<OutstandingFailure> {
  let after: [number, number] = [0, 0];
  for (;;) {
    const r = await db.query('other', OUTSTANDING_PAGE, [after[0], after[1], pageSize]);
    for (const row of r.rows) {
      yield {
        transactionId: String(row.id),
        failures: num(row.failures),
        error: row.error ?? null,
        httpStatus: row.http_status ?? null,
        attempts: row.attempts ?? null,
        ts: iso(row.ts),
        batchId: row.batch_id ?? null,
        requestId: row.request_id ?? null,
        clientRequestId: row.client_request_id || null,
        runId: row.run_id ?? null,
        source: row.source ?? null,
        lines: lines(row),
        ledger: db.location,
      };
    }
    const last = r.rows[r.rows.length - 1];
    if (!last || r.rows.length < pageSize) return;
    after = [num(last.last), num(last.n)];
  }
}

/**
 * `ledger find` on a PostgreSQL ledger: every batch outcome naming one of the ids, in the order they were recorded
 * (one pass over the outcomes, as over a ledger file); `ledgerLine` is the outcome's `seq`.
 * @example await pgFind(db, new Set(['tx-1']), (hit) => console.log(hit.status))
 */
export async function pgFind(db: PgDb, ids: Set<string>, onHit: (hit: FoundLine) => void): Promise<void> {
  const r = await db.query(
    'other',
    `SELECT b.seq, u.id, b.status, b.ts, b.batch_id, b.run_id, b.request_id, b.client_request_id, b.attempts,
       b.http_status, b.error, b.source, b.first_line, b.last_line
     FROM svc_ingest.batches b, unnest(b.transaction_ids) WITH ORDINALITY AS u(id, n)
     WHERE b.transaction_ids && $1::text[] AND u.id = ANY($1::text[])
     ORDER BY b.seq, u.n`,
    [[...ids]],
  );
  for (const row of r.rows) {
    onHit({
      transactionId: String(row.id),
      status: row.status,
      ts: iso(row.ts),
      batchId: row.batch_id ?? null,
      requestId: row.request_id ?? null,
      clientRequestId: row.client_request_id || null,
      attempts: row.attempts ?? null,
      httpStatus: row.http_status ?? null,
      runId: row.run_id ?? null,
      source: row.source ?? null,
      lines: lines(row),
      ...(row.error === null || row.error === undefined ? {} : { error: row.error }),
      ledger: db.location,
      ledgerLine: num(row.seq),
    });
  }
}
