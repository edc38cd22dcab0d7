// The PostgreSQL ledger's figures in `make bench` (run.ts calls these): the PostgreSQL store against the file store
// (one `send`, concurrency 8, simulator at 50 ms: throughput ratio, database round trips per batch), four
// `backfill work` workers against one (concurrency 8 each, 50 ms: throughput ratio, with the CPU of workers,
// simulator and PostgreSQL and of the whole machine), and resume against N acknowledged ids in PostgreSQL (start-up
// and peak RSS against an empty ledger). The server is a throwaway PostgreSQL from npm with fsync on (commits cost
// what they cost on a real server), on loopback; every command runs through the launcher as users run it.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPostgres, type TestPostgres } from '../helpers/postgres.ts';
import { writeDataFile } from './gen.ts';
import { type ChildResult, ROOT, runCli, startDaemon } from './measure.ts';
import { medians, type ScenarioResult } from './scenarios.ts';

export interface ClusterArgs {
  runs: number;
  /** Inputs sized to this many seconds at one sender's ceiling (8 × 50 / 0.05 s = 8,000 tx/s). */
  e2eSeconds: number;
  /** Acknowledged ids seeded for the resume scenario. */
  resumeIds: number;
}

/** A scenario as run.ts prints it (its own columns in `display`). */
export interface ClusterResult extends ScenarioResult {
  target: string;
  met: boolean;
  display: { extra: string; other: string };
}

export const CLUSTER_SCENARIOS = ['pg-vs-file', 'workers-4', 'resume-pg'] as const;

const CLI = 'src/cli/main.ts';
const BIN = 'src/bin/svc-ingest';
const DATA = join(ROOT, 'test/bench/.data');
const LATENCY_MS = 50;
// The issue's figures are at concurrency 8. BENCH_CLUSTER_CONCURRENCY changes it (e.g. 2: four workers then need a
// quarter of the CPU, to show on a small machine whether the coordination or the CPU bounds the workers-4 ratio).
const CONCURRENCY = Number(process.env.BENCH_CLUSTER_CONCURRENCY ?? 8) || 8;
/** Partitions the workers-4 input is cut into (BENCH_CLUSTER_PARTITIONS, default 32). */
const PARTITIONS = Number(process.env.BENCH_CLUSTER_PARTITIONS ?? 32) || 32;
const CEILING = (CONCURRENCY * 50) / (LATENCY_MS / 1000);

const log = (msg: string) => process.stderr.write(`[bench] ${msg}\n`);
const load1 = () => Math.round(loadavg()[0]! * 100) / 100;
const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

export async function dataFile(rows: number, start = 0): Promise<string> {
  const path = join(DATA, `cluster-canonical-${rows}${start ? `-from${start}` : ''}.csv`);
  if (!existsSync(path)) {
    log(`generating ${path}`);
    await writeDataFile(path, 'canonical-csv', rows, start);
  }
  return path;
}

const lastJson = (r: ChildResult): Record<string, unknown> => {
  try {
    return JSON.parse(r.stdout.trim().split('\n').pop() ?? '');
  } catch {
    throw new Error(`no JSON summary (exit ${r.code} ${r.signal ?? ''}): ${r.stderr.slice(-800)}`);
  }
};

/** The first log line of an event (pino JSON on stderr). */
function event(r: ChildResult, name: string): Record<string, unknown> | undefined {
  const line = r.stderr.split('\n').find((l) => l.includes(`"event":"${name}"`));
  return line ? (JSON.parse(line) as Record<string, unknown>) : undefined;
}

// ------------------------------------------------------------------ CPU from /proc

const TICK_MS = 10; // USER_HZ = 100 on Linux

function statFields(pid: number): string[] | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** CPU ms of a process (user + system), with its waited-for children when `children`. */
function cpuMsOf(pid: number, children = false): number {
  const f = statFields(pid);
  if (!f) return 0;
  // After the command: state(0) ppid(1) … utime(11) stime(12) cutime(13) cstime(14)
  const ticks = Number(f[11]) + Number(f[12]) + (children ? Number(f[13]) + Number(f[14]) : 0);
  return ticks * TICK_MS;
}

