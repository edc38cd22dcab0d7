// Backfill partitions in the PostgreSQL ledger: a plan recorded once per input file (idempotent), the next
// partition claimed with SELECT … FOR UPDATE SKIP LOCKED under the worker's lease (a partition whose worker's
// lease ran out is claimed again), marked done with its counters, and the state of the whole backfill.
import { SvcIngestError } from '../../../errors.ts';
import type { PgDb } from '../db.ts';
import type { PgSession } from '../session.ts';

/**
 * An input file of a backfill, as planned: what any worker needs to read its partitions as the planner did.
 * @example { path: '/data/2019.csv', size: 1073741824, mtimeMs: 1763800000000, format: 'csv', gzip: false, delimiter: ',', recordDelimiter: '\n', columns: ['transactionId', …], mapping: 'northwind-csv' }
 */
export interface BackfillInput {
  /** Absolute path, the same on every worker (a shared file system). */
  path: string;
  size: number;
  mtimeMs: number;
  format: 'csv' | 'ndjson';
  gzip: boolean;
  delimiter: string;
  /** CSV: '\n' or '\r\n' (for partitions that do not start the file). */
  recordDelimiter?: string;
  /** CSV: the header (for partitions that do not start the file). */
  columns?: string[];
  /** Profile name, or absolute path; undefined = canonical. */
  mapping?: string;
  /** sha256 of the profile file's bytes (undefined for canonical), so workers can check they map alike. */
  mappingSha256?: string;
}

/** One input file with its partitions, to record. */
export interface PlannedInput extends BackfillInput {
  partitionBytes: number;
  partitions: Array<{ start: number; end: number; firstLine: number }>;
  /** The destination the backfill sends to (svc_ingest.destinations; default 1). */
  destinationNo?: number;
}

/** What recording one input's plan did. */
export interface PlanRecord {
  inputNo: number;
  /** false: the same file (path, size, mtime) was planned before; nothing was added. */
  created: boolean;
  partitions: number;
}

/** Counters of a partition's work (what the worker's run summary says of it). */
export interface PartitionCounters {
  read: number;
  sent: number;
  skipped: number;
  failed: number;
  rejected: number;
}

/**
 * A claimed partition with everything needed to read it.
 * @example { partitionNo: 7, seq: 3, start: 201327104, end: 268436020, firstLine: 1233411, claims: 1, path: '/data/2019.csv', format: 'csv', … }
 */
export interface ClaimedPartition extends BackfillInput {
  partitionNo: number;
  inputNo: number;
  /** Its place in the file: 0, 1, … */
  seq: number;
  start: number;
  end: number;
  firstLine: number;
  /** How many times it has been claimed, this one included (> 1: released or taken over from a dead worker). */
  claims: number;
  /** How many of those claims took it from a worker whose lease had run out (this one included). */
  takeovers: number;
  /** This claim took it from a worker whose lease had run out. */
  takeover: boolean;
  /** The last line of the partition whose reject an earlier holder wrote (0: none): those are not written again. */
  rejectsThrough: number;
}

const num = (v: unknown): number => Number(v ?? 0);

/** A file planned before that has changed since: its partitions no longer fit it. */
export function changedInput(
  file: string,
  was: { size: number; mtimeMs: number },
  now: { size: number; mtimeMs: number },
): SvcIngestError {
  const when = (ms: number) => new Date(ms).toISOString();
  return new SvcIngestError(
    'USAGE_INVALID',
    `${file} was planned when it had ${was.size} bytes (modified ${when(was.mtimeMs)}); it now has ${now.size} ` +
      `(modified ${when(now.mtimeMs)}): a changed file needs a new backfill (another ledger database)`,
    { source: file },
  );
}

/**
 * Record one input's partitions, once: the same path planned again with the same size and mtime is a no-op; with
 * another size or mtime it is refused (USAGE_INVALID), since its partitions no longer fit the file. Two planners
 * at once: one inserts, the other finds it planned.
 */
