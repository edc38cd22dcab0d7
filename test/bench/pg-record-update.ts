// A variant of the record statement measured and not kept (docs/performance.md): the transaction rows updated through
// `transaction_id = ANY($ids)` (an index scan whatever the plan) and only ids without a row inserted, with ON CONFLICT.
// For test/bench/pg-statements.ts --variants test/bench/pg-record-update.ts.
export const VARIANTS: Record<string, string> = {
  recordUpd: `
WITH o AS MATERIALIZED (
  SELECT nextval('svc_ingest.batch_seq') AS seq, u.*
  FROM unnest($1::int[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::int[], $8::int[],
              $9::text[], $10::text[], $11::bigint[], $12::bigint[])
    AS u(k, batch_id, run_id, status, request_id, client_request_id, attempts, http_status, error, source,
         first_line, last_line)
),
ids AS MATERIALIZED (SELECT * FROM unnest($13::int[], $14::text[]) WITH ORDINALITY AS u(k, id, n)),
b AS (
  INSERT INTO svc_ingest.batches (seq, batch_id, run_id, worker_no, status, request_id, client_request_id, attempts,
    http_status, error, source, first_line, last_line, transaction_ids, destination_no)
  SELECT o.seq, o.batch_id, o.run_id, $15, o.status, o.request_id, o.client_request_id, o.attempts, o.http_status,
    o.error, o.source, o.first_line, o.last_line, coalesce(a.ids, '{}'), $20
  FROM o LEFT JOIN (SELECT k, array_agg(id ORDER BY n) AS ids FROM ids GROUP BY k) a ON a.k = o.k ORDER BY o.k
),
per AS MATERIALIZED (
  SELECT ids.id, min(o.seq) FILTER (WHERE o.status = 'acked') AS seq FROM ids JOIN o ON o.k = ids.k GROUP BY ids.id
),
upd AS (
  UPDATE svc_ingest.transactions AS t SET acked_seq = coalesce(t.acked_seq, per.seq),
    claim_worker = CASE WHEN t.claim_worker = $15 THEN NULL ELSE t.claim_worker END, updated_at = now()
  FROM per
  WHERE t.transaction_id = ANY($14::text[]) AND t.destination_no = $20 AND t.transaction_id = per.id
  RETURNING t.transaction_id
),
tx AS (
  INSERT INTO svc_ingest.transactions AS t (transaction_id, destination_no, acked_seq, claim_worker, updated_at)
  SELECT per.id, $20, per.seq, NULL, now() FROM per WHERE NOT EXISTS (SELECT 1 FROM upd WHERE upd.transaction_id = per.id)
  ORDER BY per.id
  ON CONFLICT (transaction_id, destination_no) DO UPDATE SET
    acked_seq = coalesce(t.acked_seq, EXCLUDED.acked_seq),
    claim_worker = CASE WHEN t.claim_worker = $15 THEN NULL ELSE t.claim_worker END,
    updated_at = now()
),
counters AS (
  UPDATE svc_ingest.workers SET batches_acked = batches_acked + $16, records_acked = records_acked + $17,
    batches_failed = batches_failed + $18, records_failed = records_failed + $19
  WHERE worker_no = $15
),
dest AS (
  UPDATE svc_ingest.destinations SET acked = true WHERE destination_no = $20 AND NOT acked AND $17::bigint > 0
)
SELECT count(*)::int AS n FROM o`,
};
