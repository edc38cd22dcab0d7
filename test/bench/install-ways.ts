// `make bench-install`: the size of each install way and its start-up cost, in one run on one machine: the single
// executable (with and without V8's code cache in its blob), the npm package (installed from its .tgz, run by the
// clone's Node 24), and the sizes of the .deb, the .rpm and the image (they hold the same executable: same start-up).
// Each figure is the median of --runs (default 7) runs of `--version`, `--help` and a 50-row send to the simulator
// (a fresh ledger each), as CPU (user + system) and peak RSS from GNU time. Prints a Markdown table; writes
// test/bench/results/install-ways.json.
// Usage: node test/bench/install-ways.ts [--runs N]   (make bench-install builds everything first)
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { type ChildResult, ROOT, runExternal, startDaemon } from './measure.ts';
import { writeFiftyRows } from './startup.ts';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '7' } } });
const runs = Number(values.runs);
const DIST = join(ROOT, '.out/dist');
const VERSION = execFileSync(
  'sed',
  ['-n', 's/^  "version": "\\(.*\\)",$/\\1/p', join(ROOT, 'package.json')],
  {
    encoding: 'utf8',
  },
).trim();
const EXE = join(DIST, `svc-ingest-${VERSION}-linux-x64`);
const EXE_NO_CACHE = join(DIST, 'no-code-cache', `svc-ingest-${VERSION}-linux-x64`);
const NODE_BIN = join(ROOT, 'node_modules/node/bin');

const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
const size = (f: string) => statSync(f).size;
function treeSize(dir: string): number {
  let total = 0;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true }))
    if (e.isFile()) total += statSync(join(e.parentPath, e.name)).size;
  return total;
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const work = mkdtempSync(join(tmpdir(), 'svc-bench-install-'));
try {
  // The npm package, installed as a bank would (docs/install.md), from the .tgz `npm pack` made.
  const tgz = readdirSync(DIST).find((f) => f.startsWith('svc-ingest-') && f.endsWith('.tgz'));
  if (!tgz) throw new Error('no package in .out/dist: run make bench-install');
  const prefix = join(work, 'npm-prefix');
  execFileSync('npm', ['install', '-g', '--silent', '--prefix', prefix, join(DIST, tgz)], {
    env: { ...process.env, PATH: `${NODE_BIN}:${process.env.PATH}`, npm_config_prefer_offline: 'true' },
    stdio: 'ignore',
  });
  const npmBin = join(prefix, 'bin/svc-ingest');

  const sim = await startDaemon(['simulate', '--port', '0'], EXE);
  const ways: Array<[string, string, Record<string, string>]> = [
    ['executable', EXE, {}],
    ['executable, no code cache', EXE_NO_CACHE, {}],
    ['npm package (Node 24.21)', npmBin, { PATH: `${NODE_BIN}:/usr/bin:/bin` }],
  ];
  const csv = join(work, 'export.csv');
  writeFiftyRows(csv);

  const results: Record<string, Record<string, { cpuMs: number; maxRssMb: number; wallMs: number }>> = {};
  let n = 0;
  for (const [name, bin, env] of ways) {
    results[name] = {};
    const cases: Array<[string, () => string[]]> = [
      ['--version', () => ['--version']],
      ['--help', () => ['--help']],
      [
        'send 50 rows',
        () => [
          'send',
          '--ledger',
          join(work, `l-${++n}.ndjson`),
          '--rejects',
          join(work, `r-${n}.ndjson`),
          csv,
        ],
      ],
    ];
    for (const [label, args] of cases) {
      const samples: ChildResult[] = [];
      for (let i = 0; i < runs; i++) {
        const r = await runExternal(bin, args(), {
          cwd: work,
          env: {
            ...env,
            SVC_BASE_URL: sim.firstLine,
            SVC_LOG_FORMAT: 'json',
            NODE_DISABLE_COMPILE_CACHE: '1',
            SVC_INGEST_NODE: '',
          },
          captureStdout: true,
        });
        if (r.code !== 0) throw new Error(`${name} ${label}: exit ${r.code}\n${r.stderr}`);
        samples.push(r);
      }
      results[name][label] = {
        cpuMs: median(samples.map((s) => s.cpuMs)),
        maxRssMb: median(samples.map((s) => s.maxRssMb)),
        wallMs: median(samples.map((s) => s.wallMs)),
      };
    }
  }
  await sim.stop();

  const sizes: Record<string, string> = {
    executable: mib(size(EXE)),
    '.deb': mib(size(join(DIST, `svc-ingest_${VERSION}_amd64.deb`))),
    '.rpm': mib(size(join(DIST, `svc-ingest-${VERSION}-1.x86_64.rpm`))),
    'image (OCI archive)': mib(
      size(
        readdirSync(DIST)
          .map((f) => join(DIST, f))
          .find((f) => f.endsWith('.oci.tar'))!,
      ),
    ),
    'npm package (.tgz)': mib(size(join(DIST, tgz))),
    'npm package, installed': mib(treeSize(join(prefix, 'lib/node_modules/svc-ingest'))),
  };
  console.log(
    `\n| install way | ${Object.keys(results['executable']!)
      .map((l) => `${l}: CPU / RSS`)
      .join(' | ')} |`,
  );
  console.log(
    `|---|${Object.keys(results['executable']!)
      .map(() => '---')
      .join('|')}|`,
  );
  for (const [name, r] of Object.entries(results))
    console.log(
      `| ${name} | ${Object.values(r)
        .map((v) => `${Math.round(v.cpuMs)} ms / ${Math.round(v.maxRssMb)} MB`)
        .join(' | ')} |`,
    );
  console.log('\n| artefact | size |\n|---|---|');
  for (const [k, v] of Object.entries(sizes)) console.log(`| ${k} | ${v} |`);
  const exe = results['executable']!;
  const npm = results['npm package (Node 24.21)']!;
  const met = Object.keys(exe).every((l) => exe[l]!.cpuMs <= npm[l]!.cpuMs);
  console.log(
    `\ntarget: the executable's start-up CPU <= the npm package's, each case: ${met ? 'met' : 'MISSED'}`,
  );
  mkdirSync(join(ROOT, 'test/bench/results'), { recursive: true });
  writeFileSync(
    join(ROOT, 'test/bench/results/install-ways.json'),
    `${JSON.stringify({ runs, results, sizes, met }, null, 2)}\n`,
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}