export async function recordPlan(db: PgDb, input: PlannedInput, plannedBy: string): Promise<PlanRecord> {
  return db.withClient(async (c) => {
    await c.query('BEGIN');
    try {
      const ins = await c.query<{ input_no: number }>(
        `INSERT INTO svc_ingest.inputs (path, size, mtime_ms, format, gzip, delimiter, record_delimiter, columns,
           mapping, mapping_sha256, partition_bytes, planned_by, destination_no)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
         ON CONFLICT (path) DO NOTHING RETURNING input_no`,
        [
          input.path,
          input.size,
          input.mtimeMs,
          input.format,
          input.gzip,
          input.delimiter,
          input.recordDelimiter ?? null,
          input.columns ?? null,
          input.mapping ?? null,
          input.mappingSha256 ?? null,
          input.partitionBytes,
          plannedBy,
          input.destinationNo ?? 1,
        ],
      );
      const inputNo = ins.rows[0]?.input_no;
      if (inputNo === undefined) {
        const old = await c.query<{ input_no: number; size: string; mtime_ms: string; n: number }>(
          `SELECT i.input_no, i.size, i.mtime_ms, (SELECT count(*)::int FROM svc_ingest.partitions p WHERE p.input_no = i.input_no) AS n
           FROM svc_ingest.inputs i WHERE i.path = $1`,
          [input.path],
        );
        await c.query('COMMIT');
        const row = old.rows[0];
        if (!row) throw new Error(`input ${input.path} vanished while being planned`);
        if (num(row.size) !== input.size || num(row.mtime_ms) !== input.mtimeMs)
          throw changedInput(input.path, { size: num(row.size), mtimeMs: num(row.mtime_ms) }, input);
        return { inputNo: row.input_no, created: false, partitions: row.n };
      }
      const p = input.partitions;
      await c.query(
        `INSERT INTO svc_ingest.partitions (input_no, seq, start_byte, end_byte, first_line)
         SELECT $1, u.seq - 1, u.s, u.e, u.l FROM unnest($2::bigint[], $3::bigint[], $4::bigint[]) WITH ORDINALITY AS u(s, e, l, seq)`,
        [inputNo, p.map((x) => x.start), p.map((x) => x.end), p.map((x) => x.firstLine)],
      );
      await c.query('COMMIT');
      return { inputNo, created: true, partitions: p.length };
    } catch (err) {
      await c.query('ROLLBACK').catch(() => {});
      throw err;
    }
  });
}

// One statement: the next partition (pending, or working under a lease that ran out: a takeover), the claim, and the
// worker's count of partitions claimed.
const CLAIM_SQL = `
WITH next AS (
  SELECT q.partition_no, q.state FROM svc_ingest.partitions q
  WHERE (q.state = 'pending'
     OR (q.state = 'working' AND NOT EXISTS (SELECT 1 FROM svc_ingest.workers w
                                             WHERE w.worker_no = q.worker_no AND w.lease_until > now())))
    AND EXISTS (SELECT 1 FROM svc_ingest.inputs qi WHERE qi.input_no = q.input_no AND qi.destination_no = $2)
  ORDER BY q.partition_no
  LIMIT 1
  FOR UPDATE OF q SKIP LOCKED
),
claimed AS (
  UPDATE svc_ingest.partitions p
  SET state = 'working', worker_no = $1, claims = p.claims + 1, claimed_at = now(),
      takeovers = p.takeovers + (CASE WHEN next.state = 'working' THEN 1 ELSE 0 END),
      started_at = coalesce(p.started_at, now()), progress_bytes = 0
  FROM next, svc_ingest.inputs i
  WHERE p.partition_no = next.partition_no AND i.input_no = p.input_no
  RETURNING p.partition_no, p.input_no, p.seq, p.start_byte, p.end_byte, p.first_line, p.claims, p.takeovers,
            p.rejects_through,
            next.state = 'working' AS takeover,
            i.path, i.size, i.mtime_ms, i.format, i.gzip, i.delimiter, i.record_delimiter, i.columns, i.mapping,
            i.mapping_sha256
),
counted AS (
  UPDATE svc_ingest.workers SET partitions_claimed = partitions_claimed + 1
  WHERE worker_no = $1 AND EXISTS (SELECT 1 FROM claimed)
)
SELECT * FROM claimed`;

