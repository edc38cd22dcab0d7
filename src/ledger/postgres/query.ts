// `ledger status|failed|find` on a PostgreSQL ledger: the same answers, in the same shapes, as for a ledger file
// (ledger/file/query.ts, ledger/file/find.ts), from SQL over svc_ingest.batches (one row per batch outcome, the
// file's line) and svc_ingest.transactions (whether an id was ever acknowledged: acks.ts). A batch's `seq` stands where a
// file has its line number.
import type { FoundLine } from '../file/find.ts';
import type { DestinationStatus, LedgerRun, LedgerStatus, OutstandingFailure } from '../status.ts';
import { ackedOf } from './acks.ts';
import type { PgDb } from './db.ts';
import { OLDER_WORKER_ROW } from './identity.ts';

const num = (v: unknown): number => Number(v ?? 0);
const iso = (v: unknown): string | null => (v instanceof Date ? v.toISOString() : null);
const MAX_RUN_SOURCES = 20;

/**
 * Ids in failed outcomes that no acknowledged outcome of the same destination holds, each counted in the run of its
 * last failure there. $1: one destination's number, or null for all.
 */
const OUTSTANDING_BY_RUN = `
WITH f AS (
  SELECT b.seq, b.run_id, b.destination_no, u.id FROM svc_ingest.batches b, unnest(b.transaction_ids) AS u(id)
  WHERE b.status = 'failed' AND ($1::smallint IS NULL OR b.destination_no = $1)
),
last AS (
  SELECT DISTINCT ON (f.id, f.destination_no) f.id, f.seq, f.run_id
  FROM f JOIN svc_ingest.transactions t ON t.transaction_id = f.id AND t.destination_no = f.destination_no
  WHERE NOT ${ackedOf('t')}
  ORDER BY f.id, f.destination_no, f.seq DESC
)
SELECT run_id, count(*)::int AS ids, count(DISTINCT seq)::int AS batches FROM last GROUP BY run_id`;

/**
 * Ids acknowledged, each once per destination: by their row (acked_seq), or held by an acknowledged outcome written
 * since schema 7 (such an outcome is the acknowledgement of its ids: acks.ts; read as one pass over the outcomes,
 * not a lookup per row). $1 as above.
 */
const ACKED_DISTINCT = `
SELECT count(*) AS n FROM (
  SELECT t.transaction_id, t.destination_no FROM svc_ingest.transactions t
  WHERE t.acked_seq IS NOT NULL AND ($1::smallint IS NULL OR t.destination_no = $1)
  UNION
  SELECT u.id, b.destination_no FROM svc_ingest.batches b CROSS JOIN unnest(b.transaction_ids) AS u(id)
  WHERE b.status = 'acked' AND b.claim_nos IS NOT NULL AND ($1::smallint IS NULL OR b.destination_no = $1)
) a`;

/** The number of a destination (null: none of that name, so nothing of it is stored). */
async function destinationNo(db: PgDb, destination: string): Promise<number | null> {
  const r = await db.query<{ n: number }>(
    'other',
    'SELECT destination_no AS n FROM svc_ingest.destinations WHERE destination = $1',
    [destination],
  );
  return r.rows[0]?.n ?? null;
}

/**
 * `ledger status` of a PostgreSQL ledger, answered per destination (`destinations`); with `destination`, for that
 * one alone (an unknown one: nothing).
 * @example const s = await pgLedgerStatus(db, { destination: 'https://svc.example/api' }); s.ids.outstanding
 */
export async function pgLedgerStatus(db: PgDb, opts: { destination?: string } = {}): Promise<LedgerStatus> {
  if (opts.destination !== undefined) {
    const no = await destinationNo(db, opts.destination);
    return { ...(await statusOf(db, no ?? -1)), destination: opts.destination };
  }
  const older = await olderWorkers(db);
  // Only when there are some: a status has the same shape on a ledger file and in the database.
  const all = { ...(await statusOf(db, null)), ...(older > 0 ? { olderWorkers: older } : {}) };
  const names = await db.query<{ n: number; d: string | null }>(
    'other',
    'SELECT destination_no AS n, destination AS d FROM svc_ingest.destinations ORDER BY destination_no',
  );
  const per: DestinationStatus[] = [];
  for (const row of names.rows) {
    const s = names.rows.length === 1 ? all : await statusOf(db, row.n);
    if (s.lines === 0 && names.rows.length > 1) continue;
    per.push({ destination: row.d, batches: s.batches, ids: s.ids });
  }
  return { ...all, destinations: per };
}

