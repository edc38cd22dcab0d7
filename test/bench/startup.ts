// `make bench`'s start-up scenario: the CPU (user + system, the launcher and anything it runs included) and the peak
// RSS of `--version`, `--help` and a 50-row send to the simulator, from the clone (its launcher, the TypeScript
// sources) and from the npm package (`npm pack`, installed into a scratch prefix as docs/install.md says), each with
// its compile cache warm (one run of each first), against `node -e 0` measured in the same rounds, and against what
// ky needs before any of our code (KY_FLOOR). Runs alternate (each round runs every case once), at least 5 rounds;
// medians. CPU comes from bash's `times` (getrusage of the children, to the millisecond), peak RSS from GNU time.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { launcherHeapFlags } from '../../packaging/heap-flags.ts';
import { LAUNCHER, NODE, ROOT, startDaemon } from './measure.ts';
import { type Args, log, median, round, type ScenarioResult } from './scenarios.ts';

/**
 * What ky needs before any of our code runs: Node's built-in undici (the fetch classes ky reads when it loads, and the
 * Agent the client takes from it: src/client/transport.ts) and one streaming Request, as ky's import-time probe makes.
 */
const KY_FLOOR = `void globalThis.Request;
new globalThis[Symbol.for('undici.globalDispatcher.1')].constructor({ connections: 2 });
new Request('http://127.0.0.1/', { method: 'POST', body: new ReadableStream(), duplex: 'half' });`;

/** A 50-row canonical CSV (the walk-through's shape), written to `file`. */
export function writeFiftyRows(file: string): void {
  const head =
    'transactionId,transactionType,sourceCustomerId,sourceAccountId,paymentType,paymentMethodEntryType,transactionTimestamp,transactionPostingTimestamp,paymentNetworkMCC,paymentNetworkMerchantIdType,paymentNetworkMerchant,paymentNetworkMerchantCity,paymentNetworkMerchantState,paymentNetworkMerchantPostalCode,paymentNetworkMerchantCountryCode,paymentNetworkMerchantId,postedAmount,currencyCode';
  const rows = Array.from(
    { length: 50 },
    (_, i) =>
      `b-${i},AUTHORIZED,c-${i},a-${i},DEBIT,CHIP,2026-11-20T08:00:00.000Z,2026-11-21T06:00:00.000Z,5814,MID,Cafe,San Francisco,CA,94102,US,445566000000000,${100 + i},USD`,
  );
  writeFileSync(file, `${[head, ...rows].join('\n')}\n`);
}

/** npm pack of the clone, installed with `npm install -g --prefix` into `dir`; the installed launcher's path. */
export function installPackage(dir: string, env: NodeJS.ProcessEnv): string {
  const packed = execFileSync('npm', ['pack', '--silent', '--pack-destination', dir], { cwd: ROOT, env });
  const tgz = join(dir, packed.toString().trim().split('\n').pop()!);
  const prefix = join(dir, 'prefix');
  execFileSync('npm', ['install', '-g', '--silent', '--prefix', prefix, tgz], {
    env: { ...env, npm_config_prefer_offline: 'true' },
    stdio: 'ignore',
  });
  return join(prefix, 'bin/svc-ingest');
}

/** One run: CPU of the child tree (bash's `times`, second line: the children's user and system) and its peak RSS. */
function measure(
  cmd: string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<{ cpuMs: number; rssMb: number; wallMs: number }> {
  const rss = join(cwd, `rss-${process.pid}`);
  const script = 'f=$1; shift; /usr/bin/time -f %M -o "$f" "$@" > /dev/null || exit $?; times';
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script, 'bash', rss, ...cmd], {
      cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d));
    child.stderr.on('data', (d: Buffer) => (err += d));
    child.once('close', (code) => {
      if (code !== 0) return reject(new Error(`${cmd.join(' ')}: exit ${code}\n${err.slice(-2000)}`));
      const [user, sys] = [...(out.trim().split('\n').pop() ?? '').matchAll(/(\d+)m([\d.]+)s/g)].map(
        (m) => (Number(m[1]) * 60 + Number(m[2])) * 1000,
      );
      resolve({
        cpuMs: user! + sys!,
        rssMb: Number(readFileSync(rss, 'utf8').trim().split('\n').pop()) / 1024,
        wallMs: performance.now() - t0,
      });
    });
  });
}

