// The bin launcher: runs the CLI on the project's supported Node whatever `node` is first on PATH,
// exec's it (the CLI is the process that gets signals), and says so in one line when no Node fits.
import { spawn, spawnSync } from 'node:child_process';
import {
  chmod,
  copyFile,
  mkdir,
  mkdtemp,
  readFile,
  readlink,
  realpath,
  symlink,
  utimes,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLONE_BIN, ROOT, runCli } from '../helpers/cli.ts';

async function fakeNodeDir(version: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-fake-node-'));
  await writeFile(join(dir, 'node'), `#!/bin/sh\necho ${version}\n`);
  await chmod(join(dir, 'node'), 0o755);
  return dir;
}

describe('bin launcher', () => {
  it('runs on the project Node even when an old node is first on PATH, as the same process (exec)', async () => {
    const old = await fakeNodeDir('20.20.2');
    const child = spawn(CLONE_BIN, ['simulate', '--port', '0'], {
      env: { ...process.env, PATH: `${old}:/usr/bin:/bin`, SVC_LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const firstLine = await new Promise<string>((resolve) => {
      let buf = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => {
        buf += d;
        if (buf.includes('\n')) resolve(buf.split('\n')[0]!);
      });
    });
    expect(firstLine).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    // exec replaced the shell: the launcher's pid is now the project's Node.
    expect(await readlink(`/proc/${child.pid}/exe`)).toBe(join(ROOT, 'node_modules/node/bin/node'));
    child.kill('SIGTERM');
    const [code, signal] = await new Promise<[number | null, string | null]>((r) =>
      child.on('close', (c, s) => r([c, s])),
    );
    expect(signal).toBeNull();
    expect(code).toBe(0);
  });

  it('says in one line that no supported Node exists, and exits 1', async () => {
    const old = await fakeNodeDir('20.20.2');
    const root = await mkdtemp(join(tmpdir(), 'svc-no-node-'));
    await mkdir(join(root, 'src/bin'), { recursive: true });
    await copyFile(CLONE_BIN, join(root, 'src/bin/svc-ingest'));
    await chmod(join(root, 'src/bin/svc-ingest'), 0o755);
    const r = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(join(root, 'src/bin/svc-ingest'), ['--help'], {
        env: { PATH: `${old}:/bin`, HOME: process.env.HOME ?? '/' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (d: string) => {
        stderr += d;
      });
      child.on('close', (code) => resolve({ code, stderr }));
    });
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/no supported Node\.js \(>= 22\.18\) found; node on PATH is 20\.20\.2/);
    // An installed package (no src/cli): what to install, never a clone's `make setup`.
    expect(r.stderr).toContain(
      'install Node.js 22 or 24 LTS (Debian/Ubuntu: curl -fsSL https://deb.nodesource.com',
    );
    expect(r.stderr).toContain('SVC_INGEST_NODE');
    expect(r.stderr).not.toContain('make setup');
    // A clone (src/cli/main.ts there): make setup installs the project's own Node.
    await mkdir(join(root, 'src/cli'), { recursive: true });
    await writeFile(join(root, 'src/cli/main.ts'), '');
    const clone = spawnSync(join(root, 'src/bin/svc-ingest'), ['--help'], {
      env: { PATH: `${old}:/bin`, HOME: process.env.HOME ?? '/', SVC_LOG_FORMAT: 'text' },
      encoding: 'utf8',
    });
    expect(clone.status).toBe(1);
    expect(clone.stderr).toContain(`in this clone run: make setup in ${await realpath(root)}`);
  });

  it('--help lists every command', async () => {
    const r = await runCli(['--help']);
    expect(r.code).toBe(0);
    for (const c of ['send', 'simulate', 'redemptions', 'stores', 'tickets', 'reconcile', 'ledger'])
      expect(r.stdout).toContain(c);
  });

  it('an unknown command or option is one clear line and exit 1, no stack trace', async () => {
    const a = await runCli(['frobnicate']);
    expect(a.code).toBe(1);
    expect(a.stderr).toMatch(/unknown command/);
    const b = await runCli(['send', '--no-such-flag']);
    expect(b.code).toBe(1);
    expect(b.stderr).toMatch(/unknown option/);
    expect(a.stderr + b.stderr).not.toMatch(/\n\s+at /);
  });

  it('an installed package asks the node on PATH its version once, then while its note is newer than the node', async () => {
    // An installed layout (no src/cli), reached through the link npm makes, and a node that logs how it was run.
    const dir = await realpath(await mkdtemp(join(tmpdir(), 'svc-node-note-')));
    const root = join(dir, 'lib/node_modules/svc-ingest');
    await mkdir(join(root, 'src/bin'), { recursive: true });
    await copyFile(CLONE_BIN, join(root, 'src/bin/svc-ingest'));
    await chmod(join(root, 'src/bin/svc-ingest'), 0o755);
    await mkdir(join(dir, 'bin'));
    await symlink('../lib/node_modules/svc-ingest/src/bin/svc-ingest', join(dir, 'bin/svc-ingest'));
    const fake = join(dir, 'fake');
    await mkdir(fake);
    const calls = join(dir, 'calls');
    await writeFile(
      join(fake, 'node'),
      `#!/bin/sh\necho "$*" >> ${calls}\nif [ "$1" = --version ]; then echo v24.1.0; fi\n`,
    );
    await chmod(join(fake, 'node'), 0o755);
    // The compile-cache folder, as Node makes it on a first run (this node makes none).
    const cache = join(dir, 'cache');
    await mkdir(join(cache, 'svc-ingest-compile'), { recursive: true });
    const run = () =>
      spawnSync(join(dir, 'bin/svc-ingest'), ['--version'], {
        env: { PATH: `${fake}:/usr/bin:/bin`, XDG_CACHE_HOME: cache, HOME: dir },
        encoding: 'utf8',
      });
    const lines = async () => (await readFile(calls, 'utf8')).trim().split('\n');
    expect(run().status).toBe(0);
    const entry = `--min-semi-space-size=8 --max-semi-space-size=16 ${root}/dist/cli/main.cjs --version`;
    expect(await lines()).toEqual(['--version', entry]);
    expect(await readFile(join(cache, 'svc-ingest-compile/svc-ingest-node'), 'utf8')).toBe(`${fake}/node\n`);
    expect(run().status).toBe(0);
    expect(await lines()).toEqual(['--version', entry, entry]);
    // A node newer than the note (replaced since) is asked again.
    const later = new Date(Date.now() + 60_000);
    await utimes(join(fake, 'node'), later, later);
    expect(run().status).toBe(0);
    expect(await lines()).toEqual(['--version', entry, entry, '--version', entry]);
    // SVC_INGEST_HEAP=small: V8's heap held small (docs/commands.md), whatever the command; the default otherwise.
    const small = '--min-semi-space-size=2 --max-semi-space-size=2';
    const usual = '--min-semi-space-size=8 --max-semi-space-size=16';
    for (const [heap, args, flags] of [
      ['small', ['send', 'a.csv'], small],
      ['small', ['--log-level', 'warn', 'backfill', 'plan'], small],
      ['', ['send', 'a.csv'], usual],
      ['big', ['send', 'a.csv'], usual],
    ] as const) {
      const r = spawnSync(join(dir, 'bin/svc-ingest'), args, {
        env: { PATH: `${fake}:/usr/bin:/bin`, XDG_CACHE_HOME: cache, HOME: dir, SVC_INGEST_HEAP: heap },
        encoding: 'utf8',
      });
      expect(r.status).toBe(0);
      expect((await lines()).at(-1)).toBe(`${flags} ${root}/dist/cli/main.cjs ${args.join(' ')}`);
    }
  });
});
