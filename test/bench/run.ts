// `make bench`: generates inputs, runs every scenario several times, prints a table of medians, the targets with
// met/missed, and writes JSON.
// Usage: node test/bench/run.ts [--quick] [--only a,b] [--runs N] [--rows N] [--profile] [--resume-ids N]
//        [--mem-rows 1000000,10000000] [--send-rows N]

import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { ANCHOR_SCENARIOS, anchorRatios, runAnchor } from './anchors.ts';
import { CLUSTER_SCENARIOS, runCluster } from './cluster.ts';
import { onPath } from './measure.ts';
import { panCorpus } from './pan.ts';
import {
  type Args,
  dryRun,
  endToEnd,
  fmtRows,
  log,
  memory,
  miller,
  RESULTS,
  resume,
  type ScenarioResult,
} from './scenarios.ts';
import { startup } from './startup.ts';
import { formatTargets, targetRows } from './targets.ts';

/** --e2e-seconds: the cluster scenarios' input, sized to this many seconds at one sender's ceiling. */
let e2eSeconds: number | undefined;

function parseArgs(argv: string[]): Args {
  const a: Args = {
    quick: false,
    only: [],
    runs: 3,
    rows: 1_000_000,
    profile: false,
    resumeIds: 20_000_000,
    memRows: [1_000_000, 10_000_000],
    sendRows: 1_000_000,
    memoryEveryMs: 0,
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
    else if (f === '--send-rows') a.sendRows = num(f, next());
    else if (f === '--e2e-seconds') e2eSeconds = num(f, next());
    else if (f === '--memory-every') a.memoryEveryMs = num(f, next());
    else if (f === '--help' || f === '-h') {
      process.stdout.write(
        'node test/bench/run.ts [--quick] [--only dry,miller,e2e,anchor,mem,resume,pg-vs-file,workers-4,resume-pg,pan,startup|<scenario>]\n' +
          '  [--runs N] [--rows N] [--e2e-seconds S (cluster scenarios)]\n' +
          '  [--profile] [--resume-ids N] [--mem-rows a,b] [--send-rows N] [--memory-every MS]\n' +
          '  --only resume-100M: resume against 100M acked ids, once (never part of a full run)\n',
      );
      process.exit(0);
    } else throw new Error(`unknown option ${f} (see --help)`);
  }
  if (a.quick) {
    if (!explicit.has('--runs')) a.runs = 1;
    if (!explicit.has('--rows')) a.rows = 100_000;
    if (!explicit.has('--resume-ids')) a.resumeIds = 2_000_000;
    if (!explicit.has('--mem-rows')) a.memRows = [100_000, 1_000_000];
    if (!explicit.has('--send-rows')) a.sendRows = 50_000;
  }
  return a;
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
    'load',
  ];
  const lines = results.map((r) => {
    const m = r.median;
    const shown = r.display;
    const extra = shown
      ? shown.extra
      : r.group === 'e2e'
        ? `ratio ${m.ratio?.toFixed(3)} (${m.txPerSec} tx/s)`
        : m.vsMillerCpu !== undefined
          ? `CPU x${m.vsMillerCpu}, wall x${m.vsMillerWall}`
          : '';
    const other = shown
      ? shown.other
      : r.group === 'e2e'
        ? `${m.cpuUsPerTx?.toFixed(1)} µs CPU/tx (sim ${m.simCpuUsPerTx?.toFixed(1)}), loop p99 ${m.loopP99Ms?.toFixed(1)} ms`
        : r.group === 'resume'
          ? `start-up ${(m.startupMs! / 1000).toFixed(1)} s, skipped ${m.skipped}`
          : r.group === 'dry' || r.group === 'mem'
            ? `loop p99 ${m.loopP99Ms?.toFixed(1)} ms, max ${m.loopMaxMs?.toFixed(0) ?? '-'} ms`
            : '';
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
      (m.load1 ?? Number.NaN).toFixed(1),
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
  'dry-multi-event-ndjson',
  'miller-canonical-csv',
  'miller-northwind-csv',
  'e2e-c8',
  'e2e-c32',
  ...ANCHOR_SCENARIOS,
  'mem',
  'resume',
  'resume-100M',
  ...CLUSTER_SCENARIOS,
  'pan',
  'startup',
] as const;

/** Scenarios that run only when named in --only (they take long and were measured once). */
const ON_REQUEST = new Set<string>(['resume-100M']);

async function main(): Promise<void> {
  const a = parseArgs(process.argv.slice(2));
  const want = (n: string) =>
    ON_REQUEST.has(n)
      ? a.only.includes(n)
      : a.only.length === 0 || a.only.some((o) => n === o || n.startsWith(`${o}-`) || n.startsWith(o));
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
    else if (s === 'dry-multi-event-ndjson')
      results.push(await dryRun(a, s, 'multi-event-ndjson', 'test/fixtures/multi-event/profile.json'));
    else if (s === 'miller-canonical-csv') {
      const r = await miller(a, s, 'canonical-csv');
      if (r) results.push(r);
    } else if (s === 'miller-northwind-csv') {
      const r = await miller(a, s, 'northwind-csv');
      if (r) results.push(r);
    } else if (s === 'e2e-c8') results.push(await endToEnd(a, 8));
    else if (s === 'e2e-c32') results.push(await endToEnd(a, 32));
    else if ((ANCHOR_SCENARIOS as readonly string[]).includes(s))
      results.push(await runAnchor(a, s as (typeof ANCHOR_SCENARIOS)[number]));
    else if (s === 'mem') {
      // The largest size runs once by default: it takes minutes, and peak RSS barely varies.
      for (const [k, rows] of a.memRows.entries())
        results.push(await memory(rows, k === a.memRows.length - 1 && a.memRows.length > 1 ? 1 : a.runs));
    } else if (s === 'resume') results.push(await resume(a.resumeIds, a.runs));
    else if (s === 'resume-100M') results.push(await resume(100_000_000, 1));
    else if (s === 'pan') results.push(await panCorpus(a.quick ? 1_000_000 : 10_000_000));
    else if (s === 'startup') results.push(await startup(a));
    else if ((CLUSTER_SCENARIOS as readonly string[]).includes(s))
      results.push(
        await runCluster(s as (typeof CLUSTER_SCENARIOS)[number], {
          runs: a.runs,
          e2eSeconds: e2eSeconds ?? (a.quick ? 3 : 10),
          resumeIds: a.resumeIds,
        }),
      );
  }
  const targets = targetRows(results);
  // The cluster scenarios judge themselves (cluster.ts): their target and verdict join the table as they are.
  for (const r of results)
    if (r.display && r.target !== undefined)
      targets.push({ figure: r.name, result: r.display.extra, target: r.target, met: r.met ?? null });
  for (const r of results) {
    // Dry runs against Miller: both ratios kept with the scenario for the JSON.
    const ml = results.find(
      (x) =>
        x.name ===
        r.name.replace(/^dry-canonical-ndjson$/, 'miller-canonical-csv').replace(/^dry-/, 'miller-'),
    );
    if (r.group === 'dry' && ml) {
      r.median.vsMillerWall = Math.round((r.median.rowsPerSec! / ml.median.rowsPerSec!) * 100) / 100;
      r.median.vsMillerCpu = Math.round((r.median.rowsPerCpuSec! / ml.median.rowsPerCpuSec!) * 100) / 100;
    }
  }
  const ratios = anchorRatios(results);
  const out = {
    startedAt: started.toISOString(),
    machine: { ...m, loadAvgAtEnd: loadavg().map((x) => Math.round(x * 100) / 100) },
    args: a,
    miller: onPath('mlr') ? 'mlr --icsv --ojsonl cat' : 'not installed: comparison skipped',
    results,
    targets,
    ratios,
  };
  const file = join(RESULTS, `bench-${started.toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`);
  writeFileSync(join(RESULTS, 'latest.json'), `${JSON.stringify(out, null, 2)}\n`);
  process.stdout.write(
    `\nsvc-ingest bench — ${m.cores} cores, ${m.cpuModel}, Node ${m.node}, load ${(m.loadAvgAtStart as number[]).join(' ')}\n` +
      `${table(results)}\n\nmedians of ${a.runs} run(s) each (except where runs says otherwise); JSON: ${file}\n` +
      `\nagainst the anchors of this run (load average ${out.machine.loadAvgAtEnd.join(' ')} at end)\n${ratios.map((l) => `  ${l}`).join('\n') || '  (no anchor and its scenario both run)'}\n` +
      `\ntargets (load average ${(m.loadAvgAtStart as number[]).join(' ')} at start, ${out.machine.loadAvgAtEnd.join(' ')} at end)\n${formatTargets(targets)}\n`,
  );
  const missed = targets.filter((t) => t.met === false).map((t) => t.figure);
  if (missed.length > 0) process.stdout.write(`targets missed: ${missed.length} of ${targets.length}\n`);
}

await main();