export async function startup(a: Args): Promise<ScenarioResult> {
  const work = mkdtempSync(join(tmpdir(), 'svc-bench-startup-'));
  const nodeBin = join(ROOT, 'node_modules/node/bin');
  const base: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: `${nodeBin}:${process.env.PATH}`,
    SVC_LOG_FORMAT: 'json',
  };
  delete base.NODE_COMPILE_CACHE;
  delete base.NODE_OPTIONS;
  try {
    log('startup: npm pack and install into a scratch prefix');
    const installed = installPackage(work, base);
    const csv = join(work, 'export.csv');
    writeFiftyRows(csv);
    const sim = await startDaemon(['simulate', '--port', '0'], LAUNCHER);
    // The installed package keeps its compile cache in the user's cache folder: a scratch one here.
    const env = { ...base, SVC_BASE_URL: sim.firstLine, XDG_CACHE_HOME: join(work, 'cache') };
    let n = 0;
    const send = () => ['send', '--ledger', join(work, `l-${++n}`), '--rejects', join(work, `r-${n}`), csv];
    const cases: Array<[string, () => string[]]> = [
      ['node -e 0', () => [NODE, '-e', '0']],
      ['ky floor', () => [NODE, ...launcherHeapFlags(ROOT), '-e', KY_FLOOR]],
      ...[['clone', LAUNCHER] as const, ['package', installed] as const].flatMap(([way, bin]) => [
        [`${way} --version`, () => [bin, '--version']] as [string, () => string[]],
        [`${way} --help`, () => [bin, '--help']] as [string, () => string[]],
        [`${way} send 50`, () => [bin, ...send()]] as [string, () => string[]],
      ]),
    ];
    const samples = new Map<string, Array<{ cpuMs: number; rssMb: number; wallMs: number }>>();
    const loads: number[] = [];
    try {
      for (const [, cmd] of cases) await measure(cmd(), env, work); // the compile caches warm
      const rounds = Math.max(a.runs, 5);
      for (let i = 0; i < rounds; i++) {
        loads.push(loadavg()[0]!);
        for (const [name, cmd] of cases)
          samples.set(name, [...(samples.get(name) ?? []), await measure(cmd(), env, work)]);
      }
    } finally {
      await sim.stop();
    }
    const med: Record<string, number> = {};
    for (const [name, xs] of samples) {
      med[`${name} cpuMs`] = round(median(xs.map((x) => x.cpuMs)));
      med[`${name} rssMb`] = round(median(xs.map((x) => x.rssMb)));
    }
    const anchor = med['node -e 0 cpuMs']!;
    for (const [name] of cases) med[`${name} xAnchor`] = round(med[`${name} cpuMs`]! / anchor, 2);
    const fig = (name: string) =>
      `${Math.round(med[`${name} cpuMs`]!)} ms ×${med[`${name} xAnchor`]!.toFixed(1)}`;
    const line = (way: string) =>
      `${way}: --version ${fig(`${way} --version`)}, --help ${fig(`${way} --help`)}, send ${fig(`${way} send 50`)} (${Math.round(med[`${way} send 50 rssMb`]!)} MB)`;
    const load1 = median(loads);
    med.load1 = load1;
    // The table's wall column: the installed package's send.
    med.wallMs = round(median(samples.get('package send 50')!.map((x) => x.wallMs)));
    return {
      name: 'startup',
      group: 'startup',
      rows: 50,
      command:
        'svc-ingest --version | --help | send (50 rows) to the simulator; clone and npm package, compile cache warm',
      runs: [...samples.get('node -e 0')!.keys()].map((i) => ({
        ...Object.fromEntries([...samples].map(([k, xs]) => [`${k} cpuMs`, xs[i]!.cpuMs])),
        load1: loads[i],
      })),
      median: med,
      target: '50-row send <= 120 ms CPU, --version <= 40 ms (npm package, compile cache warm)',
      met: med['package send 50 cpuMs']! <= 120 && med['package --version cpuMs']! <= 40,
      display: {
        extra: `${line('package')}; ${line('clone')}`,
        other: `anchor node -e 0 ${Math.round(anchor)} ms, ${Math.round(med['node -e 0 rssMb']!)} MB; ky's floor (Node's undici and one Request) ${fig('ky floor')}; load ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}`,
      },
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
