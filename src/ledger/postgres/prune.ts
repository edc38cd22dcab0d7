// Retention of a PostgreSQL ledger: `ledger prune --before DATE` deletes the outcomes older than DATE and the
// transaction rows they acknowledged (or that only failed, and are claimed by nobody, since before DATE), a slice at
// a time so no statement holds locks for long. Destinations, workers and backfill partitions stay.
import { ackedOf, liveClaimOf } from './acks.ts';
import type { PgDb } from './db.ts';

/** What a prune did. */
export interface PgPruneResult {
  ledger: string;
  before: string;
  prunedBatches: number;
  prunedTransactions: number;
}

/** Batch outcomes per slice (each slice one transaction: its acknowledged ids, then the outcomes). */
const SLICE = 10_000;

/**
 * Delete what is older than `before` (ISO 8601), slice by slice in `seq` order.
 * @example await prunePgLedger(db, { before: '2026-08-01T00:00:00Z' })
 */
export async function prunePgLedger(db: PgDb, o: { before: string }): Promise<PgPruneResult> {
  const r: PgPruneResult = { ledger: db.location, before: o.before, prunedBatches: 0, prunedTransactions: 0 };
  for (;;) {
    const slice = await db.query<{ b: number; t: number }>(
      'other',
      `WITH s AS (SELECT seq, destination_no, transaction_ids, status, claim_nos FROM svc_ingest.batches
                 WHERE ts < $1::timestamptz ORDER BY seq LIMIT ${SLICE}),
       u AS (SELECT s.seq, s.destination_no, s.status, s.claim_nos, i.id FROM s, unnest(s.transaction_ids) AS i(id)),
       -- Through the primary key (id, destination): the rows these outcomes acknowledged first, by the row (acked_seq)
       -- or as the outcome of the claim the row names (acks.ts).
       t AS (DELETE FROM svc_ingest.transactions x USING u
             WHERE x.transaction_id = u.id AND x.destination_no = u.destination_no
               AND ((x.acked_seq = u.seq AND x.claim_worker IS NULL)
                    OR (x.acked_seq IS NULL AND u.status = 'acked' AND x.claim_no = ANY(u.claim_nos)))
             RETURNING 1),
       b AS (DELETE FROM svc_ingest.batches y USING s WHERE y.seq = s.seq RETURNING 1)
       SELECT (SELECT count(*) FROM b)::int AS b, (SELECT count(*) FROM t)::int AS t`,
      [o.before],
    );
    const row = slice.rows[0] ?? { b: 0, t: 0 };
    r.prunedBatches += row.b;
    r.prunedTransactions += row.t;
    if (row.b < SLICE) break;
  }
  // Ids that only ever failed (never acknowledged), untouched since before the date and held by no live claim.
  const failed = await db.query<{ n: number }>(
    'other',
    `WITH d AS (DELETE FROM svc_ingest.transactions t WHERE t.acked_seq IS NULL AND t.updated_at < $1::timestamptz
                AND NOT ${ackedOf('t')} AND NOT ${liveClaimOf('t')} RETURNING 1)
     SELECT count(*)::int AS n FROM d`,
    [o.before],
  );
  r.prunedTransactions += failed.rows[0]?.n ?? 0;
  return r;
}
