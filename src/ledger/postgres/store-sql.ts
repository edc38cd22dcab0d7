// The statements of the PostgreSQL LedgerStore (store.ts): the claim of a group of ids (CLAIM_SQL, ADMIT_SQL), a dry
// run's look-up (LOOKUP_SQL), the record of a group of outcomes (RECORD_SQL and its parameters), the catch-up of
// acknowledgements into rows for a worker of an earlier version (CATCH_UP_SQL), and the release of claims not sent.
import type { RecordedOutcome } from '../store.ts';
import { ackedIdsOfClaims, ackedOf, ackSeqOf, liveClaimOf } from './acks.ts';
import type { HeldClaims } from './held-claims.ts';

// The claim of an id that has a row: unless acked (resume on) or held by another live claim; RETURNING what it took.
// A claim taken again keeps the acknowledgement of the claim it replaces in the row (acked_seq), as the new claim's
// outcome will be the one read.
const TAKE_ROW = `ON CONFLICT (transaction_id, destination_no) DO UPDATE SET claim_worker = EXCLUDED.claim_worker,
    claim_no = EXCLUDED.claim_no, acked_seq = ${ackSeqOf('t')}, updated_at = now()
  WHERE (NOT $3::boolean OR NOT ${ackedOf('t')})
    AND (t.claim_worker IS NULL OR t.claim_worker = EXCLUDED.claim_worker OR NOT ${liveClaimOf('t')})
  RETURNING t.transaction_id`;

// The ids of a claim, each once, and the claim's number (one per statement, from batch_seq: the outcomes of these ids
// name it). A claim is committed without waiting for its WAL flush (synchronous_commit off for this transaction
// alone): the next recorded outcome's commit flushes it (WAL is written in order), and a claim lost with a crash of
// the server was a claim of ids in flight, the bound a worker's death already has (docs/postgres.md, "Claims without
// a flush").
const CLAIM_INPUT = `WITH input AS (SELECT DISTINCT id FROM unnest($1::text[]) AS u(id),
                 (SELECT set_config('synchronous_commit', 'off', true)) AS no_flush),
claim AS MATERIALIZED (SELECT nextval('svc_ingest.batch_seq') AS no),`;

// The rows answered: each id skipped (acked, or claimed elsewhere), and one row with the claim's number (id null).
const CLAIM_ANSWER = 'UNION ALL SELECT NULL, NULL, claim.no FROM claim';

/**
 * CTEs over a group's ids ($1): `old`, the rows they have for the destination (`dest`, a parameter); `acks`, those of
 * them acknowledged through their claims' outcomes, read at once for the group (ackedIdsOfClaims); and `known`, the
 * rows with whether each is acknowledged (`acked`), by its row or through its claim.
 */
const rowsAndAcks = (dest: string) => `old AS MATERIALIZED (
  SELECT t.transaction_id, t.acked_seq, t.claim_no, t.claim_worker FROM svc_ingest.transactions t
  WHERE t.transaction_id = ANY($1::text[]) AND t.destination_no = ${dest}
),
acks AS MATERIALIZED (${ackedIdsOfClaims('old', dest)}),
known AS MATERIALIZED (
  SELECT old.*, (old.acked_seq IS NOT NULL OR acks.id IS NOT NULL) AS acked
  FROM old LEFT JOIN acks ON acks.id = old.transaction_id
)`;

export const ADMIT_SQL = `
${CLAIM_INPUT}
claimed AS (
  INSERT INTO svc_ingest.transactions AS t (transaction_id, destination_no, claim_worker, claim_no, updated_at)
  SELECT id, $4, $2, claim.no, now() FROM input, claim ORDER BY id
  ${TAKE_ROW}
)
SELECT i.id, (${ackedOf('old')} AND $3::boolean) AS acked, NULL::bigint AS claim
FROM input i
LEFT JOIN claimed c ON c.transaction_id = i.id
LEFT JOIN svc_ingest.transactions old ON old.transaction_id = i.id AND old.destination_no = $4
WHERE c.transaction_id IS NULL
${CLAIM_ANSWER}`;