/** The PostgreSQL server on a port: its postmaster, and the CPU of it, the backends it reaped, and the live ones. */
function postgresCpuMs(port: number): number {
  const pids = readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number);
  let postmaster = 0;
  for (const pid of pids) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      const p = cmd.indexOf('-p');
      if (cmd[0]?.endsWith('postgres') && p !== -1 && cmd[p + 1] === String(port)) postmaster = pid;
    } catch {}
  }
  if (!postmaster) return Number.NaN;
  let ms = cpuMsOf(postmaster, true);
  for (const pid of pids) if (statFields(pid)?.[1] === String(postmaster)) ms += cpuMsOf(pid);
  return ms;
}

/** The whole machine's CPU time, busy and all, in ms (all cores). */
function machineCpu(): { busyMs: number; totalMs: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.split(/\s+/).slice(1).map(Number);
  const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
  const idle = (f[3] ?? 0) + (f[4] ?? 0);
  return { busyMs: (total - idle) * TICK_MS, totalMs: total * TICK_MS };
}

// ------------------------------------------------------------------ set-up

async function simulator(): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const d = await startDaemon([
    CLI,
    'simulate',
    '--port',
    '0',
    '--latency-ms',
    String(LATENCY_MS),
    '--log-level',
    'warn',
  ]);
  return { url: d.firstLine, pid: d.pid, stop: d.stop };
}

const simReset = (url: string) => fetch(`${url}/__sim/reset`, { method: 'POST' }).then((r) => r.json());

async function withServers<T>(fn: (pg: TestPostgres, sim: { url: string; pid: number }) => Promise<T>) {
  const pg = await startPostgres({ durable: true });
  const sim = await simulator();
  try {
    return await fn(pg, sim);
  } finally {
    await sim.stop();
    await pg.stop();
  }
}

// ------------------------------------------------------------------ scenarios

