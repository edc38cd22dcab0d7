// The scenarios of `make bench`: dry runs, Miller, sending against the simulator, memory on stdin, resume at scale.
// Each runs the CLI through its launcher, several times, and returns every run plus the medians.
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, truncateSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DataKind, writeAckedLedger, writeDataFile } from './gen.ts';
import {
  type ChildResult,
  LAUNCHER,
  NODE,
  onPath,
  ROOT,
  runCli,
  runExternal,
  startDaemon,
} from './measure.ts';
import { formatSummary } from './prof-summary.ts';

/** The bench's options (see test/bench/README.md). */
export interface Args {
  quick: boolean;
  only: string[];
  runs: number;
  rows: number;
  profile: boolean;
  resumeIds: number;
  memRows: number[];
  sendRows: number;
  /** Sample the sending process's memory this often (ms; 0 = off) and report what it was made of at its peak. */
  memoryEveryMs: number;
}

export const DATA = join(ROOT, 'test/bench/.data');
export const RESULTS = join(ROOT, 'test/bench/results');
export const BIN = 'src/bin/svc-ingest';
export const LATENCY_MS = 50;
export const BATCH = 50;

/**
 * One scenario's measured runs and its medians.
 * @example { name: 'dry-canonical-csv', rows: 1000000, runs: [...], median: { wallMs: 9000, ... }, target: '…', met: true }
 */
export interface ScenarioResult {
  name: string;
  group: string;
  rows: number;
  command: string;
  runs: Array<Record<string, number | string | null | undefined>>;
  median: Record<string, number>;
  target?: string;
  met?: boolean | null;
  note?: string;
  /** The table's two free columns, when the scenario words them itself (cluster.ts). */
  display?: { extra: string; other: string };
}

export function median(xs: number[]): number {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (s.length === 0) return Number.NaN;
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

export function medians(runs: ScenarioResult['runs']): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of Object.keys(runs[0] ?? {})) {
    const xs = runs.map((r) => r[k]).filter((v): v is number => typeof v === 'number');
    if (xs.length > 0) out[k] = median(xs);
  }
  return out;
}

export function log(msg: string): void {
  process.stderr.write(`[bench] ${msg}\n`);
}

export function fmtRows(n: number): string {
  return n >= 1e6 && n % 1e6 === 0 ? `${n / 1e6}M` : n >= 1e3 && n % 1e3 === 0 ? `${n / 1e3}k` : String(n);
}

export const round = (x: number, digits = 1): number => Math.round(x * 10 ** digits) / 10 ** digits;

/**
 * CPU time (user+sys, ms) in a /proc stat file: a process's (`/proc/<pid>/stat`, all its threads) or one thread's
 * (`/proc/<pid>/task/<tid>/stat`). NaN when it cannot be read (the process has exited, or no /proc).
 */
