// State files under attack or accident: a run refused by the ledger's holder (racing runs: lock-race.test.ts),
// links and special files as ledger, rejects or owner file, loose modes, and a cron run from another folder.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, link, mkdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, type CliResult, runCliHere, startCli, waitFor } from '../helpers/cli.ts';
import { useSimulator } from '../helpers/simulator.ts';
import { makeTx, range } from '../helpers/transactions.ts';
import { deliveryCounts, FAST, report, summary, workdir, writeNdjson } from './helpers.ts';
import { oneLine, ownerWritten } from './ledger-lock.ts';

const sim = useSimulator({ seed: 19 }, 'reset');
const sends = () => sim.stats().requests.byPath['/v2/data/transactions'] ?? 0;

describe('the ledger lock', () => {
  it('names the holding process; a run through a symlinked folder or a hard link is refused too', async () => {
    const w = await workdir('lock-holder');
    const holder = startCli(['send', '--format', 'ndjson', '--json', '-'], {
      env: w.env(sim),
      keepStdinOpen: true,
    });
    await waitFor(() => ownerWritten(w.ledger), holder.child);
    const file = join(w.dir, 'in.ndjson');
    await writeNdjson(file, 10, 'lh');
    const same = await runCliHere(['send', ...FAST, file], { env: w.env(sim) });
    expect(same.code).toBe(1);
    expect(oneLine(same, 'LEDGER_LOCKED')).toContain(`is in use by process ${holder.child.pid}`);
    await symlink(w.dir, `${w.dir}-link`);
    await link(w.ledger, join(w.dir, 'hard.ndjson'));
    for (const other of [join(`${w.dir}-link`, 'ledger.ndjson'), join(w.dir, 'hard.ndjson')]) {
      const r = await runCliHere(['send', ...FAST, file], { env: w.env(sim, { SVC_LEDGER_PATH: other }) });
      expect(r.code, r.stderr).toBe(1);
      oneLine(r, 'LEDGER_LOCKED');
    }
    expect(sends()).toBe(0);
    holder.child.stdin!.end();
    // The holder read no record: exit 4 ("no records"), the lock released all the same.
    expect((await holder.done).code).toBe(4);
    const after = await runCliHere(['send', ...FAST, file], {
      env: w.env(sim, { SVC_LEDGER_PATH: join(w.dir, 'hard.ndjson') }),
    });
    expect(after.code, after.stderr).toBe(0);
    expect(summary(after).sent).toBe(10);
  });
});

