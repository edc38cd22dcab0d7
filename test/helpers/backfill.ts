// Backfills through the real CLI for tests: plan inputs, start workers (`backfill work` child processes with their
// own rejects files and short leases), read the status, and look at one worker's row in the ledger database.
import { join } from 'node:path';
import { openClaimOf } from '../../src/ledger/postgres/acks.ts';
import type { Simulator } from '../../src/simulator/index.ts';
import { type CliResult, type CliRun, runCliHere, startCli, summaryOf } from './cli.ts';
import type { TestPostgres } from './postgres.ts';

/** The database name of a test database's URL. */
export function dbName(url: string): string {
  return new URL(url).pathname.slice(1);
}

/** `backfill plan` of the files; throws with stderr when it does not exit 0. */
export async function plan(url: string, files: string[], partitionBytes: number, args: string[] = []) {
  const r = await runCliHere([
    'backfill',
    'plan',
    '--ledger',
    url,
    '--partition-bytes',
    String(partitionBytes),
    ...args,
    ...files,
  ]);
  if (r.code !== 0) throw new Error(`backfill plan exited ${r.code}: ${r.stderr}`);
  return r;
}

export interface WorkerOptions {
  sim: Simulator;
  /** Where its rejects file goes (rejects-<id>.ndjson). */
  dir: string;
  concurrency?: number;
  leaseMs?: number;
  /** ledger.waitMs */
  waitMs?: number;
  args?: string[];
  env?: NodeJS.ProcessEnv;
}

/** Fast retries, like the fault suite's FAST (a worker has no --json summary there: it is added). */
const FAST = ['--json', '--retry-base-ms', '1', '--retry-max-ms', '20', '--progress-interval', '0'];

/** The arguments and environment of one `backfill work` with a fixed worker id and its own rejects file. */
function workerRun(url: string, id: string, o: WorkerOptions): [string[], { env: NodeJS.ProcessEnv }] {
  return [
    [
      'backfill',
      'work',
      '--ledger',
      url,
      '--worker-id',
      id,
      '--concurrency',
      String(o.concurrency ?? 4),
      '--rejects',
      join(o.dir, `rejects-${id}.ndjson`),
      ...FAST,
      ...(o.args ?? []),
    ],
    {
      env: {
        SVC_BASE_URL: o.sim.url,
        SVC_LEDGER_LEASE_MS: String(o.leaseMs ?? 2000),
        ...(o.waitMs === undefined ? {} : { SVC_LEDGER_WAIT_MS: String(o.waitMs) }),
        SVC_LOG_LEVEL: 'info',
        ...o.env,
      },
    },
  ];
}

/**
 * Start one `backfill work` as a child process (for a test that signals or kills it).
 * @example const w1 = startWorker(url, 'w1', { sim, dir }); const r = await w1.done
 */
export function startWorker(url: string, id: string, o: WorkerOptions): CliRun {
  return startCli(...workerRun(url, id, o));
}

/**
 * Run one `backfill work` to its end in this process.
 * @example const r = await runWorker(url, 'w1', { sim, dir })
 */
export function runWorker(url: string, id: string, o: WorkerOptions): Promise<CliResult> {
  return runCliHere(...workerRun(url, id, o));
}

/** The worker's --json summary (the last stdout line). */
export interface WorkerSummary {
  read: number;
  valid: number;
  rejected: number;
  skipped: number;
  sent: number;
  failed: number;
  interrupted: string | null;
  outage: boolean;
  ledger: string;
  workerId: string;
  partitions: { done: number; released: number; lost: number; takenOver: number };
}

export function workerSummary(r: CliResult): WorkerSummary {
  return summaryOf(r) as unknown as WorkerSummary;
}

/** `backfill status --json`. */
export async function statusOf(url: string): Promise<Record<string, unknown> & { done: boolean }> {
  const r = await runCliHere(['backfill', 'status', '--ledger', url, '--json']);
  if (r.code !== 0) throw new Error(`backfill status exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

/** One worker's row: its number, what it recorded acknowledged, and the partition it holds (if any). */
export async function workerRow(
  pgs: TestPostgres,
  url: string,
  id: string,
): Promise<{ workerNo: number; recordsAcked: number; holding: number | null } | null> {
  const rows = await pgs.sql<{ worker_no: number; records_acked: string; holding: string | null }>(
    dbName(url),
    `SELECT w.worker_no, w.records_acked,
       (SELECT min(partition_no) FROM svc_ingest.partitions p WHERE p.worker_no = w.worker_no AND p.state = 'working') AS holding
     FROM svc_ingest.workers w WHERE w.worker_id = $1`,
    [id],
  );
  const r = rows[0];
  if (!r) return null;
  return {
    workerNo: r.worker_no,
    recordsAcked: Number(r.records_acked),
    holding: r.holding === null ? null : Number(r.holding),
  };
}

/**
 * The ids worker $1 holds open claims on (not recorded, made by its current process), read through its own rows:
 * the view decides every row of the table, too slow to poll while workers run.
 */
export const OPEN_CLAIMS_OF = `SELECT t.transaction_id FROM svc_ingest.transactions t
  JOIN svc_ingest.workers w ON w.worker_no = t.claim_worker
  WHERE w.worker_id = $1 AND t.acked_seq IS NULL AND ${openClaimOf('t', 'w')}`;

/** Ids a worker holds claims on without an acknowledged outcome (what it had read, in flight or queued). */
export async function openClaims(pgs: TestPostgres, url: string, id: string): Promise<Set<string>> {
  const rows = await pgs.sql<{ transaction_id: string }>(dbName(url), OPEN_CLAIMS_OF, [id]);
  return new Set(rows.map((r) => r.transaction_id));
}

/**
 * How many open claims worker $1 holds, counted cheaply enough to poll while it runs: the rows its current process
 * claimed, less the ids of the outcomes it has recorded since it started (each id claimed and recorded once by one
 * process, as in these tests before any takeover).
 */
export const OPEN_CLAIM_COUNT = `SELECT
  (SELECT count(*) FROM svc_ingest.transactions t
   WHERE t.claim_worker = w.worker_no AND coalesce(t.claim_no, 0) >= w.claims_from)
  - (SELECT coalesce(sum(cardinality(b.transaction_ids)), 0) FROM svc_ingest.batches b
     WHERE b.worker_no = w.worker_no AND b.seq > w.claims_from) AS n
  FROM svc_ingest.workers w WHERE w.worker_id = $1`;

export async function openClaimCount(pgs: TestPostgres, url: string, id: string): Promise<number> {
  const rows = await pgs.sql<{ n: string }>(dbName(url), OPEN_CLAIM_COUNT, [id]);
  return Number(rows[0]?.n ?? 0);
}

/** Poll until `cond` resolves true (every 50 ms), or fail after `ms`. */
export async function until(cond: () => Promise<boolean>, ms = 30_000, what = 'condition'): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`${what}: not reached in ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
