// The transaction claims a `send` holds and has not recorded yet, and the check made after its lease ran out (the
// database out of reach, the process paused): were any of them taken over by another worker meanwhile? Asked in
// the database, never assumed: a run whose claims nobody took goes on; one that lost any stops.
import type { PgDb } from './db.ts';

/** A held claim: how many times the id is held, and the number of the claim that took its row. */
interface Held {
  n: number;
  claim: number;
  /** Held twice at some point: its row names only the later claim. */
  twice: boolean;
}

/**
 * Ids claimed (admitted to be sent) and not yet recorded, counted (the same id twice in one run is held twice), each
 * with the claim (statement) that took its row: the outcome that sends it names that claim (schema 7).
 */
export class HeldClaims {
  private readonly held = new Map<string, Held>();

  add(ids: Iterable<string>, claim: number): void {
    for (const id of ids) {
      const h = this.held.get(id);
      if (h === undefined) this.held.set(id, { n: 1, claim, twice: false });
      else {
        h.n++;
        h.claim = claim;
        h.twice = true;
      }
    }
  }

  remove(ids: Iterable<string>): void {
    for (const id of ids) {
      const h = this.held.get(id);
      if (h === undefined) continue;
      if (h.n <= 1) this.held.delete(id);
      else h.n--;
    }
  }

  ids(): string[] {
    return [...this.held.keys()];
  }

  /**
   * The claims the ids of `items` are held under, each once, appended to `into`; false when one of them is not held,
   * or was held twice (its row names one claim of two): its outcome is then recorded row by row.
   */
  claimsOf(items: readonly { id: string }[], into: number[]): boolean {
    const from = into.length;
    let trusted = true;
    for (const item of items) {
      const h = this.held.get(item.id);
      if (h === undefined || h.twice || h.claim <= 0) {
        trusted = false;
        continue;
      }
      if (into.indexOf(h.claim, from) < 0) into.push(h.claim);
    }
    return trusted;
  }
}

/** Claims of `ids` no longer this worker's: another worker claimed them (or claimed, sent and recorded them). */
const TAKEN_SQL = `
SELECT count(*)::int AS n FROM svc_ingest.transactions
WHERE transaction_id = ANY($1::text[]) AND destination_no = $2 AND claim_worker IS DISTINCT FROM $3`;

/**
 * How many of `ids` another worker holds (or has finished) now. Call it with the lease renewed and no outcome of
 * this worker being recorded (a recorded outcome's ids are no longer held).
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
