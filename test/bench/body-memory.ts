// Peak RSS and memory outside the heap of a send, for two or more builds or flag sets run alternately against one
// 50 ms simulator (issue 33: what request bodies cost). Not part of `make bench`.
// Usage: node test/bench/body-memory.ts --variant NAME=ROOT[|NODE FLAGS[|ENV=V …]] … [--rows 300000]
//          [--concurrency 32] [--runs 3] [--every 50]
// ROOT is a checkout with node_modules (a `git archive` copy with node_modules linked in is one); each run is
// `ROOT/node_modules/node/bin/node FLAGS ROOT/src/cli/main.ts send …` (FLAGS default to this clone's launcher's V8
// flags: packaging/heap-flags.ts), with usage-preload.ts sampling process.memoryUsage() every --every ms. Per run it prints CPU µs per
// delivered tx (user+sys), peak RSS (getrusage), peak arrayBuffers and heapUsed (MB), and the load average.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { launcherHeapFlags } from '../../packaging/heap-flags.ts';
import { ROOT } from './measure.ts';
import { dataFile, median, round, simPost, simulator } from './scenarios.ts';

const LAUNCHER_FLAGS = launcherHeapFlags(ROOT).join(' ');
const { values } = parseArgs({
  options: {
    variant: { type: 'string', multiple: true, default: [] },
    rows: { type: 'string', default: '300000' },
    concurrency: { type: 'string', default: '32' },
    runs: { type: 'string', default: '3' },
    every: { type: 'string', default: '50' },
  },
});

interface Variant {
  name: string;
  root: string;
  flags: string[];
  env: Record<string, string>;
}

const variants: Variant[] = (values.variant as string[]).map((spec) => {
  const [name, rest] = [spec.slice(0, spec.indexOf('=')), spec.slice(spec.indexOf('=') + 1)];
  const [root = ROOT, flags = LAUNCHER_FLAGS, env = ''] = rest.split('|');
  return {
    name,
    root: root === '.' ? ROOT : root,
    flags: flags.split(' ').filter(Boolean),
    env: Object.fromEntries(
      env
        .split(' ')
        .filter(Boolean)
        .map((kv) => kv.split('=') as [string, string]),
    ),
  };
});
if (variants.length === 0) {
  process.stderr.write('usage: node test/bench/body-memory.ts --variant NAME=ROOT[|FLAGS[|ENV=V]] …\n');
  process.exit(1);
}
const rows = Number(values.rows);
const conc = Number(values.concurrency);
const file = await dataFile('canonical-csv', rows);
const sim = await simulator(50);
const work = join(tmpdir(), `svc-bench-body-${process.pid}`);
mkdirSync(work, { recursive: true });

interface Run {
  cpuUs: number;
  /** Delivered tx/s (rows ÷ wall time, start-up included) against the ceiling (concurrency × 50 ÷ 50 ms). */
  ratio: number;
  rssMb: number;
  abMb: number;
  heapMb: number;
  load: number;
}

async function once(v: Variant, i: number): Promise<Run> {
  await simPost(sim.url, '/__sim/reset');
  const usage = join(work, `usage-${v.name}-${i}.json`);
  const ledger = join(work, `ledger-${v.name}-${i}.ndjson`);
  const args = [
    ...v.flags,
    '--import',
    join(ROOT, 'test/bench/usage-preload.ts'),
    join(v.root, 'src/cli/main.ts'),
    'send',
    ...Object.entries({
      '--base-url': sim.url,
      '--concurrency': String(conc),
      '--ledger': ledger,
      '--rejects': join(work, 'rejects.ndjson'),
      '--log-level': 'warn',
    }).flat(),
    '--json',
    file,
  ];
  const load = loadavg()[0] as number;
  const t0 = performance.now();
  const child = spawn(join(v.root, 'node_modules/node/bin/node'), args, {
    env: {
      ...process.env,
      ...v.env,
      NODE_COMPILE_CACHE: join(v.root, 'node_modules/.cache/svc-ingest-compile'),
      BENCH_USAGE_FILE: usage,
      BENCH_MEMORY_EVERY_MS: String(values.every),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d;
  });
  child.stderr.on('data', (d: Buffer) => {
    err = (err + d).slice(-2000);
  });
  const code = await new Promise<number | null>((r) => child.once('close', r));
  const wallS = (performance.now() - t0) / 1000;
  const summary = JSON.parse(out.trim().split('\n').at(-1) ?? '{}') as { sent?: number };
  if (code !== 0 || summary.sent !== rows || !existsSync(usage))
    throw new Error(`${v.name}: exit ${code}, sent ${summary.sent}: ${err}`);
  const u = JSON.parse(readFileSync(usage, 'utf8')) as {
    userMs: number;
    systemMs: number;
    maxRssKb: number;
    memory: { samples: number[][] };
  };
  rmSync(ledger, { force: true });
  const col = (k: number) => Math.max(...u.memory.samples.map((s) => s[k] as number));
  return {
    cpuUs: round(((u.userMs + u.systemMs) * 1000) / rows, 2),
    ratio: round(rows / wallS / ((conc * 50) / 0.05), 3),
    rssMb: round(u.maxRssKb / 1024),
    abMb: col(5),
    heapMb: col(3),
    load: round(load, 2),
  };
}

const results = new Map<string, Run[]>(variants.map((v) => [v.name, []]));
try {
  for (let i = 1; i <= Number(values.runs); i++)
    for (const v of variants) {
      const r = await once(v, i);
      results.get(v.name)?.push(r);
      process.stdout.write(`${v.name} run ${i}: ${JSON.stringify(r)}\n`);
    }
} finally {
  await sim.stop();
  rmSync(work, { recursive: true, force: true });
}
for (const [name, runs] of results) {
  const m = (k: keyof Run) => median(runs.map((r) => r[k]));
  process.stdout.write(
    `${name} median of ${runs.length} (${rows} rows, c${conc}): ${m('cpuUs')} µs/tx, ${m('ratio')} of the ceiling, ` +
      `RSS ${m('rssMb')} MB, ` +
      `arrayBuffers ${m('abMb')} MB, heapUsed ${m('heapMb')} MB (load ${m('load')})\n`,
  );
}
