// The state of a transaction row, as SQL fragments over its alias: acknowledged by its row (`acked_seq`: schema 6 and
// before, and ids recorded the careful way since) or by the batch outcome of its claim (schema 7: an outcome names the
// claims its ids were sent under, `batches.claim_nos`, and the row keeps its claim, `transactions.claim_no`, so the
// record updates no row per id). Every reader of the state uses these, so there is one definition of it
// (docs/postgres.md, "Acknowledgements per batch").

/** `batches` rows of the claim of row `t` that hold its id (the GIN index on claim_nos finds them). */
const ofClaim = (t: string) =>
  `FROM svc_ingest.batches r WHERE r.claim_nos @> ARRAY[${t}.claim_no] AND ${t}.transaction_id = ANY(r.transaction_ids)`;

/** The `batches.seq` of the first outcome that acknowledged row `t`'s id, or null. */
export const ackSeqOf = (t: string): string =>
  `coalesce(${t}.acked_seq, (SELECT min(r.seq) ${ofClaim(t)} AND r.status = 'acked'))`;

/** Whether row `t`'s id was acknowledged (for a destination: the row's). */
export const ackedOf = (t: string): string => `(${ackSeqOf(t)} IS NOT NULL)`;

/** Whether the outcome of row `t`'s current claim is recorded (acked or failed): its claim is over. */
export const recordedOf = (t: string): string => `EXISTS (SELECT 1 ${ofClaim(t)})`;

/**
 * Whether row `t` is claimed and its claim still open: a worker holds it, has not recorded it, and is the same process
 * that claimed it (a worker id started again begins at `claims_from`, from the sequence claims take their numbers
 * from; its earlier process's claims are over). A claim of schema 6 (no number) is open while its worker has not
 * started again since the upgrade (claims_from 0).
 * `w` is the claiming worker's row.
 */
export const openClaimOf = (t: string, w: string): string =>
  `(${t}.claim_worker IS NOT NULL AND coalesce(${t}.claim_no, 0) >= ${w}.claims_from AND NOT ${recordedOf(t)})`;

/** Whether row `t` is held by a live claim: open, and its worker's lease not run out. */
export const liveClaimOf = (t: string): string =>
  `EXISTS (SELECT 1 FROM svc_ingest.workers w WHERE w.worker_no = ${t}.claim_worker AND w.lease_until > now()
            AND ${openClaimOf(t, 'w')})`;

/**
 * The ids acknowledged by outcomes of the claims of the rows in `rows` (a CTE of transaction rows with `claim_no` and
 * `acked_seq`), as one set for a group: the outcomes found once through the GIN index, their ids unnested, instead
 * of a lookup per row. An acknowledged outcome holding an id is its acknowledgement whatever claim the row names now
 * (a claim taken over keeps the earlier acknowledgement in `acked_seq` anyway). `$dest` is the destination's number.
 */
export const ackedIdsOfClaims = (rows: string, dest: string): string =>
  `SELECT DISTINCT u.id FROM svc_ingest.batches r, unnest(r.transaction_ids) AS u(id)
   WHERE r.claim_nos && ARRAY(SELECT DISTINCT claim_no FROM ${rows} WHERE acked_seq IS NULL AND claim_no IS NOT NULL)
     AND r.status = 'acked' AND r.destination_no = ${dest}`;
