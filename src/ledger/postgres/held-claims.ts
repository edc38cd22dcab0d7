// The transaction claims a `send` holds and has not recorded yet, and the check made after its lease ran out (the
// database out of reach, the process paused): were any of them taken over by another worker meanwhile? Asked in
// the database, never assumed: a run whose claims nobody took goes on; one that lost any stops.
import type { PgDb } from './db.ts';

/** Ids claimed (admitted to be sent) and not yet recorded, counted (the same id twice in one run is held twice). */
export class HeldClaims {
  private readonly held = new Map<string, number>();

  add(ids: Iterable<string>): void {
    for (const id of ids) this.held.set(id, (this.held.get(id) ?? 0) + 1);
  }

  remove(ids: Iterable<string>): void {
    for (const id of ids) {
      const n = this.held.get(id) ?? 0;
      if (n <= 1) this.held.delete(id);
      else this.held.set(id, n - 1);
    }
  }

  ids(): string[] {
    return [...this.held.keys()];
  }
}

/** Claims of `ids` no longer this worker's: another worker claimed them (or claimed, sent and recorded them). */
const TAKEN_SQL = `
SELECT count(*)::int AS n FROM svc_ingest.transactions
WHERE transaction_id = ANY($1::text[]) AND destination_no = $2 AND claim_worker IS DISTINCT FROM $3`;

/**
 * How many of `ids` another worker holds (or has finished) now. Call it with the lease renewed and no outcome of
 * this worker being recorded (a recorded outcome clears the claim too).
 * @example const lost = await claimsTakenOver(db, held.ids(), destinationNo, workerNo)
 */
export async function claimsTakenOver(
  db: PgDb,
  ids: readonly string[],
  destinationNo: number,
  workerNo: number,
): Promise<number> {
  if (ids.length === 0) return 0;
  const r = await db.query<{ n: number }>('claim', TAKEN_SQL, [ids, destinationNo, workerNo]);
  return Number(r.rows[0]?.n ?? 0);
}