export function statCpuMs(file: string): number {
  try {
    const stat = readFileSync(file, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * 10; // clock ticks of 10 ms (USER_HZ = 100)
  } catch {
    return Number.NaN;
  }
}

/** CPU time (user+sys, ms, all threads) a running process has used so far, from /proc/<pid>/stat. */
export function procCpuMs(pid: number): number {
  return statCpuMs(`/proc/${pid}/stat`);
}

/** The memory samples' largest RSS and what the heap, external memory and array buffers were then (MB). */
function memoryAtPeak(r: ChildResult): Record<string, number> {
  if (!r.memory || r.memory.length === 0) return {};
  const peak = r.memory.reduce((a, b) => ((b[1] ?? 0) > (a[1] ?? 0) ? b : a));
  const [, rss, heapTotal, heapUsed, external, arrayBuffers] = peak as number[];
  return {
    peakRssMb: rss as number,
    peakHeapTotalMb: heapTotal as number,
    peakHeapUsedMb: heapUsed as number,
    peakExternalMb: external as number,
    peakArrayBuffersMb: arrayBuffers as number,
  };
}

/** A data file of a kind and size, generated once and kept in test/bench/.data/. */
export async function dataFile(kind: DataKind, rows: number, start = 0): Promise<string> {
  const ext = kind.endsWith('ndjson') ? 'ndjson' : 'csv';
  const path = join(
    DATA,
    `${kind.replace(/-(csv|ndjson)$/, '')}-${fmtRows(rows)}${start ? `-from${start}` : ''}.${ext}`,
  );
  if (!existsSync(path)) {
    log(`generating ${path}`);
    await writeDataFile(path, kind, rows, start);
  }
  return path;
}

export function usageOf(r: ChildResult, rows: number): Record<string, number> {
  return {
    wallMs: Math.round(r.wallMs),
    cpuMs: Math.round(r.cpuMs),
    rowsPerSec: Math.round(rows / (r.wallMs / 1000)),
    rowsPerCpuSec: Math.round(rows / (r.cpuMs / 1000)),
    maxRssMb: Math.round(r.maxRssMb),
    load1: round(loadavg()[0] as number, 2),
  };
}

function summaryOf(r: ChildResult): Record<string, number> {
  const line = r.stdout.trim().split('\n').pop() ?? '';
  try {
    return JSON.parse(line) as Record<string, number>;
  } catch {
    throw new Error(`no JSON summary (exit ${r.code} ${r.signal ?? ''}): ${r.stderr.slice(-600)}`);
  }
}

function profArgs(a: Args, scenario: string, run: number): string[] {
  if (!a.profile) return [];
  const dir = join(RESULTS, 'prof', scenario, String(run));
  rmSync(dir, { recursive: true, force: true });
  return ['--cpu-prof', `--cpu-prof-dir=${dir}`];
}

function printProfile(a: Args, scenario: string): void {
  if (!a.profile) return;
  const dir = join(RESULTS, 'prof', scenario, '1');
  if (existsSync(dir)) process.stderr.write(formatSummary(dir, 20));
}

export async function dryRun(
  a: Args,
  name: string,
  kind: DataKind,
  mapping: string | null,
): Promise<ScenarioResult> {
  const file = await dataFile(kind, a.rows);
  const args = ['send', '--dry-run', '--json', '--no-resume', '--log-level', 'warn'];
  if (mapping) args.push('--mapping', mapping);
  args.push(file);
  const runs: ScenarioResult['runs'] = [];
  for (let i = 1; i <= a.runs; i++) {
    const r = await runCli(args, profArgs(a, name, i));
    const s = summaryOf(r);
    if (s.read !== a.rows || s.rejected !== 0)
      throw new Error(`${name}: read ${s.read} rejected ${s.rejected}`);
    runs.push({ ...usageOf(r, a.rows), loopP99Ms: r.loopP99Ms });
    log(`${name} run ${i}: ${JSON.stringify(runs.at(-1))}`);
  }
  printProfile(a, name);
  return {
    name,
    group: 'dry',
    rows: a.rows,
    command: `${BIN} ${args.join(' ')}`,
    runs,
    median: medians(runs),
  };
}

export async function miller(a: Args, name: string, kind: DataKind): Promise<ScenarioResult | null> {
  if (!onPath('mlr')) {
    log(`${name}: skipped, Miller (mlr) is not installed (Debian: apt-get install miller); no comparison`);
    return null;
  }
  const file = await dataFile(kind, a.rows);
  const args = ['--icsv', '--ojsonl', 'cat', file];
  const runs: ScenarioResult['runs'] = [];
  for (let i = 1; i <= a.runs; i++) {
    const r = await runExternal('mlr', args, { captureStdout: false });
    if (r.code !== 0) throw new Error(`mlr exited ${r.code}: ${r.stderr.slice(-400)}`);
    runs.push(usageOf(r, a.rows));
    log(`${name} run ${i}: ${JSON.stringify(runs.at(-1))}`);
  }
  return {
    name,
    group: 'miller',
    rows: a.rows,
    command: `mlr ${args.join(' ')} > /dev/null`,
    runs,
    median: medians(runs),
  };
}

/** The simulator as users start it (through the launcher, which execs Node: the pid is the simulator's). */
export async function simulator(
  latencyMs: number,
  port = 0,
): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const d = await startDaemon(
    ['simulate', '--port', String(port), '--latency-ms', String(latencyMs), '--log-level', 'warn'],
    LAUNCHER,
  );
  return { url: d.firstLine, pid: d.pid, stop: d.stop };
}

