// The anchors of `make bench`, run in the same bench as our scenarios so that each figure is read as a ratio to them
// on the same machine at the same load: the bare pipeline (bare-pipeline.ts) at concurrency 8 and 32 against the same
// 50 ms simulator, a bare undici Pool against our client (transport.ts: its `bare-pool` and `undici-dispatch`
// children), and csv-parse alone (csv-parse-alone.ts); Miller is the `miller` scenario of scenarios.ts.
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { NODE, ROOT, runNode } from './measure.ts';
import {
  type Args,
  BATCH,
  dataFile,
  LATENCY_MS,
  log,
  medians,
  procCpuMs,
  round,
  type ScenarioResult,
  simPost,
  simulator,
  usageOf,
} from './scenarios.ts';

export const ANCHOR_SCENARIOS = [
  'anchor-pipeline-c8',
  'anchor-pipeline-c32',
  'anchor-client-c8',
  'anchor-client-c32',
  'anchor-csv-parse',
] as const;

function lastJson(stdout: string, what: string): Record<string, number> {
  try {
    return JSON.parse(stdout.trim().split('\n').pop() ?? '') as Record<string, number>;
  } catch {
    throw new Error(`${what}: no JSON result in ${JSON.stringify(stdout.slice(-300))}`);
  }
}

/** The bare pipeline sending `a.sendRows` canonical CSV rows at a concurrency; figures as e2e-c<N>'s. */
async function pipeline(a: Args, concurrency: number): Promise<ScenarioResult> {
  const name = `anchor-pipeline-c${concurrency}`;
  const rows = a.sendRows;
  const file = await dataFile('canonical-csv', rows);
  const ceiling = (concurrency * BATCH) / (LATENCY_MS / 1000);
  const sim = await simulator(LATENCY_MS);
  const ledger = join(tmpdir(), `svc-bench-bare-${process.pid}.ndjson`);
  const runs: ScenarioResult['runs'] = [];
  try {
    for (let i = 1; i <= a.runs; i++) {
      await simPost(sim.url, '/__sim/reset');
      rmSync(ledger, { force: true });
      const s0 = procCpuMs(sim.pid);
      const r = await runNode(['test/bench/bare-pipeline.ts', sim.url, file, String(concurrency), ledger]);
      const simMs = procCpuMs(sim.pid) - s0;
      const sent = lastJson(r.stdout, name).sent ?? 0;
      if (sent !== rows) throw new Error(`${name}: sent ${sent} of ${rows}: ${r.stderr.slice(-400)}`);
      runs.push({
        ...usageOf(r, rows),
        ratioWall: round(rows / (r.wallMs / 1000) / ceiling, 3),
        cpuUsPerTx: round((r.cpuMs * 1000) / sent),
        simCpuUsPerTx: round((simMs * 1000) / sent),
      });
      log(`${name} run ${i}: ${JSON.stringify(runs.at(-1))}`);
    }
  } finally {
    await sim.stop();
    rmSync(ledger, { force: true });
  }
  const m = medians(runs);
  return {
    name,
    group: 'anchor',
    rows,
    command: `node test/bench/bare-pipeline.ts $URL ${file.replace(ROOT, '.')} ${concurrency} $LEDGER`,
    runs,
    median: m,
    display: {
      extra: `ratio ${m.ratioWall?.toFixed(3)} (wall, start-up incl.)`,
      other: `${m.cpuUsPerTx?.toFixed(1)} µs CPU/tx (sim ${m.simCpuUsPerTx?.toFixed(1)})`,
    },
  };
}