/** Workers of an earlier svc-ingest that may still be running (identity.ts, OLDER_WORKER_ROW). */
async function olderWorkers(db: PgDb): Promise<number> {
  const r = await db.query<{ n: number }>(
    'other',
    `SELECT count(*)::int AS n FROM svc_ingest.workers x WHERE ${OLDER_WORKER_ROW}`,
  );
  return r.rows[0]?.n ?? 0;
}

/** The status over one destination's rows (`no`), or all (null): ledgers: one entry, its `lines` the outcomes. */
async function statusOf(db: PgDb, no: number | null): Promise<LedgerStatus> {
  const runs = await db.query(
    'other',
    `SELECT run_id, min(ts) AS first_ts, max(ts) AS last_ts, min(seq) AS first_seq,
       (SELECT d.destination FROM svc_ingest.destinations d WHERE d.destination_no = min(b.destination_no)) AS destination,
       count(*) FILTER (WHERE status = 'acked')::int AS batches_acked,
       count(*) FILTER (WHERE status = 'failed')::int AS batches_failed,
       coalesce(sum(cardinality(transaction_ids)) FILTER (WHERE status = 'acked'), 0) AS ids_acked,
       coalesce(sum(cardinality(transaction_ids)) FILTER (WHERE status = 'failed'), 0) AS ids_failed,
       (array_agg(DISTINCT source) FILTER (WHERE source IS NOT NULL))[1:${MAX_RUN_SOURCES}] AS sources
     FROM svc_ingest.batches b WHERE ($1::smallint IS NULL OR b.destination_no = $1)
     GROUP BY run_id ORDER BY first_seq`,
    [no],
  );
  const outstanding = await db.query<{ run_id: string; ids: number; batches: number }>(
    'other',
    OUTSTANDING_BY_RUN,
    [no],
  );
  const distinct = await db.query<{ n: string }>('other', ACKED_DISTINCT, [no]);
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
    destination: r.destination ?? null,
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
  SELECT b.seq, b.destination_no AS dn, u.id, u.n
  FROM svc_ingest.batches b, unnest(b.transaction_ids) WITH ORDINALITY AS u(id, n)
  WHERE b.status = 'failed' AND ($4::smallint IS NULL OR b.destination_no = $4)
),
o AS (SELECT f.id, f.dn, count(*)::int AS failures, max(f.seq) AS last FROM f GROUP BY f.id, f.dn),
w AS (
  SELECT o.id, o.failures, o.last, f.n
  FROM o JOIN f ON f.id = o.id AND f.dn = o.dn AND f.seq = o.last
  JOIN svc_ingest.transactions t ON t.transaction_id = o.id AND t.destination_no = o.dn
  WHERE NOT ${ackedOf('t')}
)
SELECT w.id, w.failures, w.last, w.n, b.ts, b.batch_id, b.run_id, b.request_id, b.client_request_id, b.attempts,
       b.http_status, b.error, b.source, b.first_line, b.last_line, d.destination
FROM w JOIN svc_ingest.batches b ON b.seq = w.last
LEFT JOIN svc_ingest.destinations d ON d.destination_no = b.destination_no
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
export async function* pgOutstandingFailures(
  db: PgDb,
  pageSize = 5000,
  opts: { destination?: string } = {},
): AsyncGenerator<OutstandingFailure> {
  const no = opts.destination === undefined ? null : ((await destinationNo(db, opts.destination)) ?? -1);
  let after: [number, number] = [0, 0];
  for (;;) {
    const r = await db.query('other', OUTSTANDING_PAGE, [after[0], after[1], pageSize, no]);
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
        destination: row.destination ?? null,
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
       b.http_status, b.error, b.source, b.first_line, b.last_line,
       (SELECT d.destination FROM svc_ingest.destinations d WHERE d.destination_no = b.destination_no) AS destination
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
      destination: row.destination ?? null,
      ...(row.error === null || row.error === undefined ? {} : { error: row.error }),
      ledger: db.location,
      ledgerLine: num(row.seq),
    });
  }
}