export async function simPost(url: string, path: string): Promise<unknown> {
  const res = await fetch(`${url}${path}`, { method: 'POST' });
  return res.json();
}

/**
 * Sending `a.sendRows` canonical CSV rows at a concurrency against the simulator (50 ms a request), as its own
 * process on the same cores. Per run: delivered tx/s against the ceiling (concurrency × 50 / 50 ms), our process's
 * CPU per delivered transaction (user+sys of every thread, from the child's getrusage at exit), the simulator's CPU
 * over the same run (/proc), peak RSS and event-loop delay.
 */
export async function endToEnd(a: Args, concurrency: number): Promise<ScenarioResult> {
  const name = `e2e-c${concurrency}`;
  const ceiling = (concurrency * BATCH) / (LATENCY_MS / 1000);
  const rows = a.sendRows;
  const file = await dataFile('canonical-csv', rows);
  const sim = await simulator(LATENCY_MS);
  const work = join(tmpdir(), `svc-bench-e2e-${process.pid}`);
  mkdirSync(work, { recursive: true });
  const runs: ScenarioResult['runs'] = [];
  let command = '';
  try {
    for (let i = 1; i <= a.runs; i++) {
      await simPost(sim.url, '/__sim/reset');
      const ledger = join(work, `ledger-${i}.ndjson`);
      rmSync(ledger, { force: true });
      const args = [
        'send',
        '--base-url',
        sim.url,
        '--concurrency',
        String(concurrency),
        '--ledger',
        ledger,
        '--rejects',
        join(work, `rejects-${i}.ndjson`),
        '--json',
        '--log-level',
        'warn',
        file,
      ];
      command = `${BIN} simulate --latency-ms ${LATENCY_MS} & ${BIN} ${args.join(' ').replace(sim.url, '$URL').replace(work, '$TMP')}`;
      const simBefore = procCpuMs(sim.pid);
      const env: Record<string, string> =
        a.memoryEveryMs > 0 ? { BENCH_MEMORY_EVERY_MS: String(a.memoryEveryMs) } : {};
      const r = await runCli(args, profArgs(a, name, i), { env });
      const simMs = procCpuMs(sim.pid) - simBefore;
      const s = summaryOf(r);
      if (s.sent !== rows)
        throw new Error(`${name}: sent ${s.sent} of ${rows} (exit ${r.code}): ${r.stderr.slice(-400)}`);
      const stats = (await (await fetch(`${sim.url}/__sim/stats`)).json()) as Record<string, unknown>;
      const txPerSec = s.sent / ((s.durationMs as number) / 1000);
      runs.push({
        ...usageOf(r, rows),
        txPerSec: Math.round(txPerSec),
        ratio: round(txPerSec / ceiling, 3),
        ratioWall: round(rows / (r.wallMs / 1000) / ceiling, 3),
        cpuUsPerTx: round((r.cpuMs * 1000) / s.sent),
        userUsPerTx: round((r.userMs * 1000) / s.sent),
        sysUsPerTx: round((r.systemMs * 1000) / s.sent),
        simCpuUsPerTx: round((simMs * 1000) / s.sent),
        loopP99Ms: r.loopP99Ms,
        loopMaxMs: r.loopMaxMs,
        maxInFlight: (stats.maxInFlight ?? null) as number | null,
        ...memoryAtPeak(r),
      });
      log(`${name} run ${i}: ${JSON.stringify(runs.at(-1))}`);
    }
  } finally {
    await sim.stop();
    rmSync(work, { recursive: true, force: true });
  }
  printProfile(a, name);
  return { name, group: 'e2e', rows, command, runs, median: medians(runs) };
}

