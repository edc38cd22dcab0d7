// `backfill status` from the PostgreSQL ledger: partitions by state (a working partition whose worker's lease ran out
// is stale), takeovers, records summed over the partitions and over the workers, rate and ETA, one entry per worker.
import type { PgDb } from '../db.ts';
import type { PartitionCounters } from './partitions.ts';

const num = (v: unknown): number => Number(v ?? 0);

/** One backfill worker as `backfill status` shows it. */
export interface BackfillWorker {
  workerId: string;
  /** Its lease is running. */
  live: boolean;
  /** live; stopped (ended cleanly); gone (its lease ran out without a stop: killed, host lost, paused). */
  state: 'live' | 'stopped' | 'gone';
  /** Partitions it claimed (takeovers included), holds now, and completed. */
  claimed: number;
  working: number;
  done: number;
  /** The counters of the partitions it holds or completed. */
  records: PartitionCounters;
  /** What it recorded in the ledger over its life, partitions since taken from it included. */
  acked: { batches: number; records: number };
  failed: { batches: number; records: number };
}

/**
 * The state of a backfill, as `backfill status` shows it.
 * @example { partitions: { total: 12, pending: 5, working: 2, stale: 0, done: 5, takenOver: 1, takeovers: 1 }, records: { sent: 1200000, … }, acked: { batches: 24100, records: 1205000 }, rate: { recordsPerSecond: 6950, … }, etaSeconds: 310, done: false, … }
 */
export interface BackfillStatus {
  ledger: string;
  inputs: number;
  /** takenOver: partitions claimed from a worker whose lease ran out (at least once); takeovers: how many times. */
  partitions: {
    total: number;
    pending: number;
    working: number;
    stale: number;
    done: number;
    takenOver: number;
    takeovers: number;
  };
  bytes: { total: number; done: number };
  /**
   * Summed over the partitions, each as its last holder counted it: after a takeover, what the earlier holder had
   * sent shows as skipped (acknowledged before). read = sent + skipped + failed + rejected.
   */
  records: PartitionCounters;
  /** Summed over the backfill's workers: what each recorded as acknowledged (takeovers included). */
  acked: { batches: number; records: number };
  startedAt: string | null;
  /** When the last partition was done (all done), else null. */
  finishedAt: string | null;
  elapsedSeconds: number;
  /** recordsPerSecond: records sent (summed over the partitions) per second since the first claim. */
  rate: { recordsPerSecond: number; bytesPerSecond: number };
  /** Remaining bytes at the rate so far; null before anything was done. */
  etaSeconds: number | null;
  done: boolean;
  workers: BackfillWorker[];
}

const counters = (r: Record<string, unknown>): PartitionCounters => ({
  read: num(r.read),
  sent: num(r.sent),
  skipped: num(r.skipped),
  failed: num(r.failed),
  rejected: num(r.rejected),
});

/** Read the state of the backfill (two queries; nothing is locked). */
export async function backfillStatus(db: PgDb): Promise<BackfillStatus> {
  const totals = await db.query(
    'other',
    `SELECT count(*)::int AS total,
       count(*) FILTER (WHERE state = 'pending')::int AS pending,
       count(*) FILTER (WHERE state = 'working' AND live)::int AS working,
       count(*) FILTER (WHERE state = 'working' AND NOT live)::int AS stale,
       count(*) FILTER (WHERE state = 'done')::int AS done,
       count(*) FILTER (WHERE takeovers > 0)::int AS taken_over, coalesce(sum(takeovers), 0) AS takeovers,
       coalesce(sum(end_byte - start_byte), 0) AS bytes, coalesce(sum(progress_bytes), 0) AS bytes_done,
       coalesce(sum(read), 0) AS read, coalesce(sum(sent), 0) AS sent, coalesce(sum(skipped), 0) AS skipped,
       coalesce(sum(failed), 0) AS failed, coalesce(sum(rejected), 0) AS rejected,
       min(started_at) AS started_at, max(done_at) AS last_done, now() AS now,
       (SELECT count(*)::int FROM svc_ingest.inputs) AS inputs
     FROM (SELECT p.*, coalesce(w.lease_until > now(), false) AS live
           FROM svc_ingest.partitions p LEFT JOIN svc_ingest.workers w ON w.worker_no = p.worker_no) x`,
  );
  const t = totals.rows[0] as Record<string, unknown>;
  const workers = await db.query(
    'other',
    `SELECT w.worker_id, w.lease_until > now() AS live, w.stopped_at IS NOT NULL AS stopped,
       w.partitions_claimed AS claimed, w.batches_acked, w.records_acked, w.batches_failed, w.records_failed,
       coalesce(p.working, 0) AS working, coalesce(p.done, 0) AS done,
       p.read, p.sent, p.skipped, p.failed, p.rejected
     FROM svc_ingest.workers w
     LEFT JOIN (SELECT worker_no, count(*) FILTER (WHERE state = 'working')::int AS working,
                  count(*) FILTER (WHERE state = 'done')::int AS done, sum(read) AS read, sum(sent) AS sent,
                  sum(skipped) AS skipped, sum(failed) AS failed, sum(rejected) AS rejected
                FROM svc_ingest.partitions WHERE worker_no IS NOT NULL GROUP BY worker_no) p
       ON p.worker_no = w.worker_no
     WHERE w.partitions_claimed > 0 OR p.worker_no IS NOT NULL
     ORDER BY w.worker_id`,
  );
  const partitions = {
    total: num(t.total),
    pending: num(t.pending),
    working: num(t.working),
    stale: num(t.stale),
    done: num(t.done),
    takenOver: num(t.taken_over),
    takeovers: num(t.takeovers),
  };
  const done = partitions.total > 0 && partitions.done === partitions.total;
  const started = t.started_at instanceof Date ? t.started_at : null;
  const now = t.now instanceof Date ? t.now : new Date();
  const end = done && t.last_done instanceof Date ? t.last_done : now;
  const elapsedSeconds = started ? Math.max(0, (end.getTime() - started.getTime()) / 1000) : 0;
  const bytes = { total: num(t.bytes), done: num(t.bytes_done) };
  const list: BackfillWorker[] = workers.rows.map((w) => ({
    workerId: String(w.worker_id),
    live: Boolean(w.live),
    state: w.live ? 'live' : w.stopped ? 'stopped' : 'gone',
    claimed: num(w.claimed),
    working: num(w.working),
    done: num(w.done),
    records: counters(w),
    acked: { batches: num(w.batches_acked), records: num(w.records_acked) },
    failed: { batches: num(w.batches_failed), records: num(w.records_failed) },
  }));
  const acked = {
    batches: list.reduce((n, w) => n + w.acked.batches, 0),
    records: list.reduce((n, w) => n + w.acked.records, 0),
  };
  const bytesPerSecond = elapsedSeconds > 0 ? bytes.done / elapsedSeconds : 0;
  const records = counters(t);
  return {
    ledger: db.location,
    inputs: num(t.inputs),
    partitions,
    bytes,
    records,
    acked,
    startedAt: started?.toISOString() ?? null,
    finishedAt: done && t.last_done instanceof Date ? t.last_done.toISOString() : null,
    elapsedSeconds,
    rate: { recordsPerSecond: elapsedSeconds > 0 ? records.sent / elapsedSeconds : 0, bytesPerSecond },
    etaSeconds: done ? 0 : bytesPerSecond > 0 ? (bytes.total - bytes.done) / bytesPerSecond : null,
    done,
    workers: list,
  };
}