interface ClaimRow {
  partition_no: string;
  input_no: number;
  seq: number;
  start_byte: string;
  end_byte: string;
  first_line: string;
  claims: number;
  takeovers: number;
  takeover: boolean;
  rejects_through: string;
  path: string;
  size: string;
  mtime_ms: string;
  format: 'csv' | 'ndjson';
  gzip: boolean;
  delimiter: string;
  record_delimiter: string | null;
  columns: string[] | null;
  mapping: string | null;
  mapping_sha256: string | null;
}

/**
 * Claim the next partition for this worker, in one round trip: the lowest-numbered one that is pending or whose
 * worker's lease ran out. Concurrent claimers skip each other's locked rows, so two never get the same partition.
 * null when none is left to claim (all done, or held by live workers).
 * @example for (let p = await claimPartition(s); p; p = await claimPartition(s)) { …; await completePartition(s, p.partitionNo, counters) }
 */
export async function claimPartition(session: PgSession): Promise<ClaimedPartition | null> {
  const r = await session.db.query<ClaimRow>(
    'claim',
    CLAIM_SQL,
    [session.workerNo, session.destinationNo],
    'svc_claim_partition',
  );
  const row = r.rows[0];
  if (!row) {
    await refuseOthersPartitions(session);
    return null;
  }
  return {
    partitionNo: num(row.partition_no),
    inputNo: row.input_no,
    seq: row.seq,
    start: num(row.start_byte),
    end: num(row.end_byte),
    firstLine: num(row.first_line),
    claims: row.claims,
    takeovers: row.takeovers,
    takeover: row.takeover,
    rejectsThrough: num(row.rejects_through),
    path: row.path,
    size: num(row.size),
    mtimeMs: num(row.mtime_ms),
    format: row.format,
    gzip: row.gzip,
    delimiter: row.delimiter,
    ...(row.record_delimiter === null ? {} : { recordDelimiter: row.record_delimiter }),
    ...(row.columns === null ? {} : { columns: row.columns }),
    ...(row.mapping === null ? {} : { mapping: row.mapping }),
    ...(row.mapping_sha256 === null ? {} : { mappingSha256: row.mapping_sha256 }),
  };
}

/**
 * Mark a claimed partition done with its counters. false when this worker no longer holds it (its lease ran out
 * and another worker took it: that one will mark it).
 */
export async function completePartition(
  session: PgSession,
  partitionNo: number,
  c: PartitionCounters,
  rejectsThrough = 0,
): Promise<boolean> {
  const r = await session.db.query(
    'claim',
    `UPDATE svc_ingest.partitions SET state = 'done', done_at = now(), progress_bytes = end_byte - start_byte,
       read = $3, sent = $4, skipped = $5, failed = $6, rejected = $7, rejects_through = greatest(rejects_through, $8)
     WHERE partition_no = $1 AND worker_no = $2 AND state = 'working'`,
    [partitionNo, session.workerNo, c.read, c.sent, c.skipped, c.failed, c.rejected, rejectsThrough],
  );
  return (r.rowCount ?? 0) === 1;
}

/** Report how far a claimed partition is (bytes read, counters so far), for `backfill status`. */
export async function reportProgress(
  session: PgSession,
  partitionNo: number,
  bytes: number,
  c: PartitionCounters,
  rejectsThrough = 0,
): Promise<boolean> {
  const r = await session.db.query(
    'claim',
    `UPDATE svc_ingest.partitions SET progress_bytes = least($3, end_byte - start_byte),
       read = $4, sent = $5, skipped = $6, failed = $7, rejected = $8, rejects_through = greatest(rejects_through, $9)
     WHERE partition_no = $1 AND worker_no = $2 AND state = 'working'`,
    [partitionNo, session.workerNo, bytes, c.read, c.sent, c.skipped, c.failed, c.rejected, rejectsThrough],
  );
  return (r.rowCount ?? 0) === 1;
}

