// Shared pieces of the fault-injection suite: work dirs, CLI env, ledger read-back and the measured-outcome report.
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunSummary } from '../../src/record/counters.ts';
import type { Simulator } from '../../src/simulator/index.ts';
import { dbName, until } from '../helpers/backfill.ts';
import { type CliResult, summaryOf } from '../helpers/cli.ts';
import type { TestPostgres } from '../helpers/postgres.ts';
import { makeTx } from '../helpers/transactions.ts';

export { NO_FAULTS } from '../helpers/simulator.ts';

/** Fast retries so a fault run takes seconds: base 1 ms, cap 20 ms. */
export const FAST = ['--json', '--retry-base-ms', '1', '--retry-max-ms', '20'];

/**
 * Where a fault test keeps its ledger: a file in its work dir, or a fresh database on the file's PostgreSQL
 * server (the same scenarios run on both stores).
 * @example for (const kind of ledgerKinds(pgs)) describe(`[${kindName(kind)} ledger]`, () => …)
 */
export type LedgerKind = 'file' | { pg: TestPostgres };

/** Both stores, the PostgreSQL one on `pgs` (usePostgres() of the test file). */
export function ledgerKinds(pgs: TestPostgres): LedgerKind[] {
  return ['file', { pg: pgs }];
}

export function kindName(kind: LedgerKind): 'file' | 'PostgreSQL' {
  return kind === 'file' ? 'file' : 'PostgreSQL';
}

/** A worker killed -9 leaves claims that live on until its lease runs out: short in tests, so reruns take over soon. */
export const TEST_LEASE_MS = 2000;

/**
 * One test's files: its own ledger (a file, or a database) and rejects in a fresh temp dir.
 * @example const w = await workdir('crash'); runCli(['send', file], { env: w.env(sim) })
 */