function transportChild(name: string, url: string, concurrency: number, requests: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const p = spawn(
      NODE,
      ['test/bench/transport.ts', '--child', name, url, String(concurrency), String(requests)],
      {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let out = '';
    p.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    p.once('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${name} exited ${code}`))));
  });
}

/** Our client (ky over our fetch) and a bare undici Pool, alternated, CPU µs per transaction of 50-row batches. */
async function client(a: Args, concurrency: number): Promise<ScenarioResult> {
  const name = `anchor-client-c${concurrency}`;
  // About 5 s each at the 50 ms latency (a tenth more for the warm-up).
  const requests = a.quick ? 400 : concurrency * 100;
  const sim = await simulator(LATENCY_MS);
  const runs: ScenarioResult['runs'] = [];
  try {
    for (let i = 1; i <= a.runs; i++) {
      const run: Record<string, number> = {};
      // Each client's CPU, and its main thread's share (Linux; the rest is V8's helpers and libuv's pool).
      for (const [key, mainKey, cand] of [
        ['oursUsPerTx', 'oursMainUsPerTx', 'undici-dispatch'],
        ['bareUsPerTx', 'bareMainUsPerTx', 'bare-pool'],
      ] as const) {
        const res = lastJson(await transportChild(cand, sim.url, concurrency, requests), name);
        run[key] = round((res.cpuUsPerRequest as number) / BATCH, 2);
        if (typeof res.mainUsPerRequest === 'number') run[mainKey] = round(res.mainUsPerRequest / BATCH, 2);
      }
      run.overUsPerTx = round((run.oursUsPerTx as number) - (run.bareUsPerTx as number), 2);
      run.load1 = round(loadavg()[0] as number, 2);
      runs.push(run);
      log(`${name} run ${i}: ${JSON.stringify(run)}`);
    }
  } finally {
    await sim.stop();
  }
  const m = medians(runs);
  return {
    name,
    group: 'anchor',
    rows: requests * BATCH,
    command: `node test/bench/transport.ts --candidates undici-dispatch,bare-pool --concurrency ${concurrency} --requests ${requests} --latency-ms ${LATENCY_MS}`,
    runs,
    median: m,
    display: {
      extra: `ours/bare x${(m.oursUsPerTx! / m.bareUsPerTx!).toFixed(2)}`,
      other:
        `ours ${m.oursUsPerTx?.toFixed(2)} µs/tx, bare Pool ${m.bareUsPerTx?.toFixed(2)} (+${m.overUsPerTx?.toFixed(2)})` +
        (m.oursMainUsPerTx !== undefined && m.bareMainUsPerTx !== undefined
          ? `; main thread ${m.oursMainUsPerTx.toFixed(2)} / ${m.bareMainUsPerTx.toFixed(2)}`
          : ''),
    },
  };
}

/** csv-parse alone over the canonical CSV of `a.rows` rows. */
async function csvParse(a: Args): Promise<ScenarioResult> {
  const name = 'anchor-csv-parse';
  const file = await dataFile('canonical-csv', a.rows);
  const runs: ScenarioResult['runs'] = [];
  for (let i = 1; i <= a.runs; i++) {
    const r = await runNode(['test/bench/csv-parse-alone.ts', file]);
    if (lastJson(r.stdout, name).rows !== a.rows)
      throw new Error(`${name}: ${r.stdout} ${r.stderr.slice(-300)}`);
    runs.push(usageOf(r, a.rows));
  }
  return {
    name,
    group: 'anchor',
    rows: a.rows,
    command: `node test/bench/csv-parse-alone.ts ${file.replace(ROOT, '.')}`,
    runs,
    median: medians(runs),
    display: { extra: '', other: '' },
  };
}

export async function runAnchor(a: Args, s: (typeof ANCHOR_SCENARIOS)[number]): Promise<ScenarioResult> {
  if (s === 'anchor-pipeline-c8') return pipeline(a, 8);
  if (s === 'anchor-pipeline-c32') return pipeline(a, 32);
  if (s === 'anchor-client-c8') return client(a, 8);
  if (s === 'anchor-client-c32') return client(a, 32);
  return csvParse(a);
}

/**
 * Our figures as ratios to the anchors of the same run (only those whose both sides were measured).
 * @example anchorRatios(results) // ['CPU per delivered tx, c32: ours 24.1 µs ÷ bare pipeline 20.3 = x1.19', …]
 */
export function anchorRatios(results: ScenarioResult[]): string[] {
  const get = (n: string) => results.find((r) => r.name === n)?.median;
  const out: string[] = [];
  const pair = (
    label: string,
    ours: number | undefined,
    anchor: number | undefined,
    unit: string,
    what: string,
  ) => {
    if (ours === undefined || anchor === undefined) return;
    out.push(`${label}: ours ${ours}${unit} ÷ ${what} ${anchor}${unit} = x${(ours / anchor).toFixed(2)}`);
  };
  for (const c of [8, 32]) {
    const e = get(`e2e-c${c}`);
    const p = get(`anchor-pipeline-c${c}`);
    pair(`CPU per delivered tx, c${c}`, e?.cpuUsPerTx, p?.cpuUsPerTx, ' µs', 'bare pipeline');
    pair(
      `delivered / ceiling (wall, start-up incl.), c${c}`,
      e?.ratioWall,
      p?.ratioWall,
      '',
      'bare pipeline',
    );
    pair(`peak RSS sending, c${c}`, e?.maxRssMb, p?.maxRssMb, ' MB', 'bare pipeline');
    const cl = get(`anchor-client-c${c}`);
    pair(`request path CPU per tx, c${c}`, cl?.oursUsPerTx, cl?.bareUsPerTx, ' µs', 'bare undici Pool');
  }
  const csv = get('anchor-csv-parse');
  for (const d of ['dry-canonical-csv']) {
    const m = get(d);
    pair(`${d} rows per CPU-second`, m?.rowsPerCpuSec, csv?.rowsPerCpuSec, '', 'csv-parse alone');
    pair(
      `${d} rows per CPU-second`,
      m?.rowsPerCpuSec,
      get('miller-canonical-csv')?.rowsPerCpuSec,
      '',
      'Miller',
    );
  }
  return out;
}
