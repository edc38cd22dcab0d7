// One worker's presence in the PostgreSQL ledger: connects (a database without the schema gets it; an older one is
// refused: schema-check.ts), registers the worker (identity.ts) with a lease and renews it on a heartbeat. Transaction
// claims and partition claims both hang on this one lease: a claim is live while its worker's lease_until is in the
// future (the database's clock decides, never a host's).
import { hostname } from 'node:os';
import type { Logger } from '../../log.ts';
import { leaseWaits, type PgConnection } from '../connection.ts';
import type { PgLedgerRef } from '../ref.ts';
import type { PgDb } from './db.ts';
import { runDestination } from './destinations.ts';
import { OLDER_WORKERS_SQL, registerWorker } from './identity.ts';
import { connectLedgerDb } from './schema-check.ts';

export { connectLedgerDb } from './schema-check.ts';

export interface PgSessionOptions {
  runId: string;
  /** The claiming worker's name (default host:pid:runId). Two live processes must never share one. */
  workerId?: string;
  /** Heartbeat period (default a third of the lease, the connection's leaseMs: how long claims stay live without one). */
  heartbeatMs?: number;
  logger: Logger;
  signal?: AbortSignal;
  /** Called each time a heartbeat finds the lease had run out (claims may have been taken over: check them). */
  onLeaseLapsed?: () => void;
  /** Where this worker sends (../destination.ts); absent: destination 1 (the ledger's first), unchecked. */
  destination?: string;
  /** --new-destination: a destination the ledger has not seen may be added; else refused (LEDGER_DESTINATION). */
  newDestination?: boolean;
}

/**
 * A registered worker with a live lease.
 * @example const s = await openPgSession(ref, { runId, logger }); … await s.close()
 */
export interface PgSession {
  readonly db: PgDb;
  readonly workerId: string;
  /** The worker's number in svc_ingest.workers (claims refer to it). */
  readonly workerNo: number;
  /** Its destination's number in svc_ingest.destinations: its claims, outcomes and partitions are that one's. */
  readonly destinationNo: number;
  /** Renew the lease now; `lapsed` when it had already run out. */
  heartbeat(): Promise<{ lapsed: boolean }>;
  /**
   * Whether this worker's claims are still its own, asked before a batch leaves: true while the last renewal is
   * younger than the lease (no query); past that (the process was paused, or the database slow) a heartbeat
   * decides, and false means the lease had run out — another worker may have taken the claims over.
   */
  stillHeld(): Promise<boolean>;
  /** True once a heartbeat found the lease had run out (it stays true: claims made before may be someone else's). */
  readonly lapsed: boolean;
  /** How many times a heartbeat found the lease had run out (each time, the claims held are checked again). */
  readonly lapses: number;
  /** A worker of a version before schema 7 may still be running (OLDER_WORKERS_SQL), as of the last heartbeat. */
  readonly olderWorkers: boolean;
  /** Stop the heartbeat, end the lease (the worker's claims become free to take), close the connections. Idempotent. */
  close(): Promise<void>;
}

/** A worker name that is unique among live processes: host:pid:runId. */
export function defaultWorkerId(runId: string): string {
  return `${hostname()}:${process.pid}:${runId}`;
}

/**
 * Register as a worker and start the heartbeat. A worker id held by a process proven gone is taken back at once, with
 * that process's claims and partitions; one held by a live process is refused (identity.ts).
 */
export async function openPgSession(ref: PgLedgerRef, o: PgSessionOptions): Promise<PgSession> {
  const { connection } = ref;
  const heartbeatMs = o.heartbeatMs ?? leaseWaits(connection).heartbeatMs;
  const workerId = o.workerId ?? defaultWorkerId(o.runId);
  const { db } = await connectLedgerDb(ref, { logger: o.logger, signal: o.signal, write: true });
  try {
    // Before the worker exists: a refused destination leaves no trace in the ledger.
    const destinationNo = await runDestination(db, o, true);
    const { workerNo, release } = await registerWorker(db, {
      workerId,
      runId: o.runId,
      connection,
      logger: o.logger,
    });
    const older = await db.query<{ older: boolean }>('other', `SELECT ${OLDER_WORKERS_SQL} AS older`);
    const olderWorkers = older.rows[0]?.older ?? true;
    return startSession(db, o, {
      workerId,
      workerNo,
      destinationNo,
      connection,
      heartbeatMs,
      release,
      olderWorkers,
    });
  } catch (err) {
    await db.close().catch(() => {});
    throw db.fail('LEDGER_WRITE', 'cannot register this worker in', err);
  }
}