export interface Workdir {
  dir: string;
  /** The ledger file's path, or the database's URL (with its password). */
  ledger: string;
  rejects: string;
  env(sim: Simulator, extra?: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
  /** The ledger's batch outcomes as the tests read them back (file: its lines; PostgreSQL: svc_ingest.batches). */
  readLedger(): Promise<{ rows: LedgerRow[]; bad: number }>;
  /**
   * After a run on the ledger was killed: once the database has ended the killed run's sessions. A statement it had
   * already sent (a COMMIT of acknowledgements) still completes after the client is gone, so the ledger read before
   * can miss what the next run finds. At once on a file ledger.
   */
  sessionsEnded(): Promise<void>;
}

export async function workdir(name: string, kind: LedgerKind = 'file'): Promise<Workdir> {
  const dir = await mkdtemp(join(tmpdir(), `svc-faults-${name}-`));
  const rejects = join(dir, 'rejects.ndjson');
  const pg = kind === 'file' ? undefined : kind.pg;
  const ledger = pg ? await pg.createDatabase() : join(dir, 'ledger.ndjson');
  return {
    dir,
    ledger,
    rejects,
    env: (sim, extra = {}) => ({
      SVC_BASE_URL: sim.url,
      SVC_LEDGER_PATH: ledger,
      SVC_REJECTS_PATH: rejects,
      ...(pg ? { SVC_LEDGER_LEASE_MS: String(TEST_LEASE_MS) } : {}),
      ...extra,
    }),
    readLedger: () => (pg ? readPgLedger(pg, ledger) : readLedgerBack(ledger)),
    sessionsEnded: async () => {
      if (!pg) return;
      const db = dbName(ledger);
      const sessions = async () =>
        (
          await pg.sql<{ n: number }>(
            'postgres',
            'SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1',
            [db],
          )
        )[0]?.n ?? 0;
      await until(async () => (await sessions()) === 0, 10_000, `the killed run's sessions on ${db} ended`);
    },
  };
}

/** A ledger line as the tests read it back. */
export interface LedgerRow {
  status: 'acked' | 'failed';
  transactionIds: string[];
  attempts: number;
  httpStatus: number | null;
  error?: string;
  requestId?: string | null;
  batchId: string;
}

/** Read a ledger back; unparsable lines are counted, not fatal (as the CLI does). */
export async function readLedgerBack(path: string): Promise<{ rows: LedgerRow[]; bad: number }> {
  const text = await readFile(path, 'utf8').catch(() => '');
  const rows: LedgerRow[] = [];
  let bad = 0;
  for (const l of text.split('\n')) {
    if (l === '') continue;
    try {
      rows.push(JSON.parse(l) as LedgerRow);
    } catch {
      bad++;
    }
  }
  return { rows, bad };
}

/** The batch outcomes of a PostgreSQL ledger, in the order they were recorded, as ledger lines. */
export async function readPgLedger(
  pg: TestPostgres,
  url: string,
): Promise<{ rows: LedgerRow[]; bad: number }> {
  const db = dbName(url);
  const exists = await pg.sql<{ t: string | null }>(
    db,
    "SELECT to_regclass('svc_ingest.batches')::text AS t",
  );
  if (!exists[0]?.t) return { rows: [], bad: 0 };
  const rows = await pg.sql<{
    batch_id: string;
    status: 'acked' | 'failed';
    transaction_ids: string[];
    attempts: number;
    http_status: number | null;
    error: string | null;
    request_id: string | null;
  }>(
    db,
    `SELECT batch_id, status, transaction_ids, attempts, http_status, error, request_id
     FROM svc_ingest.batches ORDER BY seq`,
  );
  return {
    rows: rows.map((r) => ({
      batchId: r.batch_id,
      status: r.status,
      transactionIds: r.transaction_ids,
      attempts: r.attempts,
      httpStatus: r.http_status,
      requestId: r.request_id,
      ...(r.error === null ? {} : { error: r.error }),
    })),
    bad: 0,
  };
}

/** Transaction ids in acked (or failed) ledger lines. */
export function idsWith(rows: LedgerRow[], status: 'acked' | 'failed'): Set<string> {
  const out = new Set<string>();
  for (const r of rows) if (r.status === status) for (const id of r.transactionIds) out.add(id);
  return out;
}

export async function readRejects(path: string): Promise<Array<Record<string, unknown>>> {
  const text = await readFile(path, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** Write n canonical NDJSON transactions (ids `${prefix}-00000000`…) to a file, streaming. */
export async function writeNdjson(path: string, n: number, prefix: string): Promise<string[]> {
  const ids: string[] = [];
  const out = createWriteStream(path);
  let buf = '';
  for (let i = 0; i < n; i++) {
    const tx = makeTx(i, prefix);
    ids.push(tx.transactionId);
    buf += `${JSON.stringify(tx)}\n`;
    if (buf.length > 1 << 16) {
      if (!out.write(buf)) await new Promise<void>((r) => out.once('drain', () => r()));
      buf = '';
    }
  }
  await new Promise<void>((resolve, reject) => {
    out.end(buf, resolve);
    out.once('error', reject);
  });
  return ids;
}

/** How many of `ids` the simulator accepted 0, 1 and more than once. */
export function deliveryCounts(
  sim: Simulator,
  ids: Iterable<string>,
): { missing: number; once: number; duplicated: number; extra: number } {
  const d = sim.deliveries();
  let missing = 0;
  let once = 0;
  let duplicated = 0;
  let extra = 0;
  for (const id of ids) {
    const n = d.get(id) ?? 0;
    if (n === 0) missing++;
    else if (n === 1) once++;
    else {
      duplicated++;
      extra += n - 1;
    }
  }
  return { missing, once, duplicated, extra };
}

/** The --json summary of `send` (CONTRACT.md, plus the pipeline's extra members). */
export type Summary = RunSummary;

/** The --json summary (throws with stderr when there is none). */
export function summary(r: CliResult): Summary {
  return summaryOf(r) as unknown as Summary;
}

/** read = sent + skipped + failed + rejected (and valid = read - rejected), the settlement arithmetic. */
export function settles(s: Summary): boolean {
  return s.read === s.sent + s.skipped + s.failed + s.rejected && s.valid === s.read - s.rejected;
}

/** A stack trace line on stderr ("    at fn (file:1:2)"). */
export const STACK = /\n\s+at .+:\d+:\d+/;

/** Print one measured outcome for the report (grep the test output for FAULT-REPORT). */
export function report(scenario: string, outcome: Record<string, unknown>): void {
  console.log(`FAULT-REPORT ${JSON.stringify({ scenario, ...outcome })}`);
}
