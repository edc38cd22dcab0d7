// `make bench`: generates inputs, runs every scenario several times, prints a table of medians and writes JSON.
// Usage: node test/bench/run.ts [--quick] [--only a,b] [--runs N] [--rows N] [--profile] [--resume-ids N]
//        [--mem-rows 1000000,10000000] [--e2e-seconds S]

import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { CLUSTER_SCENARIOS, runCluster } from './cluster.ts';
import { type DataKind, writeAckedLedger, writeDataFile } from './gen.ts';
import { type ChildResult, NODE, onPath, ROOT, runCli, runExternal, startDaemon } from './measure.ts';
import { formatSummary } from './prof-summary.ts';

interface Args {
  quick: boolean;
  only: string[];
  runs: number;
  rows: number;
  profile: boolean;
  resumeIds: number;
  memRows: number[];
  e2eSeconds: number;
}

function parseArgs(argv: string[]): Args {
  const a: Args = {
    quick: false,
    only: [],
    runs: 3,
    rows: 1_000_000,
    profile: false,
    resumeIds: 20_000_000,
    memRows: [1_000_000, 10_000_000],
    e2eSeconds: 10,
  };
  const num = (flag: string, v: string | undefined): number => {
    const n = Number(v?.replaceAll('_', ''));
    if (!Number.isFinite(n) || n <= 0) throw new Error(`${flag}: expected a positive number, got ${v}`);
    return n;
  };
  const explicit = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const f = argv[i] as string;
    const next = () => argv[++i];
    explicit.add(f);
    if (f === '--quick') a.quick = true;
    else if (f === '--profile') a.profile = true;
    else if (f === '--only') a.only = (next() ?? '').split(',').filter(Boolean);
    else if (f === '--runs') a.runs = num(f, next());
    else if (f === '--rows') a.rows = num(f, next());
    else if (f === '--resume-ids') a.resumeIds = num(f, next());
    else if (f === '--mem-rows') a.memRows = (next() ?? '').split(',').map((v) => num(f, v));
    else if (f === '--e2e-seconds') a.e2eSeconds = num(f, next());
    else if (f === '--help' || f === '-h') {
      process.stdout.write(
        'node test/bench/run.ts [--quick] [--only dry,miller,e2e,mem,resume,pg-vs-file,workers-4,resume-pg|<scenario>]\n' +
          '  [--runs N] [--rows N]\n' +
          '  [--profile] [--resume-ids N] [--mem-rows a,b] [--e2e-seconds S]\n',
      );
      process.exit(0);
    } else throw new Error(`unknown option ${f} (see --help)`);
  }
  if (a.quick) {
    if (!explicit.has('--runs')) a.runs = 1;
    if (!explicit.has('--rows')) a.rows = 100_000;
    if (!explicit.has('--resume-ids')) a.resumeIds = 2_000_000;
    if (!explicit.has('--mem-rows')) a.memRows = [100_000, 1_000_000];
    if (!explicit.has('--e2e-seconds')) a.e2eSeconds = 3;
  }
  return a;
}

const DATA = join(ROOT, 'test/bench/.data');
const RESULTS = join(ROOT, 'test/bench/results');
const CLI = 'src/cli/main.ts';
const BIN = 'src/bin/svc-ingest';
const LATENCY_MS = 50;
const BATCH = 50;

/**
 * One scenario's measured runs and its medians.
 * @example { name: 'dry-canonical-csv', rows: 1000000, runs: [...], median: { wallMs: 9000, ... }, target: '…', met: true }
 */
interface ScenarioResult {
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

function median(xs: number[]): number {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (s.length === 0) return Number.NaN;
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

function medians(runs: ScenarioResult['runs']): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of Object.keys(runs[0] ?? {})) {
    const xs = runs.map((r) => r[k]).filter((v): v is number => typeof v === 'number');
    if (xs.length > 0) out[k] = median(xs);
  }
  return out;
}

function log(msg: string): void {
  process.stderr.write(`[bench] ${msg}\n`);
}

function fmtRows(n: number): string {
  return n >= 1e6 && n % 1e6 === 0 ? `${n / 1e6}M` : n >= 1e3 && n % 1e3 === 0 ? `${n / 1e3}k` : String(n);
}