/** One `send` at concurrency 8 against 50 ms: the file ledger, then PostgreSQL, `runs` times, interleaved. */
export async function pgVsFile(a: ClusterArgs): Promise<ClusterResult> {
  const rows = Math.round(CEILING * a.e2eSeconds);
  const file = await dataFile(rows);
  const work = join(tmpdir(), `svc-bench-pgfile-${process.pid}`);
  mkdirSync(work, { recursive: true });
  const runs: ClusterResult['runs'] = [];
  let command = '';
  try {
    await withServers(async (pg, sim) => {
      for (let i = 1; i <= a.runs; i++) {
        const one = async (kind: 'file' | 'pg') => {
          await simReset(sim.url);
          const ledger =
            kind === 'file' ? join(work, `ledger-${i}.ndjson`) : await pg.createDatabase(`pgfile_${i}`);
          const args = [
            'send',
            '--base-url',
            sim.url,
            '--concurrency',
            String(CONCURRENCY),
            '--ledger',
            ledger,
            '--rejects',
            join(work, `rejects-${kind}-${i}.ndjson`),
            '--json',
            '--log-level',
            'info',
            '--progress-interval',
            '0',
            file,
          ];
          if (kind === 'pg')
            command = `${BIN} ${args.join(' ').replace(sim.url, '$SIM').replace(ledger, '$PG_URL')}`;
          const l = load1();
          const db0 = postgresCpuMs(pg.port);
          const r = await runCli(args);
          const dbMs = postgresCpuMs(pg.port) - db0;
          const s = lastJson(r) as { sent: number; durationMs: number; batches: number };
          if (s.sent !== rows) throw new Error(`${kind}: sent ${s.sent} of ${rows}: ${r.stderr.slice(-500)}`);
          const closed = event(r, 'ledger.pg.closed') as { trips?: Record<string, number> } | undefined;
          const trips = closed?.trips;
          return {
            txPerSec: s.sent / (s.durationMs / 1000),
            wallMs: r.wallMs,
            cpuMs: r.cpuMs,
            rssMb: r.maxRssMb,
            load1: l,
            tripsPerBatch: trips ? ((trips.admit ?? 0) + (trips.record ?? 0)) / s.batches : Number.NaN,
            heartbeats: trips?.heartbeat ?? Number.NaN,
            // The database's CPU over the run (the file ledger's figure is what the server did meanwhile: ~0).
            dbUsPerTx: (dbMs * 1000) / s.sent,
            clientUsPerTx: (r.cpuMs * 1000) / s.sent,
          };
        };
        const f = await one('file');
        const p = await one('pg');
        runs.push({
          wallMs: Math.round(f.wallMs + p.wallMs),
          fileTxPerSec: Math.round(f.txPerSec),
          pgTxPerSec: Math.round(p.txPerSec),
          ratio: round(p.txPerSec / f.txPerSec, 3),
          tripsPerBatch: round(p.tripsPerBatch, 3),
          pgDbUsPerTx: round(p.dbUsPerTx, 1),
          pgClientUsPerTx: round(p.clientUsPerTx, 1),
          fileClientUsPerTx: round(f.clientUsPerTx, 1),
          fileCpuMs: f.cpuMs,
          pgCpuMs: p.cpuMs,
          fileRssMb: Math.round(f.rssMb),
          pgRssMb: Math.round(p.rssMb),
          loadFile: f.load1,
          loadPg: p.load1,
          load1: f.load1,
        });
        log(`pg-vs-file run ${i}: ${JSON.stringify(runs.at(-1))}`);
      }
    });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const m = medians(runs);
  const ratio = m.pgTxPerSec! / m.fileTxPerSec!;
  m.ratioOfMedians = round(ratio, 3);
  return {
    name: `pg-vs-file-c${CONCURRENCY}`,
    group: 'cluster',
    rows,
    command,
    runs,
    median: m,
    target: 'PostgreSQL / file throughput >= 0.90; database round trips per batch <= 2',
    met: ratio >= 0.9 && m.tripsPerBatch! <= 2,
    display: {
      extra: `ratio ${ratio.toFixed(3)} (pg ${Math.round(m.pgTxPerSec!)} / file ${Math.round(m.fileTxPerSec!)} tx/s)`,
      other: `${m.tripsPerBatch!.toFixed(2)} trips/batch; database ${m.pgDbUsPerTx!.toFixed(1)} µs/tx, client ${m.pgClientUsPerTx!.toFixed(1)} (file ${m.fileClientUsPerTx!.toFixed(1)}); load ${m.loadFile!.toFixed(1)}/${m.loadPg!.toFixed(1)}`,
    },
  };
}

/** `workers` backfill workers over one planned input; the rate from the first claim to the last partition done. */
async function backfillRun(
  pg: TestPostgres,
  sim: { url: string; pid: number },
  file: string,
  rows: number,
  workers: number,
  i: number,
): Promise<Record<string, number>> {
  await simReset(sim.url);
  const db = `workers${workers}_${i}`;
  const url = await pg.createDatabase(db);
  const size = statSync(file).size;
  const plan = await runCli([
    'backfill',
    'plan',
    '--ledger',
    url,
    '--partition-bytes',
    String(Math.ceil(size / PARTITIONS)),
    '--log-level',
    'warn',
    '--base-url',
    sim.url,
    file,
  ]);
  if (plan.code !== 0) throw new Error(`plan: ${plan.stderr}`);
  const work = join(tmpdir(), `svc-bench-workers-${process.pid}-${workers}-${i}`);
  mkdirSync(work, { recursive: true });
  const m0 = machineCpu();
  const sim0 = cpuMsOf(sim.pid);
  const pg0 = postgresCpuMs(pg.port);
  const l = load1();
  const t0 = performance.now();
  const results = await Promise.all(
    Array.from({ length: workers }, (_, k) =>
      runCli([
        'backfill',
        'work',
        '--ledger',
        url,
        '--base-url',
        sim.url,
        '--concurrency',
        String(CONCURRENCY),
        '--worker-id',
        `bench-${k + 1}`,
        '--rejects',
        join(work, `rejects-${k + 1}.ndjson`),
        '--json',
        '--log-level',
        'warn',
        '--progress-interval',
        '0',
      ]),
    ),
  );
  const wallMs = performance.now() - t0;
  const m1 = machineCpu();
  const simMs = cpuMsOf(sim.pid) - sim0;
  const pgMs = postgresCpuMs(pg.port) - pg0;
  rmSync(work, { recursive: true, force: true });
  let sent = 0;
  for (const r of results) {
    const s = lastJson(r) as { sent: number };
    if (r.code !== 0) throw new Error(`worker exited ${r.code}: ${r.stderr.slice(-500)}`);
    sent += s.sent;
  }
  if (sent !== rows) throw new Error(`${workers} workers sent ${sent} of ${rows}`);
  const span = await pg.sql<{ s: number }>(
    db,
    'SELECT extract(epoch FROM max(done_at) - min(started_at))::float8 AS s FROM svc_ingest.partitions',
  );
  const seconds = Number(span[0]?.s);
  const workersCpuMs = results.reduce((n, r) => n + r.cpuMs, 0);
  const busy = (m1.busyMs - m0.busyMs) / (m1.totalMs - m0.totalMs);
  return {
    txPerSec: Math.round(rows / seconds),
    txPerSecWall: Math.round(rows / (wallMs / 1000)),
    workersCpuS: round(workersCpuMs / 1000, 1),
    simCpuS: round(simMs / 1000, 1),
    pgCpuS: round(pgMs / 1000, 1),
    machineBusy: round(busy, 3),
    wallS: round(wallMs / 1000, 1),
    load1: l,
  };
}

/** One worker, then four, each at concurrency 8 against 50 ms, over the same planned input, `runs` times. */
export async function fourWorkers(a: ClusterArgs): Promise<ClusterResult> {
  const rows = Math.round(CEILING * a.e2eSeconds * 2);
  const file = await dataFile(rows);
  const runs: ClusterResult['runs'] = [];
  await withServers(async (pg, sim) => {
    for (let i = 1; i <= a.runs; i++) {
      const one = await backfillRun(pg, sim, file, rows, 1, i);
      const four = await backfillRun(pg, sim, file, rows, 4, i);
      runs.push({
        wallMs: Math.round((one.wallS! + four.wallS!) * 1000),
        oneTxPerSec: one.txPerSec,
        fourTxPerSec: four.txPerSec,
        ratio: round(four.txPerSec! / one.txPerSec!, 3),
        oneBusy: one.machineBusy,
        fourBusy: four.machineBusy,
        fourWorkersCpuS: four.workersCpuS,
        fourSimCpuS: four.simCpuS,
        fourPgCpuS: four.pgCpuS,
        fourWallS: four.wallS,
        oneWorkersCpuS: one.workersCpuS,
        oneSimCpuS: one.simCpuS,
        onePgCpuS: one.pgCpuS,
        oneWallS: one.wallS,
        loadOne: one.load1,
        loadFour: four.load1,
        load1: one.load1,
      });
      log(`workers-4 run ${i}: ${JSON.stringify(runs.at(-1))}`);
    }
  });
  const m = medians(runs);
  const ratio = m.fourTxPerSec! / m.oneTxPerSec!;
  m.ratioOfMedians = round(ratio, 3);
  return {
    name: `workers-4-c${CONCURRENCY}`,
    group: 'cluster',
    rows,
    command: `${BIN} backfill plan (${PARTITIONS} partitions) …; ${BIN} backfill work --concurrency ${CONCURRENCY} (× 1, then × 4 at once) against simulate --latency-ms ${LATENCY_MS}`,
    runs,
    median: m,
    target: '4 workers >= 3.5 x one worker',
    met: ratio >= 3.5,
    note: 'machineBusy: share of both cores busy during the run (all processes); CPU seconds of the workers, the simulator and PostgreSQL',
    display: {
      extra: `x${ratio.toFixed(2)} (4: ${Math.round(m.fourTxPerSec!)} / 1: ${Math.round(m.oneTxPerSec!)} tx/s)`,
      other: `CPU busy ${Math.round(m.fourBusy! * 100)}% (1 worker: ${Math.round(m.oneBusy! * 100)}%); load ${m.loadOne!.toFixed(1)}/${m.loadFour!.toFixed(1)}`,
    },
  };
}

/** Seed `ids` acknowledged ids tx-0000000000… (the bench inputs' ids), in steps so that progress shows. */
async function seed(pg: TestPostgres, db: string, ids: number): Promise<void> {
  const [b] = await pg.sql<{ seq: string }>(
    db,
    `INSERT INTO svc_ingest.batches (batch_id, run_id, worker_no, status, client_request_id, attempts, transaction_ids)
     VALUES ('seed', 'seed', 0, 'acked', '', 1, '{}') RETURNING seq`,
  );
  const step = 2_000_000;
  for (let from = 0; from < ids; from += step) {
    const to = Math.min(ids, from + step) - 1;
    await pg.sql(
      db,
      `INSERT INTO svc_ingest.transactions (transaction_id, acked_seq)
       SELECT 'tx-' || lpad(g::text, 10, '0'), $1 FROM generate_series($2::bigint, $3::bigint) g`,
      [b!.seq, from, to],
    );
    log(`resume-pg: seeded ${to + 1} of ${ids} acknowledged ids`);
  }
  await pg.sql(db, 'VACUUM ANALYZE svc_ingest.transactions');
}

/** `send` of 100k rows, half of them among `ids` acknowledged ids in PostgreSQL, against an empty ledger. */
export async function resumePg(a: ClusterArgs): Promise<ClusterResult> {
  const ids = a.resumeIds;
  const rows = 100_000;
  const overlap = 50_000;
  const input = await dataFile(rows, ids - overlap);
  const runs: ClusterResult['runs'] = [];
  let command = '';
  await withServers(async (pg, sim) => {
    const big = await pg.createDatabase('resume_big');
    const empty = await pg.createDatabase('resume_empty');
    for (const url of [big, empty])
      if ((await runCli(['ledger', 'migrate', '--ledger', url, '--log-level', 'warn'])).code !== 0)
        throw new Error('migrate failed');
    const t0 = performance.now();
    await seed(pg, 'resume_big', ids);
    const seedS = round((performance.now() - t0) / 1000, 1);
    const [size] = await pg.sql<{ mb: number }>(
      'resume_big',
      "SELECT (pg_total_relation_size('svc_ingest.transactions') / 1048576)::int AS mb",
    );
    const one = async (url: string) => {
      await simReset(sim.url);
      const args = [
        'send',
        '--base-url',
        sim.url,
        '--concurrency',
        String(CONCURRENCY),
        '--ledger',
        url,
        '--rejects',
        join(tmpdir(), `svc-bench-resume-pg-${process.pid}.ndjson`),
        '--json',
        '--log-level',
        'info',
        '--progress-interval',
        '0',
        input,
      ];
      command = `${BIN} ${args.join(' ').replace(sim.url, '$SIM').replace(url, '$PG_URL')}`;
      const l = load1();
      const r = await runCli(args);
      const s = lastJson(r) as { skipped: number; sent: number };
      if (s.skipped === undefined)
        log(`resume-pg: no summary (exit ${r.code}): ${r.stdout.slice(-300)} ${r.stderr.slice(-600)}`);
      const opened = event(r, 'ledger.pg.opened') as { time: string | number } | undefined;
      const at = opened ? new Date(opened.time).getTime() : Number.NaN;
      return {
        startupMs: at - r.spawnedAt,
        rssMb: r.maxRssMb,
        skipped: s.skipped,
        sent: s.sent,
        load1: l,
        wallMs: r.wallMs,
      };
    };
    // Between runs the ids this run added are forgotten again (the seeded ones stay).
    const forget = (db: string) =>
      pg.sql(
        db,
        "DELETE FROM svc_ingest.transactions WHERE transaction_id >= 'tx-' || lpad($1::text, 10, '0')",
        [db === 'resume_big' ? ids : 0],
      );
    for (let i = 1; i <= a.runs; i++) {
      const b = await one(big);
      await forget('resume_big');
      const e = await one(empty);
      await forget('resume_empty');
      runs.push({
        wallMs: Math.round(b.wallMs),
        startupMs: Math.round(b.startupMs),
        emptyStartupMs: Math.round(e.startupMs),
        rssMb: Math.round(b.rssMb),
        emptyRssMb: Math.round(e.rssMb),
        skipped: b.skipped,
        correct: b.skipped === overlap && b.sent === rows - overlap ? 1 : 0,
        seedS,
        tableMb: size?.mb ?? Number.NaN,
        load1: b.load1,
      });
      log(`resume-pg run ${i}: ${JSON.stringify(runs.at(-1))}`);
    }
  });
  const m = medians(runs);
  const growth = m.rssMb! / m.emptyRssMb!;
  m.rssGrowth = round(growth, 3);
  return {
    name: `resume-pg-${ids >= 1e6 ? `${ids / 1e6}M` : ids}`,
    group: 'cluster',
    rows,
    command: `${command}  (ledger: ${ids} acknowledged ids in PostgreSQL, ${m.tableMb} MB table + index)`,
    runs,
    median: m,
    target: 'start-up < 1 s; peak RSS flat (<= 1.1 x against an empty ledger); every overlapping id skipped',
    met: m.startupMs! < 1000 && growth <= 1.1 && m.correct === 1,
    display: {
      extra: `start-up ${Math.round(m.startupMs!)} ms (empty ${Math.round(m.emptyStartupMs!)} ms)`,
      other: `RSS ${Math.round(m.rssMb!)} MB vs ${Math.round(m.emptyRssMb!)} MB empty (x${m.rssGrowth}); skipped ${m.skipped}; load ${m.load1!.toFixed(1)}`,
    },
  };
}

export async function runCluster(name: (typeof CLUSTER_SCENARIOS)[number], a: ClusterArgs) {
  if (name === 'pg-vs-file') return pgVsFile(a);
  if (name === 'workers-4') return fourWorkers(a);
  return resumePg(a);
}