export async function memory(rows: number, runsWanted: number): Promise<ScenarioResult> {
  const name = `mem-${fmtRows(rows)}`;
  const args = ['send', '--dry-run', '--json', '--no-resume', '--format', 'csv', '--log-level', 'warn', '-'];
  const runs: ScenarioResult['runs'] = [];
  for (let i = 1; i <= runsWanted; i++) {
    const gen = spawn(NODE, ['test/bench/gen.ts', 'canonical-csv', String(rows)], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const r = await runCli(args, [], { stdin: gen.stdout });
    const s = summaryOf(r);
    if (s.read !== rows) throw new Error(`${name}: read ${s.read} of ${rows}`);
    runs.push({ ...usageOf(r, rows), loopP99Ms: r.loopP99Ms, loopMaxMs: r.loopMaxMs });
    log(`${name} run ${i}: ${JSON.stringify(runs.at(-1))}`);
  }
  return {
    name,
    group: 'mem',
    rows,
    command: `node test/bench/gen.ts canonical-csv ${rows} | ${BIN} ${args.join(' ')}`,
    runs,
    median: medians(runs),
  };
}

/** Resume against a ledger of `ids` acked ids: a 100k-row input whose first half is in it. */
export async function resume(ids: number, runsWanted: number): Promise<ScenarioResult> {
  const name = `resume-${fmtRows(ids)}`;
  // The ledger's lines name their destination, the simulator's address: it listens on a fixed port for that.
  const port = Number(process.env.BENCH_RESUME_PORT ?? 18721);
  const ledgerSrc = join(DATA, `ledger-acked-${fmtRows(ids)}-dest${port}.ndjson`);
  if (!existsSync(ledgerSrc)) {
    log(`generating ${ledgerSrc}`);
    await writeAckedLedger(ledgerSrc, ids, `http://127.0.0.1:${port}`);
  }
  const overlap = 50_000;
  const rows = 100_000;
  const input = await dataFile('canonical-csv', rows, ids - overlap);
  const work = join(tmpdir(), `svc-bench-resume-${process.pid}`);
  mkdirSync(work, { recursive: true });
  const ledger = join(work, 'ledger.ndjson');
  copyFileSync(ledgerSrc, ledger);
  const size = statSync(ledger).size;
  const sim = await simulator(0, port);
  const runs: ScenarioResult['runs'] = [];
  const args = [
    'send',
    '--base-url',
    sim.url,
    '--concurrency',
    '8',
    '--ledger',
    ledger,
    '--rejects',
    join(work, 'rejects.ndjson'),
    '--json',
    '--log-level',
    'info',
    input,
  ];
  try {
    for (let i = 1; i <= runsWanted; i++) {
      truncateSync(ledger, size);
      await simPost(sim.url, '/__sim/reset');
      const r = await runCli(args);
      let s: Record<string, number>;
      try {
        s = summaryOf(r);
      } catch (err) {
        runs.push({ ...usageOf(r, rows), exit: r.code, error: (err as Error).message.slice(0, 300) });
        log(`${name} run ${i}: FAILED ${JSON.stringify(runs.at(-1))}`);
        continue;
      }
      const loaded = r.stderr.split('\n').find((l) => l.includes('"ledger.loaded"'));
      // pino's time: epoch ms, or an ISO string (the logger's current format).
      const time = loaded ? (JSON.parse(loaded) as { time: number | string }).time : Number.NaN;
      const loadedAt = typeof time === 'string' ? Date.parse(time) : time;
      runs.push({
        ...usageOf(r, rows),
        startupMs: loadedAt - r.spawnedAt,
        skipped: s.skipped,
        sent: s.sent,
        correct: s.skipped === overlap && s.sent === rows - overlap ? 1 : 0,
        loopMaxMs: r.loopMaxMs,
      });
      log(`${name} run ${i}: ${JSON.stringify(runs.at(-1))}`);
    }
  } finally {
    await sim.stop();
    rmSync(work, { recursive: true, force: true });
  }
  return {
    name,
    group: 'resume',
    rows,
    command: `${BIN} ${args.join(' ').replace(sim.url, '$URL').replace(work, '$TMP')}  (ledger: ${fmtRows(ids)} acked ids, ${Math.round(size / 1e6)} MB)`,
    runs,
    median: medians(runs),
  };
}