describe('ledger, rejects and owner file: regular files only, never through a link, mode 0600', () => {
  const refused = async (w: Awaited<ReturnType<typeof workdir>>, env: NodeJS.ProcessEnv, what: RegExp) => {
    const file = join(w.dir, 'in.ndjson');
    if (!existsSync(file)) await writeNdjson(file, 20, 'sf');
    const t0 = Date.now();
    const r = await runCliHere(['send', ...FAST, file], { env: w.env(sim, env) });
    const ms = Date.now() - t0;
    expect(r.code, r.stderr).toBe(1);
    // --json (in FAST): stdout holds only the error object.
    expect(r.stdout.trim().split('\n')).toHaveLength(1);
    expect(JSON.parse(r.stdout).error).toMatchObject({ code: 'LEDGER_PATH_INVALID' });
    expect(oneLine(r, 'LEDGER_PATH_INVALID')).toMatch(what);
    expect(sends()).toBe(0);
    return { r, ms };
  };

  it('--ledger /dev/full: refused at once, no lock or owner file made', async () => {
    const w = await workdir('sf-devfull');
    const file = join(w.dir, 'in.ndjson');
    await writeNdjson(file, 20, 'df');
    const t0 = Date.now();
    const r = await runCliHere(['send', ...FAST, '--ledger', '/dev/full', file], { env: w.env(sim) });
    expect(r.code).toBe(1);
    expect(oneLine(r, 'LEDGER_PATH_INVALID')).toMatch(/ledger \/dev\/full is a character device/);
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(existsSync('/dev/full.lock')).toBe(false);
    // A dry run reads the ledger: refused the same way, no hang.
    const dry = await runCliHere(['send', '--json', '--dry-run', '--ledger', '/dev/full', file], {
      env: w.env(sim),
    });
    expect(dry.code).toBe(1);
    oneLine(dry, 'LEDGER_PATH_INVALID');
  });

  it('a FIFO, a directory, a symlink as ledger; a symlink or FIFO as rejects or owner file: refused before any lock', async () => {
    const w = await workdir('sf-special');
    const victim = join(w.dir, 'unrelated.txt');
    await writeFile(victim, 'do not touch\n', { mode: 0o644 });
    const fifo = join(w.dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    await mkdir(join(w.dir, 'adir'));
    await symlink(victim, join(w.dir, 'link.ndjson'));

    const cases: Array<[string, NodeJS.ProcessEnv, RegExp]> = [
      ['ledger FIFO', { SVC_LEDGER_PATH: fifo }, /ledger .*fifo is a named pipe/],
      ['ledger directory', { SVC_LEDGER_PATH: join(w.dir, 'adir') }, /ledger .*adir is a directory/],
      [
        'ledger symlink',
        { SVC_LEDGER_PATH: join(w.dir, 'link.ndjson') },
        /ledger .*link\.ndjson is a symbolic link/,
      ],
      [
        'rejects symlink',
        { SVC_REJECTS_PATH: join(w.dir, 'link.ndjson') },
        /rejects file .*is a symbolic link/,
      ],
      ['rejects FIFO', { SVC_REJECTS_PATH: fifo }, /rejects file .*is a named pipe/],
    ];
    const timings: Record<string, number> = {};
    for (const [name, env, what] of cases) {
      const { ms } = await refused(w, env, what);
      timings[name] = ms;
      // Nothing was locked or created: no owner file beside the ledger.
      expect(existsSync(`${env.SVC_LEDGER_PATH ?? w.ledger}.lock`), name).toBe(false);
    }
    // The owner file as a link to an unrelated file.
    const ledger2 = join(w.dir, 'two.ndjson');
    await symlink(victim, `${ledger2}.lock`);
    await refused(w, { SVC_LEDGER_PATH: ledger2 }, /lock owner file .*two\.ndjson\.lock is a symbolic link/);
    expect(existsSync(ledger2)).toBe(false);
    // The unrelated file behind every link is untouched, its mode too.
    expect(await readFile(victim, 'utf8')).toBe('do not touch\n');
    expect((await stat(victim)).mode & 0o777).toBe(0o644);
    report('state files: special files refused', { msPerRun: timings });
  });

  it('an existing 0644 ledger and rejects file are set to 0600 on open', async () => {
    const w = await workdir('sf-mode');
    await writeFile(w.ledger, '', { mode: 0o644 });
    await writeFile(w.rejects, '', { mode: 0o644 });
    await chmod(w.ledger, 0o644);
    await chmod(w.rejects, 0o644);
    const file = join(w.dir, 'in.ndjson');
    await writeNdjson(file, 5, 'mo');
    const r = await runCliHere(['send', ...FAST, file], { env: w.env(sim) });
    expect(r.code, r.stderr).toBe(0);
    expect((await stat(w.ledger)).mode & 0o777).toBe(0o600);
    expect((await stat(w.rejects)).mode & 0o777).toBe(0o600);
  });
});

describe('running from cron', () => {
  it('env -i, an unrelated folder, no ledger folder: works first time; the same run again skips everything', async () => {
    const w = await workdir('cron');
    const file = join(w.dir, 'export.ndjson');
    await writeNdjson(file, 120, 'cr');
    const cwd = join(w.dir, 'elsewhere');
    await mkdir(cwd);
    const run = () =>
      new Promise<CliResult>((resolve) => {
        const args = ['send', '--json', '--base-url', sim.url, file];
        let stdout = '';
        let stderr = '';
        const child = spawn('env', ['-i', 'PATH=/usr/bin:/bin', BIN, ...args], {
          cwd,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        child.stdout.on('data', (d: Buffer) => {
          stdout += d;
        });
        child.stderr.on('data', (d: Buffer) => {
          stderr += d;
        });
        child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
      });
    const r1 = await run();
    expect(r1.code, r1.stderr).toBe(0);
    const s1 = summary(r1);
    const ledger = join(cwd, 'ledger', 'transactions.ndjson');
    expect(s1).toMatchObject({
      read: 120,
      sent: 120,
      ledger,
      rejects: join(cwd, 'ledger', 'rejects.ndjson'),
    });
    expect((await stat(join(cwd, 'ledger'))).mode & 0o777).toBe(0o700);
    // The absolute ledger path is logged at the start.
    expect(r1.stderr).toContain(`"ledger":"${ledger}"`);
    const r2 = await run();
    expect(r2.code, r2.stderr).toBe(0);
    expect(summary(r2)).toMatchObject({ read: 120, sent: 0, skipped: 120 });
    expect(
      deliveryCounts(
        sim,
        range(120).map((i) => makeTx(i, 'cr').transactionId),
      ),
    ).toMatchObject({
      missing: 0,
      duplicated: 0,
    });
  });

  it('an absolute --ledger in folders that do not exist yet: created (0700), the summary names both files', async () => {
    const w = await workdir('cron-abs');
    const file = join(w.dir, 'in.ndjson');
    await writeNdjson(file, 5, 'ca');
    const ledger = join(w.dir, 'state', 'deep', 'ledger.ndjson');
    const rejects = join(w.dir, 'state', 'rej', 'rejects.ndjson');
    const r = await runCliHere(['send', ...FAST, '--ledger', ledger, '--rejects', rejects, file], {
      env: w.env(sim),
    });
    expect(r.code, r.stderr).toBe(0);
    expect(summary(r)).toMatchObject({ ledger, rejects, sent: 5 });
    expect((await stat(join(w.dir, 'state', 'deep'))).mode & 0o777).toBe(0o700);
    expect((await stat(join(w.dir, 'state', 'rej'))).mode & 0o777).toBe(0o700);
  });
});
