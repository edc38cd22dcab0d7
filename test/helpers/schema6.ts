// What a worker of the previous version (ledger schema 6) runs against the ledger, frozen as it shipped: the tests of
// a fleet upgraded one host at a time run it beside this version.

/**
 * The previous version's claim statement (src/ledger/postgres/store.ts at schema 6, `e535ed0`: CLAIM_INPUT, TAKE_ROW
 * and CLAIM_SQL), as it shipped: the way a worker of that version, still running after the migration to schema 7,
 * reads and claims a group of ids. $1 ids, $2 its worker number, $3 resume, $4 the destination. Answers the ids it
 * skipped, each with whether it read it as acknowledged.
 */
export const SCHEMA6_CLAIM_SQL = `
WITH input AS (SELECT DISTINCT id FROM unnest($1::text[]) AS u(id),
                 (SELECT set_config('synchronous_commit', 'off', true)) AS no_flush),
old AS MATERIALIZED (
  SELECT t.transaction_id, t.acked_seq FROM svc_ingest.transactions t
  WHERE t.transaction_id = ANY($1::text[]) AND t.destination_no = $4
),
fresh AS (
  INSERT INTO svc_ingest.transactions (transaction_id, destination_no, claim_worker, updated_at)
  SELECT id, $4, $2, now() FROM input WHERE NOT EXISTS (SELECT 1 FROM old WHERE old.transaction_id = input.id)
  ORDER BY id
),
claimed AS (
  INSERT INTO svc_ingest.transactions AS t (transaction_id, destination_no, claim_worker, updated_at)
  SELECT id, $4, $2, now() FROM input WHERE EXISTS (SELECT 1 FROM old WHERE old.transaction_id = input.id)
  ORDER BY id
  ON CONFLICT (transaction_id, destination_no) DO UPDATE SET claim_worker = EXCLUDED.claim_worker, updated_at = now()
  WHERE (t.acked_seq IS NULL OR NOT $3::boolean)
    AND (t.claim_worker IS NULL OR t.claim_worker = EXCLUDED.claim_worker
         OR NOT EXISTS (SELECT 1 FROM svc_ingest.workers w
                        WHERE w.worker_no = t.claim_worker AND w.lease_until > now()))
  RETURNING t.transaction_id
)
SELECT old.transaction_id AS id, (old.acked_seq IS NOT NULL AND $3::boolean) AS acked
FROM old LEFT JOIN claimed c ON c.transaction_id = old.transaction_id
WHERE c.transaction_id IS NULL`;

/**
 * A worker of the previous version registering itself: the columns its registration wrote (not its statement as
 * shipped). No `claims_from`: migration 7's default (0) is what marks a worker of that version. $1 its worker id (also
 * its run id), $2 its pid, $3 its lease from now (an interval: '1 hour', or '-2 days' for one killed since). Answers
 * its `worker_no`.
 */
export const SCHEMA6_REGISTER_SQL = `
INSERT INTO svc_ingest.workers (worker_id, run_id, host, pid, lease_until)
VALUES ($1, $1, 'v6-host', $2, now() + $3::interval) RETURNING worker_no`;