interface Registered {
  workerId: string;
  workerNo: number;
  destinationNo: number;
  connection: PgConnection;
  heartbeatMs: number;
  release: () => void;
  olderWorkers: boolean;
}

/** The registered worker's heartbeat, lease checks and close. */
function startSession(db: PgDb, o: PgSessionOptions, reg: Registered): PgSession {
  const { workerId, workerNo, destinationNo, connection, heartbeatMs } = reg;
  // The heartbeat's period: a share of the lease (ledger/connection.ts leaseWaits).
  o.logger.debug({ event: 'ledger.pg.worker', workerId, workerNo, heartbeatMs }, 'worker registered');

  let lapses = 0;
  let olderWorkers = reg.olderWorkers;
  if (olderWorkers)
    o.logger.info(
      { event: 'ledger.pg.olderWorkers', workerId },
      'a worker of an earlier svc-ingest (ledger schema 6 or older) may still be running: outcomes are recorded row by row, as it reads them, until it has stopped',
    );
  // Measured from before the query that renewed it, on this host's monotonic clock: never later than the database's.
  let heldUntil = 0;
  const renew = (asked: number): void => {
    heldUntil = asked + connection.leaseMs;
  };
  renew(performance.now());
  // One heartbeat at a time: a caller arriving while one is under way gets its answer. Two at once could answer out
  // of order — the second, asked after the first renewed the lease, saying "not lapsed" before the first said
  // "lapsed" — and a batch would leave on claims another worker may have taken over.
  let beatingNow: Promise<{ lapsed: boolean }> | null = null;
  const heartbeat = (): Promise<{ lapsed: boolean }> => {
    beatingNow ??= beat().finally(() => {
      beatingNow = null;
    });
    return beatingNow;
  };
  const beat = async (): Promise<{ lapsed: boolean }> => {
    const asked = performance.now();
    const r = await db.query<{ lapsed: boolean; older: boolean }>(
      'heartbeat',
      // A lapse is counted in the row too: the record reads it (store.ts), so outcomes are recorded row by row
      // from then on even before this answer arrives.
      `UPDATE svc_ingest.workers w SET lease_until = now() + $2 * interval '1 millisecond', heartbeat_at = now(),
         lapses = w.lapses + (o.old < now())::int
       FROM (SELECT lease_until AS old FROM svc_ingest.workers WHERE worker_no = $1) o
       WHERE w.worker_no = $1 AND w.run_id = $3 RETURNING o.old < now() AS lapsed, ${OLDER_WORKERS_SQL} AS older`,
      [workerNo, connection.leaseMs, o.runId],
      'svc_heartbeat',
    );
    const lapsed = r.rows[0]?.lapsed ?? true;
    if (r.rows.length > 0) renew(asked);
    olderWorkers = r.rows[0]?.older ?? olderWorkers;
    if (lapsed) {
      lapses++;
      o.logger.warn(
        { event: 'ledger.lease.lapsed', workerId, lapses },
        'this worker’s lease had run out before its heartbeat (renewed now); its claims are checked before another batch leaves',
      );
      o.onLeaseLapsed?.();
    }
    return { lapsed };
  };
  let beating: Promise<unknown> | null = null;
  const timer = setInterval(() => {
    if (beating) return; // the previous one is still waiting for the database
    beating = heartbeat()
      .catch((err) =>
        o.logger.warn(
          { event: 'ledger.heartbeat.failed', error: db.fail('LEDGER_WRITE', 'heartbeat', err).message },
          'heartbeat failed',
        ),
      )
      .finally(() => {
        beating = null;
      });
  }, heartbeatMs);
  timer.unref();

  let closing: Promise<void> | undefined;
  return {
    db,
    workerId,
    workerNo,
    destinationNo,
    heartbeat,
    get lapsed() {
      return lapses > 0;
    },
    get lapses() {
      return lapses;
    },
    get olderWorkers() {
      return olderWorkers;
    },
    async stillHeld() {
      if (performance.now() < heldUntil) return true;
      return !(await heartbeat()).lapsed;
    },
    close() {
      closing ??= (async () => {
        clearInterval(timer);
        await beating;
        try {
          await db.query(
            'other',
            `UPDATE svc_ingest.workers SET lease_until = least(lease_until, now()), stopped_at = now()
             WHERE worker_no = $1 AND run_id = $2`,
            [workerNo, o.runId],
          );
        } catch (err) {
          o.logger.warn(
            { event: 'ledger.pg.close', error: db.fail('LEDGER_WRITE', 'closing', err).message },
            'could not end the lease',
          );
        } finally {
          reg.release();
          await db.close();
        }
      })();
      return closing;
    },
  };
}