// The usual claim: ids that have no row yet are inserted by a plain INSERT (no speculative insertion, which costs the
// database about a third more per id: docs/performance.md), ids that have one go through ADMIT_SQL's ON CONFLICT in
// the same statement. Should another worker insert one of the new ids meanwhile, the plain INSERT fails
// (unique_violation, the whole statement undone) and the group is claimed again by ADMIT_SQL. Whether a row is
// acknowledged is read for the group at once (ackedIdsOfClaims); only rows not acknowledged are claimed again.
export const CLAIM_SQL = `
${CLAIM_INPUT}
${rowsAndAcks('$4')},
fresh AS (
  INSERT INTO svc_ingest.transactions (transaction_id, destination_no, claim_worker, claim_no, updated_at)
  SELECT id, $4, $2, claim.no, now() FROM input, claim
  WHERE NOT EXISTS (SELECT 1 FROM known WHERE known.transaction_id = input.id)
  ORDER BY id
),
claimed AS (
  INSERT INTO svc_ingest.transactions AS t (transaction_id, destination_no, claim_worker, claim_no, updated_at)
  SELECT id, $4, $2, claim.no, now() FROM input, claim
  WHERE EXISTS (SELECT 1 FROM known WHERE known.transaction_id = input.id AND NOT (known.acked AND $3::boolean))
  ORDER BY id
  ${TAKE_ROW}
)
SELECT known.transaction_id AS id, (known.acked AND $3::boolean) AS acked, NULL::bigint AS claim
FROM known LEFT JOIN claimed c ON c.transaction_id = known.transaction_id
WHERE c.transaction_id IS NULL
${CLAIM_ANSWER}`;

export const LOOKUP_SQL = `
WITH ${rowsAndAcks('$3')}
SELECT known.transaction_id AS id, (known.acked AND $2::boolean) AS acked, ${liveClaimOf('known')} AS live
FROM known`;

// A group of outcomes, one row each in batches (their ids sliced out of $17 by ids_from..ids_to, the claims they were
// sent under out of $18): that row is the acknowledgement of its ids, no transaction row is written. Row by row, as
// before schema 7 (acked_seq set, the claim and its number cleared, a row inserted where there is none), only when
// the rows may not name this worker's claims or a worker may read them otherwise: an id the store holds no claim for
// or holds twice, or a worker of a version before schema 7 that may still be running ($25: it reads acknowledgements
// in rows alone, and takes a row's claim without renumbering it); a server started since the store opened ($26: a
// claim made before may be lost, its commit not flushed); a lease that has run out now or since the worker started
// (another worker may have taken a claim over). A row's acknowledgement through its claim's outcome is kept in
// acked_seq when its claim number is cleared.
export const RECORD_SQL = `
WITH o AS MATERIALIZED (
  SELECT nextval('svc_ingest.batch_seq') AS seq, u.*
  FROM unnest($1::int[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::int[], $8::int[],
              $9::text[], $10::text[], $11::bigint[], $12::bigint[], $13::int[], $14::int[], $15::int[], $16::int[])
    AS u(k, batch_id, run_id, status, request_id, client_request_id, attempts, http_status, error, source,
         first_line, last_line, ids_from, ids_to, claims_from, claims_to)
),
b AS (
  INSERT INTO svc_ingest.batches (seq, batch_id, run_id, worker_no, status, request_id, client_request_id, attempts,
    http_status, error, source, first_line, last_line, transaction_ids, destination_no, claim_nos)
  SELECT o.seq, o.batch_id, o.run_id, $19, o.status, o.request_id, o.client_request_id, o.attempts, o.http_status,
    o.error, o.source, o.first_line, o.last_line, ($17::text[])[o.ids_from:o.ids_to], $24,
    ($18::bigint[])[o.claims_from:o.claims_to]
  FROM o ORDER BY o.k
),
by_row AS MATERIALIZED (
  SELECT $25::boolean OR pg_postmaster_start_time() IS DISTINCT FROM $26::timestamptz
    OR coalesce((SELECT w.lapses > 0 OR w.lease_until <= now() FROM svc_ingest.workers w WHERE w.worker_no = $19),
                true) AS yes
),
ids AS MATERIALIZED (
  SELECT o.seq, o.status, u.id FROM o, by_row, unnest(($17::text[])[o.ids_from:o.ids_to]) AS u(id) WHERE by_row.yes
),
tx AS (
  INSERT INTO svc_ingest.transactions AS t (transaction_id, destination_no, acked_seq, claim_worker, updated_at)
  SELECT ids.id, $24, min(ids.seq) FILTER (WHERE ids.status = 'acked'), NULL, now()
  FROM ids GROUP BY ids.id ORDER BY ids.id
  ON CONFLICT (transaction_id, destination_no) DO UPDATE SET
    acked_seq = coalesce(${ackSeqOf('t')}, EXCLUDED.acked_seq),
    claim_worker = CASE WHEN t.claim_worker = $19 THEN NULL ELSE t.claim_worker END,
    claim_no = CASE WHEN t.claim_worker = $19 THEN NULL ELSE t.claim_no END,
    updated_at = now()
),
counters AS (
  UPDATE svc_ingest.workers SET batches_acked = batches_acked + $20, records_acked = records_acked + $21,
    batches_failed = batches_failed + $22, records_failed = records_failed + $23
  WHERE worker_no = $19
),
-- The destination has acknowledged something: from now on it holds the ledger (a run elsewhere is refused).
dest AS (
  UPDATE svc_ingest.destinations SET acked = true WHERE destination_no = $24 AND NOT acked AND $21::bigint > 0
)
SELECT count(*)::int AS n FROM o`;

