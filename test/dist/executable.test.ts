// The single executable (make dist) as a machine without Node would run it: copied alone into an empty folder under
// the system's temporary folder (no node_modules in any folder above), run with a PATH that holds nothing but it —
// no `node` anywhere. Help, the built-in profiles (embedded assets), the simulator, a send, the rerun, ledger status,
// the kernel lock from the embedded addon, the pool worker (an embedded bundle), a send with the ledger on a real
// PostgreSQL, and a backfill (plan, then work) through it.

import { spawn } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launcherHeapFlags } from '../../packaging/heap-flags.ts';
import { collectOutput, ROOT } from '../helpers/cli.ts';
import { usePostgres } from '../helpers/postgres.ts';
import { built, EXE, events, run, startSimulator, VERSION, why, writeExport } from './helpers.ts';

describe('the single executable, alone in an empty folder, no Node on PATH', () => {
  const pg = usePostgres();
  let dir = '';
  let exe = '';
  let env: NodeJS.ProcessEnv = {};
  let sim: Awaited<ReturnType<typeof startSimulator>> | undefined;
  const svc = (args: string[], extra: NodeJS.ProcessEnv = {}) =>
    run(exe, args, { cwd: dir, env: { ...env, ...extra } });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-exe-'));
    for (let d = dir; d !== dirname(d); d = dirname(d)) {
      await expect(stat(join(d, 'node_modules')), `${d}/node_modules`).rejects.toThrow();
    }
    await mkdir(join(dir, 'bin'));
    exe = join(dir, 'bin/svc-ingest');
    await copyFile(built(EXE), exe);
    await run('chmod', ['0755', exe]);
    env = { PATH: join(dir, 'bin'), HOME: dir, TMPDIR: dir, SVC_LOG_FORMAT: 'json' };
    sim = await startSimulator(exe, [], env);
    env.SVC_BASE_URL = sim.url;
    await writeExport(join(dir, 'export.csv'));
  });

  afterAll(async () => {
    await sim?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('says its version and commit, its help and its built-in profiles, with nothing else on PATH', async () => {
    await expect(stat(join(dir, 'bin/node'))).rejects.toThrow();
    const version = await svc(['--version']);
    expect(version.code, why(version)).toBe(0);
    expect(version.stdout.trim()).toMatch(
      new RegExp(`^${VERSION.replaceAll('.', '\\.')} \\([0-9a-f]{7}(-dirty)?\\)$`),
    );
    const help = await svc(['--help']);
    expect(help.stdout).toContain('Usage: svc-ingest');
    const mappings = await svc(['mappings']);
    expect(mappings.code, why(mappings)).toBe(0);
    expect(mappings.stdout).toMatch(/^northwind-csv\s+csv\s/m);
    // A built-in profile, loaded from the embedded asset, over the sample export it is for.
    await copyFile(join(ROOT, 'samples/northwind.csv'), join(dir, 'northwind.csv'));
    const map = await svc(['send', '--dry-run', '--json', '--mapping', 'northwind-csv', 'northwind.csv']);
    expect(JSON.parse(map.stdout), why(map)).toMatchObject({ read: 30, valid: 27, rejected: 3 });
  });

  it('sends, reruns without resending, and reports the ledger', async () => {
    const first = await svc(['send', 'export.csv']);
    const again = await svc(['send', 'export.csv']);
    expect(first.code, why(first)).toBe(0);
    expect(again.code, why(again)).toBe(0);
    const ends = [...events(first.stderr, 'run.end'), ...events(again.stderr, 'run.end')];
    expect(ends.map((e) => [e.read, e.sent, e.skipped, e.rejected, e.failed])).toEqual([
      [50, 50, 0, 0, 0],
      [50, 0, 50, 0, 0],
    ]);
    const status = await svc(['ledger', 'status']);
    expect(status.code, why(status)).toBe(0);
    expect(status.stdout).toContain('50 acknowledged');
  });

  it('holds the ledger with the kernel lock of the embedded addon (an OFD lock in /proc/locks)', async () => {
    const slow = await startSimulator(exe, [], env, ['--latency-ms', '1500']);
    try {
      await writeExport(join(dir, 'slow.csv'), 5, 'slow');
      const ledger = join(dir, 'slow/transactions.ndjson');
      const child = spawn(
        exe,
        ['send', '--ledger', ledger, '--rejects', join(dir, 'slow/rejects.ndjson'), 'slow.csv'],
        {
          cwd: dir,
          env: { ...env, SVC_BASE_URL: slow.url },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      const out = collectOutput(child);
      let locked = false;
      const deadline = Date.now() + 15_000;
      while (!locked && child.exitCode === null && Date.now() < deadline) {
        const ino = await stat(ledger).then(
          (s) => s.ino,
          () => undefined,
        );
        if (ino !== undefined)
          locked = (await readFile('/proc/locks', 'utf8'))
            .split('\n')
            .some((l) => /\bOFDLCK\b/.test(l) && l.includes(`:${ino} `));
        if (!locked) await new Promise((r) => setTimeout(r, 10));
      }
      const done = await out.closed;
      expect(done.code, done.stderr).toBe(0);
      expect(locked, 'no OFD lock on the ledger seen while the send ran').toBe(true);
    } finally {
      await slow.stop();
    }
  });

  it('a temporary folder mounted noexec: the socket lock, said once with the folder it tried; the send goes on', async () => {
    // A mount namespace of its own (unshare -m) whose TMPDIR is a noexec tmpfs, as a hardened host's /tmp.
    const noexec = join(dir, 'noexec');
    await mkdir(noexec);
    await writeExport(join(dir, 'noexec.csv'), 5, 'nox');
    const r = await run(
      'unshare',
      [
        '-m',
        'sh',
        '-c',
        'mount --make-rprivate / && mount -t tmpfs -o noexec tmpfs "$1" && shift && exec "$@"',
        'sh',
        noexec,
        exe,
        'send',
        '--ledger',
        join(dir, 'noexec-ledger/transactions.ndjson'),
        '--rejects',
        join(dir, 'noexec-ledger/rejects.ndjson'),
        'noexec.csv',
      ],
      { cwd: dir, env: { ...env, PATH: `${env.PATH}:/usr/bin:/bin`, TMPDIR: noexec } },
    );
    expect(r.code, why(r)).toBe(0);
    const told = events(r.stderr, 'ledger.lock.fallback');
    expect(told).toHaveLength(1);
    expect(told[0]).toMatchObject({ level: 40, folder: noexec });
    expect(String(told[0]?.reason)).toMatch(/failed to map segment|operation not permitted/i);
    expect(String(told[0]?.msg)).toContain('socket lock');
    expect(events(r.stderr, 'run.end').map((e) => e.sent)).toEqual([5]);
  });

  it("runs with the launcher's default heap flags (its own execArgv), as Node's diagnostic report shows", async () => {
    // The report (NODE_OPTIONS extends the executable's arguments) names the flags and V8's young generation.
    const reports = join(dir, 'reports');
    await mkdir(reports);
    const s = await startSimulator(exe, [], {
      ...env,
      NODE_OPTIONS: `--report-on-signal --report-signal=SIGUSR2 --report-directory=${reports}`,
    });
    try {
      s.child.kill('SIGUSR2');
      type Report = {
        header: { commandLine: string[] };
        javascriptHeap: { heapSpaces: { new_space: { memorySize: number } } };
      };
      // Written by Node as the signal comes: read once it is whole.
      const whole = async (): Promise<Report | undefined> => {
        const name = (await readdir(reports)).find((f) => f.endsWith('.json'));
        const text = name === undefined ? '' : await readFile(join(reports, name), 'utf8');
        return text.trimEnd().endsWith('}') ? (JSON.parse(text) as Report) : undefined;
      };
      let report: Report | undefined;
      for (let i = 0; i < 400 && report === undefined; i++) {
        report = await whole();
        if (report === undefined) await new Promise((r) => setTimeout(r, 25));
      }
      if (report === undefined) throw new Error('no report written within 10 s');
      const line = report.header.commandLine;
      expect(line.slice(1, line.indexOf('simulate') - 1)).toEqual(launcherHeapFlags(ROOT));
      // --min-semi-space-size=8 --max-semi-space-size=16: the young generation is never under 8 MiB (V8's own start:
      // 1 MiB) nor over 16; it may have grown from 8 by the time the report is written (a loaded machine).
      const young = report.javascriptHeap.heapSpaces.new_space.memorySize;
      expect(young).toBeGreaterThanOrEqual(8 * 2 ** 20);
      expect(young).toBeLessThanOrEqual(16 * 2 ** 20);
    } finally {
      await s.stop();
    }
  });

  it('runs the pool of worker threads from its embedded worker bundle', async () => {
    await writeExport(join(dir, 'pool.csv'), 50, 'pool');
    const pooled = await svc(['send', '--dry-run', '--json', 'pool.csv'], {
      SVC_PREPARE_WORKER: 'on',
      SVC_PREPARE_THREADS: '2',
    });
    expect(pooled.code, why(pooled)).toBe(0);
    expect(JSON.parse(pooled.stdout)).toMatchObject({ read: 50, valid: 50, batched: 50, exitStatus: 0 });
  });

  it('sends with the ledger on PostgreSQL, and runs a backfill through it', async () => {
    const url = await pg.createDatabase();
    const sent = await svc(['send', '--ledger', url, 'export.csv']);
    expect(sent.code, why(sent)).toBe(0);
    expect(events(sent.stderr, 'run.end').map((e) => [e.read, e.sent])).toEqual([[50, 50]]);
    const status = await svc(['ledger', 'status', '--ledger', url]);
    expect(status.code, why(status)).toBe(0);

    const bf = await pg.createDatabase();
    await writeExport(join(dir, 'backfill.csv'), 300, 'bf');
    const plan = await svc([
      'backfill',
      'plan',
      '--ledger',
      bf,
      '--partition-bytes',
      '16384',
      join(dir, 'backfill.csv'),
    ]);
    expect(plan.code, why(plan)).toBe(0);
    const work = await svc(['backfill', 'work', '--ledger', bf, '--rejects', join(dir, 'bf-rejects.ndjson')]);
    expect(work.code, why(work)).toBe(0);
    const db = new URL(bf).pathname.slice(1);
    const acked = await pg.sql(
      db,
      `SELECT count(*)::int AS n FROM svc_ingest.transaction_states WHERE state = 'acked'`,
    );
    expect(acked[0]!.n).toBe(300);
  });
});
