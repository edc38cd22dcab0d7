// The destinations of a PostgreSQL ledger (svc_ingest.destinations): which number a run's destination has, the
// refusal of a destination the ledger has not seen, and the one-time adoption of the rows written before
// destinations were recorded (destination 1, legacy). ../destination.ts has the rules; docs/postgres.md the table.
import { SvcIngestError } from '../../errors.ts';
import type { Logger } from '../../log.ts';
import { newDestinationError } from '../destination.ts';
import type { PgDb } from './db.ts';

/** Destination 1: the rows written before destinations existed; a ledger's first destination takes it over. */
export const FIRST_DESTINATION = 1;

export interface ResolveDestinationOptions {
  destination: string;
  /** --new-destination: a destination the ledger has not seen may be added. */
  allowNew: boolean;
  /** false (dry run, ledger status): nothing is written; an unknown destination gives 0 (nothing of it stored). */
  write: boolean;
  runId: string;
  logger: Logger;
}

interface Row {
  destination_no: number;
  destination: string | null;
  legacy: boolean;
  /** It has acknowledged something (a destination that only ever failed does not hold the ledger). */
  acked: boolean;
}

/**
 * The number of this run's destination, registering it when needed (in one transaction, the table locked against
 * concurrent registrations): known → its number; the ledger's first destination (or the first run after the
 * upgrade, which adopts the legacy rows: logged once, recorded in `adopted_at`) → 1; else refused
 * (LEDGER_DESTINATION), or with `allowNew` a new number.
 * @example const no = await resolveDestination(db, { destination: 'https://svc.example/api', allowNew: false, write: true, runId, logger })
 */
export async function resolveDestination(db: PgDb, o: ResolveDestinationOptions): Promise<number> {
  if (!o.write) {
    const rows = (
      await db.query<Row>('other', 'SELECT * FROM svc_ingest.destinations ORDER BY destination_no')
    ).rows;
    return decide(db, rows, o, async () => {}).no;
  }
  // Known already (every run but a ledger's first): one lookup, no lock.
  const known = await db.query<{ n: number }>(
    'other',
    'SELECT destination_no AS n FROM svc_ingest.destinations WHERE destination = $1',
    [o.destination],
  );
  if (known.rows[0]) return known.rows[0].n;
  return db.withClient(async (c) => {
    await c.query('BEGIN');
    try {
      await c.query('LOCK TABLE svc_ingest.destinations IN SHARE ROW EXCLUSIVE MODE');
      const rows = (await c.query<Row>('SELECT * FROM svc_ingest.destinations ORDER BY destination_no')).rows;
      const d = decide(db, rows, o, async (no, adopt) => {
        if (no === FIRST_DESTINATION)
          await c.query(
            `UPDATE svc_ingest.destinations SET destination = $1, added_by = $2, added_at = now(),
               adopted_at = CASE WHEN legacy THEN now() END WHERE destination_no = 1 AND destination IS NULL`,
            [o.destination, o.runId],
          );
        else
          await c.query(
            'INSERT INTO svc_ingest.destinations (destination_no, destination, added_by) VALUES ($1, $2, $3)',
            [no, o.destination, o.runId],
          );
        void adopt;
      });
      await d.register();
      await c.query('COMMIT');
      return d.no;
    } catch (err) {
      await c.query('ROLLBACK').catch(() => {});
      throw err;
    }
  });
}

/**
 * The destination number a run's statements use: 1 when it names none; else resolveDestination's. On an error the
 * connection is closed and the error is one line (LEDGER_WRITE registering, LEDGER_READ looking up).
 */
export async function runDestination(
  db: PgDb,
  o: { destination?: string; newDestination?: boolean; runId: string; logger: Logger },
  write: boolean,
): Promise<number> {
  if (o.destination === undefined) return FIRST_DESTINATION;
  try {
    return await resolveDestination(db, {
      destination: o.destination,
      allowNew: o.newDestination === true,
      write,
      runId: o.runId,
      logger: o.logger,
    });
  } catch (err) {
    await db.close().catch(() => {});
    throw write
      ? db.fail('LEDGER_WRITE', 'cannot register this run’s destination in', err)
      : db.fail('LEDGER_READ', 'cannot read the destinations of', err);
  }
}

function decide(
  db: PgDb,
  rows: Row[],
  o: ResolveDestinationOptions,
  write: (no: number, adopt: boolean) => Promise<void>,
): { no: number; register: () => Promise<void> } {
  const mine = rows.find((r) => r.destination === o.destination);
  if (mine) return { no: mine.destination_no, register: async () => {} };
  const first = rows.find((r) => r.destination_no === FIRST_DESTINATION);
  if (first && first.destination === null) {
    if (first.legacy)
      o.logger.warn(
        {
          event: 'ledger.destination.adopted',
          ledger: db.location,
          destination: o.destination,
          recorded: o.write,
        },
        `the ledger's rows written before destinations were recorded are taken as this run's destination's (${o.destination}); recorded in the ledger, said once`,
      );
    return { no: FIRST_DESTINATION, register: () => write(FIRST_DESTINATION, first.legacy) };
  }
  const known = rows.flatMap((r) => (r.destination === null || !r.acked ? [] : [r.destination]));
  if (known.length > 0 && !o.allowNew) throw newDestinationError(db.location, known, o.destination);
  if (known.length > 0)
    o.logger.warn(
      { event: 'ledger.destination.added', ledger: db.location, destination: o.destination, known },
      `sending to a destination new to this ledger (${o.destination}); its acknowledgements count for it alone`,
    );
  // A dry run writes nothing: a number no row has, so nothing counts as acknowledged.
  const no = Math.max(0, ...rows.map((r) => r.destination_no)) + 1;
  return { no: o.write ? no : 0, register: () => write(no, false) };
}

/**
 * The destination a backfill plan records: registered as a run's is (refused when new, unless `newDestination`);
 * 1 when the plan names none.
 */
export async function planDestination(
  db: PgDb,
  o: { destination?: string; newDestination?: boolean; logger: Logger },
): Promise<number> {
  if (o.destination === undefined) return FIRST_DESTINATION;
  return resolveDestination(db, {
    destination: o.destination,
    allowNew: o.newDestination === true,
    write: true,
    runId: 'plan',
    logger: o.logger,
  });
}

/** An input planned before for another destination: refused, naming both. */
export async function plannedElsewhere(
  db: PgDb,
  path: string,
  ours: string | undefined,
): Promise<SvcIngestError> {
  const r = await db.query<{ destination: string | null }>(
    'other',
    `SELECT d.destination FROM svc_ingest.inputs i LEFT JOIN svc_ingest.destinations d USING (destination_no)
     WHERE i.path = $1`,
    [path],
  );
  return new SvcIngestError(
    'LEDGER_DESTINATION',
    `${path} is planned in ${db.location} for ${r.rows[0]?.destination ?? '(unnamed)'}, not for ${ours ?? '(unnamed)'}; ` +
      'plan it for another destination in its own ledger name (?schema= or ledger.name)',
    { source: path },
  );
}