/** Give a claimed partition back unfinished (a worker stopping early): pending again, for any worker. */
export async function releasePartition(session: PgSession, partitionNo: number): Promise<boolean> {
  const r = await session.db.query(
    'claim',
    `UPDATE svc_ingest.partitions SET state = 'pending', worker_no = NULL, progress_bytes = 0
     WHERE partition_no = $1 AND worker_no = $2 AND state = 'working'`,
    [partitionNo, session.workerNo],
  );
  return (r.rowCount ?? 0) === 1;
}

/** Partitions not done yet, and all of them: a worker with nothing to claim waits while `open` > 0. */
export async function openPartitions(
  db: PgDb,
  destinationNo?: number,
): Promise<{ open: number; total: number }> {
  // With a destination: only the partitions planned for it (a worker is done when its own are).
  const r = await db.query<{ open: number; total: number }>(
    'claim',
    `SELECT count(*) FILTER (WHERE p.state <> 'done')::int AS open, count(*)::int AS total
     FROM svc_ingest.partitions p JOIN svc_ingest.inputs i USING (input_no)
     WHERE $1::smallint IS NULL OR i.destination_no = $1`,
    [destinationNo ?? null],
  );
  return { open: num(r.rows[0]?.open), total: num(r.rows[0]?.total) };
}

/**
 * Put every done partition that holds failed records back to pending, so workers read it again: its acknowledged
 * records are skipped, the failed ones resent. Returns how many.
 */
export async function reopenFailed(db: PgDb): Promise<number> {
  const r = await db.query(
    'claim',
    `UPDATE svc_ingest.partitions SET state = 'pending', worker_no = NULL, progress_bytes = 0
     WHERE state = 'done' AND failed > 0`,
  );
  return r.rowCount ?? 0;
}

/** Every planned input's path (a worker's rejects file remembers their earlier rejects). */
export async function plannedPaths(db: PgDb): Promise<string[]> {
  const r = await db.query<{ path: string }>('other', 'SELECT path FROM svc_ingest.inputs ORDER BY input_no');
  return r.rows.map((x) => x.path);
}

/**
 * With nothing to claim for this worker's destination while partitions planned for another are open: refused
 * (LEDGER_DESTINATION, naming both), never claimed, so no worker sends one feed's records to another's service.
 */
async function refuseOthersPartitions(session: PgSession): Promise<void> {
  const r = await session.db.query<{ mine: number; theirs: string | null; ours: string | null }>(
    'claim',
    `SELECT (SELECT count(*)::int FROM svc_ingest.partitions q JOIN svc_ingest.inputs qi USING (input_no)
             WHERE qi.destination_no = $1) AS mine,
            string_agg(DISTINCT coalesce(d.destination, '(unnamed)'), ', ') FILTER (WHERE i.destination_no <> $1) AS theirs,
            (SELECT destination FROM svc_ingest.destinations WHERE destination_no = $1) AS ours
     FROM svc_ingest.partitions p JOIN svc_ingest.inputs i USING (input_no)
     LEFT JOIN svc_ingest.destinations d ON d.destination_no = i.destination_no
     WHERE p.state <> 'done'`,
    [session.destinationNo],
  );
  const row = r.rows[0];
  // Refused only when nothing at all was planned for this destination: a worker whose own partitions are done ends.
  if (!row || row.mine > 0 || row.theirs === null) return;
  throw new SvcIngestError(
    'LEDGER_DESTINATION',
    `the open backfill partitions in ${session.db.location} were planned for ${row.theirs}, not for this worker's ` +
      `destination ${row.ours ?? '(unnamed)'}: refusing to claim them (plan the inputs for this destination in its ` +
      'own ledger name, ?schema= or ledger.name)',
    { source: session.db.location },
  );
}
