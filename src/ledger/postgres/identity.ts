// Who a worker is, beyond its name, and registering under a name another process may have held: a worker started
// with the id of one that died takes that id's row (and so its claims and partitions) back at once when it can prove
// the holder gone — same host and pid namespace, and that process no longer exists (its pid gone, or reused by a
// process started at another time, or the host rebooted since) — and refuses, in one line, to start beside a live
// one. A holder on another host (or in another container) cannot be looked at: its lease decides (a heartbeat seen
// while waiting for it means it is alive).
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { SvcIngestError } from '../../errors.ts';
import type { Logger } from '../../log.ts';
import { sleep } from '../../sleep.ts';
import { leaseWaits, type PgConnection } from '../connection.ts';
import type { PgDb } from './db.ts';

/**
 * A worker row registered by a version before schema 7 that may still be running (alias `x`): no `claims_from` (0,
 * migration 7's default; TAKE_SQL always sets one), its lease not ended, and run out less than a day ago (a process
 * paused past its lease goes on when it wakes). Such a worker reads an id as acknowledged by its row alone
 * (`acked_seq`), so while one may run, outcomes are recorded row by row (store.ts): a worker of the previous version
 * still sending during or after `ledger migrate` neither sends again what this one acknowledged nor takes a claim as
 * over. None can start on schema 7 (it refuses a newer schema), so this ends once they have.
 */
export const OLDER_WORKER_ROW = `x.claims_from = 0 AND x.stopped_at IS NULL AND x.lease_until > now() - interval '1 day'`;

/** Whether any worker of a version before schema 7 may still be running (OLDER_WORKER_ROW). */
export const OLDER_WORKERS_SQL = `EXISTS (SELECT 1 FROM svc_ingest.workers x WHERE ${OLDER_WORKER_ROW})`;

/** This process as the workers table records it. */
export interface ProcessIdentity {
  host: string;
  pid: number;
  /** The kernel's boot id (Linux), else null. */
  bootId: string | null;
  /** The process's start time in clock ticks since boot (Linux /proc/PID/stat), else null. */
  processStart: string | null;
  /** The pid namespace (Linux, e.g. `pid:[4026531836]`): pids of another one (a container) cannot be looked at. */
  pidNamespace: string | null;
}

function readOr(file: string): string | null {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    return null;
  }
}

/** Field 22 of /proc/PID/stat (after the command name, which may hold spaces and parentheses). */
export function processStartOf(pid: number): string | null {
  const stat = readOr(`/proc/${pid}/stat`);
  if (stat === null) return null;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields[19] ?? null;
}

export function ownIdentity(): ProcessIdentity {
  return {
    host: hostname(),
    pid: process.pid,
    bootId: readOr('/proc/sys/kernel/random/boot_id'),
    processStart: processStartOf(process.pid),
    pidNamespace: linkOr('/proc/self/ns/pid'),
  };
}

function linkOr(path: string): string | null {
  try {
    return readlinkSync(path);
  } catch {
    return null;
  }
}

/** A registered holder of a worker id, as read from its row. */
export interface Holder {
  host: string;
  pid: number;
  boot_id: string | null;
  process_start: string | null;
  pid_namespace: string | null;
  run_id: string;
  started_at: Date;
  heartbeat_at: Date;
  /** Its lease is in the future and it has not stopped. */
  live: boolean;
  /** Milliseconds left on its lease. */
  left_ms: number;
}

/**
 * Whether the holder's process is gone ('dead'), running ('alive'), or on another host ('unknown': its lease decides).
 * `openHere`: this process has a session open under the id (a holder with our own pid is then us, else an earlier
 * process that had our pid, as a container's pid 1 does after a restart).
 */
