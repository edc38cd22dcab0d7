// A variant of the record statement measured and not kept (docs/performance.md): the transaction rows updated through
// `transaction_id = ANY($ids)` (an index scan whatever the plan) and only ids without a row inserted, with ON CONFLICT;
// the rest of the statement is the store's. For test/bench/pg-statements.ts --variants test/bench/pg-record-update.ts.
import { RECORD_SQL } from '../../src/ledger/postgres/store.ts';

const BY_UPDATE = `per AS MATERIALIZED (
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
counters AS (`;

const start = RECORD_SQL.indexOf('tx AS (');
const end = RECORD_SQL.indexOf('counters AS (') + 'counters AS ('.length;
if (start < 0 || end < start)
  throw new Error('RECORD_SQL no longer has the tx and counters parts this variant replaces');

export const VARIANTS: Record<string, string> = {
  recordUpd: RECORD_SQL.slice(0, start) + BY_UPDATE + RECORD_SQL.slice(end),
};