/** A data file of a kind and size, generated once and kept in test/bench/.data/. */
async function dataFile(kind: DataKind, rows: number, start = 0): Promise<string> {
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

function usageOf(r: ChildResult, rows: number): Record<string, number> {
  return {
    wallMs: Math.round(r.wallMs),
    cpuMs: Math.round(r.cpuMs),
    rowsPerSec: Math.round(rows / (r.wallMs / 1000)),
    rowsPerCpuSec: Math.round(rows / (r.cpuMs / 1000)),
    maxRssMb: Math.round(r.maxRssMb),
    load1: Math.round(loadavg()[0]! * 100) / 100,
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

// ---------------------------------------------------------------- scenarios

async function dryRun(
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

async function miller(a: Args, name: string, kind: DataKind): Promise<ScenarioResult | null> {
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

async function simulator(latencyMs: number): Promise<{ url: string; stop(): Promise<void> }> {
  const d = await startDaemon([
    CLI,
    'simulate',
    '--port',
    '0',
    '--latency-ms',
    String(latencyMs),
    '--log-level',
    'warn',
  ]);
  return { url: d.firstLine, stop: d.stop };
}

async function simPost(url: string, path: string): Promise<unknown> {
  const res = await fetch(`${url}${path}`, { method: 'POST' });
  return res.json();
}

async function endToEnd(a: Args, concurrency: number): Promise<ScenarioResult> {
  const name = `e2e-c${concurrency}`;
  const ceiling = (concurrency * BATCH) / (LATENCY_MS / 1000);
  const rows = Math.round(ceiling * a.e2eSeconds);
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
      command = `${BIN} simulate --latency-ms ${LATENCY_MS} & ${BIN} ${args.join(' ').replace(sim.url, '$URL')}`;
      const r = await runCli(args, profArgs(a, name, i));
      const s = summaryOf(r);
      if (s.sent !== rows)
        throw new Error(`${name}: sent ${s.sent} of ${rows} (exit ${r.code}): ${r.stderr.slice(-400)}`);
      const stats = (await (await fetch(`${sim.url}/__sim/stats`)).json()) as Record<string, unknown>;
      const txPerSec = s.sent / ((s.durationMs as number) / 1000);
      runs.push({
        ...usageOf(r, rows),
        txPerSec: Math.round(txPerSec),
        ratio: Math.round((txPerSec / ceiling) * 1000) / 1000,
        ratioWall: Math.round((rows / (r.wallMs / 1000) / ceiling) * 1000) / 1000,
        loopP99Ms: r.loopP99Ms,
        loopMaxMs: r.loopMaxMs,
        maxInFlight: (stats.maxInFlight ?? stats.mostInFlight ?? null) as number | null,
      });
      log(`${name} run ${i}: ${JSON.stringify(runs.at(-1))}`);
    }
  } finally {
    await sim.stop();
    rmSync(work, { recursive: true, force: true });
  }
  printProfile(a, name);
  const m = medians(runs);
  return {
    name,
    group: 'e2e',
    rows,
    command,
    runs,
    median: m,
    target: `ratio >= 0.95 of ${ceiling} tx/s (concurrency ${concurrency} x ${BATCH} / ${LATENCY_MS} ms)`,
    met: (m.ratio ?? 0) >= 0.95,
  };
}

async function memory(rows: number, runsWanted: number): Promise<ScenarioResult> {
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
    runs.push(usageOf(r, rows));
    log(`${name} run ${i}: ${JSON.stringify(runs.at(-1))}`);
  }
  return {
    name,
    group: 'mem',
    rows,
    command: `node test/bench/gen.ts canonical-csv ${rows} | ${BIN} ${args.join(' ')}`,
    runs,
    median: medians(runs),
    target: 'peak RSS <= 150 MB',
    met: null,
  };
}

async function resume(a: Args): Promise<ScenarioResult> {
  const ids = a.resumeIds;
  const name = `resume-${fmtRows(ids)}`;
  const ledgerSrc = join(DATA, `ledger-acked-${fmtRows(ids)}.ndjson`);
  if (!existsSync(ledgerSrc)) {
    log(`generating ${ledgerSrc}`);
    await writeAckedLedger(ledgerSrc, ids);
  }
  // 100k rows, the first half already acked in the ledger, the second half new.
  const overlap = 50_000;
  const rows = 100_000;
  const input = await dataFile('canonical-csv', rows, ids - overlap);
  const work = join(tmpdir(), `svc-bench-resume-${process.pid}`);
  mkdirSync(work, { recursive: true });
  const ledger = join(work, 'ledger.ndjson');
  copyFileSync(ledgerSrc, ledger);
  const size = statSync(ledger).size;
  const sim = await simulator(0);
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
    for (let i = 1; i <= a.runs; i++) {
      truncateSync(ledger, size);
      await simPost(sim.url, '/__sim/reset');
      const r = await runCli(args, profArgs(a, name, i));
      let s: Record<string, number>;
      try {
        s = summaryOf(r);
      } catch (err) {
        runs.push({ ...usageOf(r, rows), exit: r.code, error: (err as Error).message.slice(0, 300) });
        log(`${name} run ${i}: FAILED ${JSON.stringify(runs.at(-1))}`);
        continue;
      }
      const loaded = r.stderr.split('\n').find((l) => l.includes('"ledger.loaded"'));
      const loadedAt = loaded ? (JSON.parse(loaded) as { time: number }).time : Number.NaN;
      const correct = s.skipped === overlap && s.sent === rows - overlap ? 1 : 0;
      runs.push({
        ...usageOf(r, rows),
        startupMs: loadedAt - r.spawnedAt,
        skipped: s.skipped,
        sent: s.sent,
        correct,
      });
      log(`${name} run ${i}: ${JSON.stringify(runs.at(-1))}`);
    }
  } finally {
    await sim.stop();
    rmSync(work, { recursive: true, force: true });
  }
  const m = medians(runs);
  return {
    name,
    group: 'resume',
    rows,
    command: `${BIN} ${args.join(' ').replace(sim.url, '$URL').replace(work, '$TMP')}  (ledger: ${fmtRows(ids)} acked ids, ${Math.round(size / 1e6)} MB)`,
    runs,
    median: m,
    target: 'peak RSS <= 300 MB, every overlapping id skipped and no other',
    met: (m.maxRssMb ?? Infinity) <= 300 && m.correct === 1,
  };
}

// ---------------------------------------------------------------- report

function machine(): Record<string, unknown> {
  const c = cpus();
  return {
    cores: c.length,
    cpuModel: c[0]?.model ?? 'unknown',
    memGb: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    loadAvgAtStart: loadavg().map((x) => Math.round(x * 100) / 100),
  };
}

function judge(results: ScenarioResult[]): void {
  const by = (n: string) => results.find((r) => r.name === n);
  for (const [dry, ml] of [
    ['dry-canonical-csv', 'miller-canonical-csv'],
    ['dry-northwind-csv', 'miller-northwind-csv'],
    ['dry-canonical-ndjson', 'miller-canonical-csv'],
  ] as const) {
    const d = by(dry);
    if (!d) continue;
    const m = by(ml);
    if (!m) {
      d.target = 'Miller comparison skipped (mlr not installed)';
      d.met = null;
      continue;
    }
    const cpu = d.median.rowsPerCpuSec! / m.median.rowsPerCpuSec!;
    const wall = d.median.rowsPerSec! / m.median.rowsPerSec!;
    d.median.vsMillerCpu = Math.round(cpu * 100) / 100;
    d.median.vsMillerWall = Math.round(wall * 100) / 100;
    d.target = `>= ${ml} rows/CPU-s (${m.median.rowsPerCpuSec}) and rows/s (${m.median.rowsPerSec})`;
    d.met = cpu >= 1 && wall >= 1;
  }
  const mems = results.filter((r) => r.group === 'mem').sort((x, y) => x.rows - y.rows);
  for (const r of mems) r.met = (r.median.maxRssMb ?? Infinity) <= 150;
  if (mems.length >= 2) {
    const small = mems[0]!;
    const big = mems.at(-1)!;
    const growth = big.median.maxRssMb! / small.median.maxRssMb!;
    big.median.rssGrowth = Math.round(growth * 100) / 100;
    big.target = `peak RSS <= 150 MB and <= 1.2x ${small.name}`;
    big.met = (big.median.maxRssMb ?? Infinity) <= 150 && growth <= 1.2;
  }
}

function table(results: ScenarioResult[]): string {
  const head = [
    'scenario',
    'rows',
    'runs',
    'wall s',
    'rows/s',
    'rows/CPU-s',
    'RSS MB',
    'ratio / vs Miller',
    'other',
    'target met',
  ];
  const lines = results.map((r) => {
    const m = r.median;
    const extra = r.display
      ? r.display.extra
      : r.group === 'e2e'
        ? `ratio ${m.ratio?.toFixed(3)} (${m.txPerSec} tx/s)`
        : m.vsMillerCpu !== undefined
          ? `CPU x${m.vsMillerCpu}, wall x${m.vsMillerWall}`
          : m.rssGrowth !== undefined
            ? `RSS growth x${m.rssGrowth}`
            : '';
    const other = r.display
      ? r.display.other
      : r.group === 'e2e'
        ? `loop p99 ${m.loopP99Ms?.toFixed(1)} ms`
        : r.group === 'resume'
          ? `start-up ${(m.startupMs! / 1000).toFixed(1)} s, skipped ${m.skipped}`
          : r.group === 'dry'
            ? `loop p99 ${m.loopP99Ms?.toFixed(1)} ms`
            : '';
    const met = r.met === undefined || r.met === null ? '-' : r.met ? 'yes' : 'NO';
    return [
      r.name,
      fmtRows(r.rows),
      String(r.runs.length),
      (m.wallMs! / 1000).toFixed(1),
      String(m.rowsPerSec ?? ''),
      String(m.rowsPerCpuSec ?? ''),
      String(m.maxRssMb ?? ''),
      extra,
      other,
      met,
    ];
  });
  const widths = head.map((h, k) => Math.max(h.length, ...lines.map((l) => (l[k] ?? '').length)));
  const row = (cells: string[]) => `| ${cells.map((c, k) => c.padEnd(widths[k]!)).join(' | ')} |`;
  return [row(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...lines.map(row)].join('\n');
}

// ---------------------------------------------------------------- main

const SCENARIOS = [
  'dry-canonical-csv',
  'dry-canonical-ndjson',
  'dry-northwind-csv',
  'miller-canonical-csv',
  'miller-northwind-csv',
  'e2e-c8',
  'e2e-c32',
  'mem',
  'resume',
  ...CLUSTER_SCENARIOS,
] as const;

async function main(): Promise<void> {
  const a = parseArgs(process.argv.slice(2));
  const want = (n: string) =>
    a.only.length === 0 || a.only.some((o) => n === o || n.startsWith(`${o}-`) || n.startsWith(o));
  mkdirSync(RESULTS, { recursive: true });
  const started = new Date();
  const m = machine();
  log(`machine: ${JSON.stringify(m)}`);
  if ((m.loadAvgAtStart as number[])[0]! > 0.5 * (m.cores as number))
    log('warning: the machine is busy (load average above half the cores): wall-clock figures will be noisy');
  const results: ScenarioResult[] = [];
  for (const s of SCENARIOS) {
    if (!want(s)) continue;
    log(`scenario ${s}`);
    if (s === 'dry-canonical-csv') results.push(await dryRun(a, s, 'canonical-csv', null));
    else if (s === 'dry-canonical-ndjson') results.push(await dryRun(a, s, 'canonical-ndjson', null));
    else if (s === 'dry-northwind-csv') results.push(await dryRun(a, s, 'northwind-csv', 'northwind-csv'));
    else if (s === 'miller-canonical-csv') {
      const r = await miller(a, s, 'canonical-csv');
      if (r) results.push(r);
    } else if (s === 'miller-northwind-csv') {
      const r = await miller(a, s, 'northwind-csv');
      if (r) results.push(r);
    } else if (s === 'e2e-c8') results.push(await endToEnd(a, 8));
    else if (s === 'e2e-c32') results.push(await endToEnd(a, 32));
    else if (s === 'mem') {
      // The largest size runs once by default: it takes minutes, and peak RSS barely varies.
      for (const [k, rows] of a.memRows.entries())
        results.push(await memory(rows, k === a.memRows.length - 1 && a.memRows.length > 1 ? 1 : a.runs));
    } else if (s === 'resume') results.push(await resume(a));
    else if ((CLUSTER_SCENARIOS as readonly string[]).includes(s))
      results.push(await runCluster(s as (typeof CLUSTER_SCENARIOS)[number], a));
  }
  judge(results);
  const out = {
    startedAt: started.toISOString(),
    machine: { ...m, loadAvgAtEnd: loadavg().map((x) => Math.round(x * 100) / 100) },
    args: a,
    miller: onPath('mlr') ? 'mlr --icsv --ojsonl cat' : 'not installed: comparison skipped',
    results,
  };
  const file = join(RESULTS, `bench-${started.toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`);
  writeFileSync(join(RESULTS, 'latest.json'), `${JSON.stringify(out, null, 2)}\n`);
  process.stdout.write(
    `\nsvc-ingest bench — ${m.cores} cores, ${m.cpuModel}, Node ${m.node}, load ${(m.loadAvgAtStart as number[]).join(' ')}\n` +
      `${table(results)}\n\nmedians of ${a.runs} run(s) each (except where runs says otherwise); JSON: ${file}\n`,
  );
  const missed = results.filter((r) => r.met === false).map((r) => r.name);
  if (missed.length > 0) process.stdout.write(`targets missed: ${missed.join(', ')}\n`);
}

await main();