export function holderState(h: Holder, me: ProcessIdentity, openHere: boolean): 'dead' | 'alive' | 'unknown' {
  // Another host, or another pid namespace on it (a container sharing the host's name): its pids are not ours.
  if (h.host !== me.host || (h.pid_namespace ?? null) !== me.pidNamespace) return 'unknown';
  if (h.boot_id && me.bootId && h.boot_id !== me.bootId) return 'dead';
  if (h.pid === me.pid) return openHere ? 'alive' : 'dead';
  try {
    process.kill(h.pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return 'dead';
  }
  const start = processStartOf(h.pid);
  if (h.process_start && start && h.process_start !== start) return 'dead';
  return 'alive';
}

/** Worker ids with a session open in this process (by ledger): the same id twice here is two live workers. */
const openHere = new Set<string>();

export interface RegisterOptions {
  workerId: string;
  runId: string;
  /** The lease (leaseMs): how long the worker's claims are its own without a heartbeat. */
  connection: PgConnection;
  logger: Logger;
}

const HOLDER_SQL = `
SELECT host, pid, boot_id, process_start, pid_namespace, run_id, started_at, heartbeat_at,
       (stopped_at IS NULL AND lease_until > now()) AS live,
       greatest(0, extract(epoch FROM lease_until - now()) * 1000)::float8 AS left_ms
FROM svc_ingest.workers WHERE worker_id = $1`;

// Insert the worker, or take the row of its id when that is free (stopped, lease run out) or still held by the run
// `$9` that was proven gone; no row back: someone else took it first (look again).
const TAKE_SQL = `
INSERT INTO svc_ingest.workers AS w (worker_id, run_id, host, pid, boot_id, process_start, pid_namespace, lease_until,
  claims_from)
VALUES ($1, $2, $3, $4, $5, $6, $10, now() + $7 * interval '1 millisecond', nextval('svc_ingest.batch_seq'))
ON CONFLICT (worker_id) DO UPDATE SET run_id = EXCLUDED.run_id, host = EXCLUDED.host, pid = EXCLUDED.pid,
  boot_id = EXCLUDED.boot_id, process_start = EXCLUDED.process_start, pid_namespace = EXCLUDED.pid_namespace,
  started_at = now(), heartbeat_at = now(), lease_until = EXCLUDED.lease_until, stopped_at = NULL,
  claims_from = EXCLUDED.claims_from, lapses = 0
WHERE NOT (w.stopped_at IS NULL AND w.lease_until > now()) OR (w.run_id = $8 AND $9::boolean)
RETURNING worker_no`;

// The partitions an earlier process of this id was working on are free again. Its transaction claims ended when this
// process took the row: a claim is open only when made after its worker's claims_from (acks.ts).
const FREE_SQL = `
UPDATE svc_ingest.partitions SET worker_no = NULL WHERE worker_no = $1 AND state = 'working'`;

function refusal(workerId: string, h: Holder, location: string): SvcIngestError {
  return new SvcIngestError(
    'USAGE_INVALID',
    `worker id ${workerId} is held by a live worker (host ${h.host}, pid ${h.pid}, started ${h.started_at.toISOString()}) ` +
      `in ${location}: stop that one, or start this one with another --worker-id`,
    { field: '--worker-id' },
  );
}

/**
 * Register this process as worker `workerId`: returns its worker number and a release for the in-process record.
 * A dead holder of the id on this host is replaced at once; a live one refused (USAGE_INVALID, one line); a holder
 * on another host is waited for while its lease runs (refused as soon as it renews it).
 */
export async function registerWorker(
  db: PgDb,
  o: RegisterOptions,
): Promise<{ workerNo: number; replaced: Holder | null; release: () => void }> {
  const me = ownIdentity();
  const key = `${db.location}\n${db.schema}\n${o.workerId}`;
  let waitingFor = null as { run: string; beat: number } | null;
  // Not send/retried.ts (ledger/ is below send/), and no backoff: a poll of another host's lease, ended by its expiry.
  for (;;) {
    const r = await db.query<Holder>('other', HOLDER_SQL, [o.workerId]);
    const h = r.rows[0];
    let proven = false;
    if (h?.live) {
      const state = holderState(h, me, openHere.has(key));
      if (state === 'alive') throw refusal(o.workerId, h, db.location);
      if (state === 'unknown') {
        // Another host: alive if it renews its lease while we look, else gone when the lease runs out.
        const beat = new Date(h.heartbeat_at).getTime();
        if (waitingFor?.run === h.run_id && beat !== waitingFor.beat)
          throw refusal(o.workerId, h, db.location);
        if (waitingFor?.run !== h.run_id)
          o.logger.warn(
            {
              event: 'ledger.worker.waiting',
              workerId: o.workerId,
              host: h.host,
              pid: h.pid,
              leftMs: h.left_ms,
            },
            `worker id ${o.workerId} is held by host ${h.host}: waiting for its lease to run out (${Math.ceil(h.left_ms / 1000)} s) or a heartbeat`,
          );
        // (At most one lease: not cut short by a signal, which the worker's loop then finds and ends on.)
        waitingFor = { run: h.run_id, beat };
        await sleep(Math.max(50, Math.min(h.left_ms + 20, leaseWaits(o.connection).holderPollMs)));
        continue;
      }
      proven = true;
    }
    const t = await db.query<{ worker_no: number }>('other', TAKE_SQL, [
      o.workerId,
      o.runId,
      me.host,
      me.pid,
      me.bootId,
      me.processStart,
      o.connection.leaseMs,
      h?.run_id ?? null,
      proven,
      me.pidNamespace,
    ]);
    const workerNo = t.rows[0]?.worker_no;
    if (workerNo === undefined) continue;
    // What an earlier process of this id held is free at once: its partitions (stale, claimed again from their
    // start by this worker or any other) here, and its transaction claims by the row taken above (claims_from: else
    // another worker taking the partition over would skip them as live claims of this one).
    if (h) await db.query('other', FREE_SQL, [workerNo]);
    if (h?.live)
      o.logger.warn(
        { event: 'ledger.worker.replaced', workerId: o.workerId, host: h.host, pid: h.pid },
        `worker id ${o.workerId}: its earlier process (host ${h.host}, pid ${h.pid}) is gone; its partitions and claims are taken back now`,
      );
    openHere.add(key);
    return { workerNo: Number(workerNo), replaced: h?.live ? h : null, release: () => openHere.delete(key) };
  }
}