// The claims this store holds, through the primary key (its worker's lease ends at close too, so a claim it lost
// track of — a statement whose answer never came — is no longer live either).
export const RELEASE_SQL = `
UPDATE svc_ingest.transactions SET claim_worker = NULL, updated_at = now()
WHERE transaction_id = ANY($2::text[]) AND destination_no = $3 AND claim_worker = $1`;

// A worker of the previous version that registered after this one last asked (between its own schema check and the
// migration's commit; identity.ts): it reads acknowledgements in rows alone, and would take, once this worker's lease
// ends, the rows of ids this run acknowledged through a batch row before it was seen. Their acknowledgements go into
// the rows, as a record row by row writes them: this run's acknowledged outcomes, their ids whose row this worker
// still holds.
export const CATCH_UP_SQL = `
UPDATE svc_ingest.transactions t
SET acked_seq = a.seq, claim_worker = NULL, claim_no = NULL, updated_at = now()
FROM (SELECT u.id, min(b.seq) AS seq FROM svc_ingest.batches b, unnest(b.transaction_ids) AS u(id)
      WHERE b.run_id = ANY($2::text[]) AND b.worker_no = $1 AND b.destination_no = $3 AND b.status = 'acked'
      GROUP BY u.id) a
WHERE t.transaction_id = a.id AND t.destination_no = $3 AND t.claim_worker = $1 AND t.acked_seq IS NULL`;

/**
 * The parameters of RECORD_SQL for a group of outcomes, with the claims `held` has for their ids. `olderWorkers`: a
 * worker of a version before schema 7 may still be running (identity.ts, OLDER_WORKER_ROW), so every outcome goes
 * row by row.
 */
export function recordParams(
  group: readonly RecordedOutcome[],
  held: HeldClaims,
  workerNo: number,
  destinationNo: number,
  serverStart: string | null,
  olderWorkers: boolean,
): unknown[] {
  const cols: unknown[][] = Array.from({ length: 16 }, () => []);
  const ids: string[] = [];
  const claims: number[] = [];
  let byRow = olderWorkers;
  let batchesAcked = 0;
  let recordsAcked = 0;
  let batchesFailed = 0;
  let recordsFailed = 0;
  group.forEach((o, k) => {
    const first = o.items[0];
    const last = o.items[o.items.length - 1];
    const idsFrom = ids.length + 1;
    for (const it of o.items) ids.push(it.id);
    const claimsFrom = claims.length + 1;
    if (!held.claimsOf(o.items, claims)) byRow = true;
    const row = [
      k,
      o.batchId,
      o.runId,
      o.status,
      o.requestId,
      o.clientRequestId,
      o.attempts,
      o.httpStatus,
      o.error ?? null,
      first?.source ?? null,
      first?.line ?? null,
      last?.line ?? null,
      idsFrom,
      ids.length,
      claimsFrom,
      claims.length,
    ];
    for (let c = 0; c < row.length; c++) cols[c]?.push(row[c]);
    if (o.status === 'acked') {
      batchesAcked++;
      recordsAcked += o.items.length;
    } else {
      batchesFailed++;
      recordsFailed += o.items.length;
    }
  });
  return [
    ...cols,
    ids,
    claims,
    workerNo,
    batchesAcked,
    recordsAcked,
    batchesFailed,
    recordsFailed,
    destinationNo,
    byRow,
    serverStart,
  ];
}
