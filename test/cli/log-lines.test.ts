// Logs a collector can read: with stderr redirected to a file (no terminal), every line every command writes there
// is one JSON object — log lines, summaries, the one error line, commander's usage errors, map's rejects — on each
// command's success and failure paths; run.end and the --json summary carry the exit status; run.end's level
// follows it. `--log-format text` gives the readable lines instead.
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { BIN, collectOutput, ROOT, runCliHere } from '../helpers/cli.ts';
import { usePostgres } from '../helpers/postgres.ts';
import { useSimulator } from '../helpers/simulator.ts';

const sim = useSimulator({ seed: 5 }, 'none');
const pg = usePostgres();
let dir = '';
let n = 0;

interface FileRun {
  code: number | null;
  stdout: string;
  /** Every line of stderr, each parsed (a line that is not a JSON object fails the test with its text). */
  lines: Array<Record<string, unknown>>;
  raw: string;
}

/** Runs the CLI as a child with stderr to a file, as a service manager or cron would, then parses every line of it. */
async function runChild(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  input: string | Buffer = '',
): Promise<FileRun> {
  const errFile = join(dir, `stderr-${++n}.log`);
  const fd = openSync(errFile, 'w');
  const r = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
    const child = spawn(BIN, args, {
      cwd: dir,
      env: { ...process.env, SVC_LOG_LEVEL: 'info', SVC_BASE_URL: sim.url, ...env },
      stdio: ['pipe', 'pipe', fd],
    });
    const output = collectOutput(child);
    child.stdin!.on('error', () => {}); // EPIPE from a run that exited before reading its input
    child.stdin!.end(input);
    void output.closed.then(resolve);
  });
  closeSync(fd);
  return { ...r, ...parsed(args, await readFile(errFile, 'utf8')) };
}

/**
 * The same run in this process (main(argv, io), in the test's folder): its stderr is a stream that is not a
 * terminal, as a file is, so the lines are the ones a file gets; the child above checks that once for real.
 */
async function run(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  input: string | Buffer = '',
): Promise<FileRun> {
  const here = process.cwd();
  process.chdir(dir);
  try {
    const r = await runCliHere(args, {
      // The child's environment: no one-try health check unless a test sets it.
      env: {
        SVC_LOG_LEVEL: 'info',
        SVC_BASE_URL: sim.url,
        SVC_SEND_HEALTH_CHECK_WINDOW_MS: undefined,
        ...env,
      },
      input,
    });
    return { code: r.code, stdout: r.stdout, ...parsed(args, r.rawStderr ?? '') };
  } finally {
    process.chdir(here);
  }
}

/** Every line of stderr, each parsed (a line that is not a JSON object fails the test with its text). */
function parsed(args: string[], raw: string): { lines: Array<Record<string, unknown>>; raw: string } {
  const lines = raw
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => {
      let o: unknown;
      try {
        o = JSON.parse(l);
      } catch {
        throw new Error(`svc-ingest ${args.join(' ')}: a stderr line is not JSON: ${l}\n--- stderr\n${raw}`);
      }
      expect(o, l).toBeTypeOf('object');
      expect(o, l).toMatchObject({
        level: expect.any(Number),
        time: expect.any(String),
        msg: expect.any(String),
      });
      return o as Record<string, unknown>;
    });
  return { lines, raw };
}

const byEvent = (r: FileRun, event: string) => r.lines.filter((l) => l.event === event);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-log-lines-'));
  const canonical = (await readFile(join(ROOT, 'samples/canonical.csv'), 'utf8')).split('\n');
  // The header and the first four records, all valid.
  await writeFile(join(dir, 'good.csv'), `${canonical.slice(0, 5).join('\n')}\n`);
  await writeFile(join(dir, 'empty.csv'), `${canonical[0]}\n`);
});

describe('every stderr line is one JSON object off a terminal', () => {
  it('send: success (exit 0), rejects (exit 2), --json, empty (exit 4), unreadable (exit 1), a usage error', async () => {
    const ok = await runChild(['send', 'good.csv']);
    expect(ok.code).toBe(0);
    expect(byEvent(ok, 'run.end')).toMatchObject([{ level: 30, exitStatus: 0, sent: 4 }]);
    expect(byEvent(ok, 'run.summary')[0]).toMatchObject({ level: 30, exitStatus: 0 });
    expect(byEvent(ok, 'run.summary')[0]!.msg).toMatch(/^read 4, valid 4, rejected 0, skipped 0, sent 4/);

    const rejects = await run(['send', '--mapping', 'northwind-csv', join(ROOT, 'samples/northwind.csv')]);
    expect(rejects.code).toBe(2);
    expect(byEvent(rejects, 'run.end')).toMatchObject([{ level: 40, exitStatus: 2, rejected: 3 }]);
    expect(byEvent(rejects, 'run.summary').map((l) => l.msg)).toContainEqual(
      expect.stringMatching(/^ledger: /),
    );

    const json = await run([
      'send',
      '--json',
      '--ledger',
      'other.ndjson',
      join(ROOT, 'samples/canonical.csv'),
    ]);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout)).toMatchObject({ read: 22, rejected: 4, exitStatus: 2 });
    expect(byEvent(json, 'run.end')).toMatchObject([{ level: 40, exitStatus: 2 }]);

    const empty = await run(['send', 'empty.csv']);
    expect(empty.code).toBe(4);
    expect(byEvent(empty, 'run.end')).toMatchObject([{ level: 40, exitStatus: 4 }]);
    expect(empty.lines.map((l) => l.msg)).toContainEqual(expect.stringMatching(/^no records: /));

    const missing = await run(['send', 'nope.csv']);
    expect(missing.code).toBe(1);
    expect(byEvent(missing, 'cli.error')).toMatchObject([
      {
        level: 50,
        code: 'INPUT_UNREADABLE',
        exitStatus: 1,
        msg: 'svc-ingest: INPUT_UNREADABLE: cannot read nope.csv: no such file',
      },
    ]);

    const usage = await run(['send', '--no-such-flag']);
    expect(usage.code).toBe(1);
    expect(usage.lines).toMatchObject([{ level: 50, event: 'cli.error', code: 'USAGE_INVALID' }]);

    const piped = await run(
      ['send', '--dry-run', '--format', 'csv', '-'],
      {},
      await readFile(join(dir, 'good.csv')),
    );
    expect(piped.code).toBe(0);
    expect(byEvent(piped, 'run.end')).toMatchObject([{ exitStatus: 0, dryRun: true }]);
  });

  it('the service down: exit 5, the error line is JSON', async () => {
    const down = await run(['send', 'good.csv', '--ledger', 'down.ndjson'], {
      SVC_BASE_URL: 'http://127.0.0.1:9',
      SVC_SEND_HEALTH_CHECK_WINDOW_MS: '300',
    });
    expect(down.code).toBe(5);
    expect(down.lines.at(-1)).toMatchObject({ level: 50, exitStatus: 5 });
  });

  it('map, mapping check, mapping draft, mappings', async () => {
    const map = await run(['map', '--mapping', 'northwind-csv', join(ROOT, 'samples/northwind.csv')]);
    expect(map.code).toBe(2);
    expect(byEvent(map, 'map.reject')).toHaveLength(3);
    expect(byEvent(map, 'map.summary')).toMatchObject([{ level: 40, read: 30, rejected: 3, exitStatus: 2 }]);
    const check = await run(['mapping', 'check', 'northwind-csv', join(ROOT, 'samples/northwind.csv')]);
    expect(check.code).toBe(0);
    const bad = await run(['mapping', 'check', 'no-such-profile']);
    expect(bad.code).toBe(1);
    expect(byEvent(bad, 'cli.error')).toHaveLength(1);
    const draft = await run(['mapping', 'draft', 'good.csv']);
    expect(draft.code).toBe(0);
    expect((await run(['mappings'])).code).toBe(0);
  });

  it('ledger status, failed and find; a missing ledger', async () => {
    expect((await run(['ledger', 'status'])).code).toBe(0);
    expect((await run(['ledger', 'failed'])).code).toBe(0);
    expect((await run(['ledger', 'find', 'can-csv-0001'])).code).toBe(0);
    const missing = await run(['ledger', 'status', '--ledger', 'nope.ndjson']);
    expect(missing.code).toBe(1);
    expect(byEvent(missing, 'cli.error')).toMatchObject([{ code: 'LEDGER_READ', exitStatus: 1 }]);
  });

  it('redemptions, stores, tickets, reconcile, and a command group without its sub-command', async () => {
    expect((await run(['redemptions', '--customer', 'cust-0001'])).code).toBe(0);
    const stores = await run(['stores', '--ad', '1', '--radius', '10']);
    expect(stores.code).toBe(1);
    expect(byEvent(stores, 'cli.error')).toHaveLength(1);
    const ticket = await run(['tickets', 'get', 'nope']);
    expect(ticket.code).toBe(1);
    const rec = await run(['reconcile', '--customer', 'cust-0001']);
    expect([0, 2, 3]).toContain(rec.code);
    const group = await run(['tickets']);
    expect(group.code).toBe(1);
    expect(byEvent(group, 'cli.usage').length).toBeGreaterThan(3);
  });

  it('trace, tickets status, a refused tickets create, reconcile by transaction', async () => {
    const verdicts = [0, 2, 3, 4, 6, 7, 8, 9];
    const trace = await run(['trace', 'can-csv-0001', 'never-0001', '--customer', 'cust-0001']);
    expect(verdicts, trace.raw).toContain(trace.code);
    const missing = await run(['trace', 'can-csv-0001', '--ledger', 'nope.ndjson']);
    expect(missing.code).toBe(1);
    expect(byEvent(missing, 'cli.error')).toHaveLength(1);
    expect((await run(['tickets', 'status'])).code).toBe(0);
    const refused = await run([
      'tickets',
      'create',
      '--ticket-id',
      'T-9',
      '--customer',
      'cust-0001',
      '--offer',
      '100001',
      '--transaction',
      'tx-abc',
      '--description',
      'not credited',
    ]);
    expect(refused.code).toBe(1);
    expect(byEvent(refused, 'cli.error')).toHaveLength(1);
    const byTx = await run(['reconcile', '--transaction', 'never-0001', '--customer', 'cust-0001']);
    expect(verdicts, byTx.raw).toContain(byTx.code);
  });

  it('the PostgreSQL ledger: ledger migrate, backfill plan, work and status; a server that is not there', async () => {
    const url = await pg.createDatabase();
    expect((await run(['ledger', 'migrate', '--ledger', url])).code).toBe(0);
    const plan = await run(['backfill', 'plan', '--ledger', url, join(dir, 'good.csv')]);
    expect(plan.code).toBe(0);
    const work = await run(['backfill', 'work', '--ledger', url, '--worker-id', 'w1']);
    expect(work.code).toBe(0);
    expect(byEvent(work, 'run.end')).toMatchObject([{ level: 30, exitStatus: 0 }]);
    expect((await run(['backfill', 'status', '--ledger', url])).code).toBe(0);
    expect((await run(['ledger', 'status', '--ledger', url])).code).toBe(0);
    const down = await run(['backfill', 'status', '--ledger', 'postgres://svc@127.0.0.1:1/x']);
    expect(down.code).toBe(1);
    expect(byEvent(down, 'cli.error')).toMatchObject([{ code: 'LEDGER_READ', exitStatus: 1 }]);
  });

  it('simulate: its lines until SIGTERM', async () => {
    const errFile = join(dir, 'simulate.log');
    const fd = openSync(errFile, 'w');
    const child = spawn(BIN, ['simulate', '--port', '0'], {
      cwd: dir,
      env: { ...process.env, SVC_LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', fd],
    });
    await new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()));
    child.kill('SIGTERM');
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    closeSync(fd);
    expect(code).toBe(0);
    for (const line of (await readFile(errFile, 'utf8')).split('\n').filter(Boolean))
      expect(() => JSON.parse(line), line).not.toThrow();
  });

  it('the launcher without a supported Node: one JSON line', async () => {
    const root = await mkdtemp(join(tmpdir(), 'svc-no-node-'));
    await mkdir(join(root, 'src/bin'), { recursive: true });
    await copyFile(BIN, join(root, 'src/bin/svc-ingest'));
    await writeFile(join(root, 'node'), '#!/bin/sh\necho 20.20.2\n', { mode: 0o755 });
    const errFile = join(dir, 'launcher.log');
    const fd = openSync(errFile, 'w');
    const code = await new Promise<number | null>((resolve) =>
      spawn(join(root, 'src/bin/svc-ingest'), ['--help'], {
        env: { PATH: `${root}:/usr/bin:/bin` },
        stdio: ['ignore', 'ignore', fd],
      }).on('close', resolve),
    );
    closeSync(fd);
    expect(code).toBe(1);
    const lines = (await readFile(errFile, 'utf8')).trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 50, code: 'NODE_UNSUPPORTED', exitStatus: 1 });
  });

  it('a bad SVC_LOG_FORMAT is a JSON error line; --log-format text gives the readable lines', async () => {
    const bad = await run(['mappings'], { SVC_LOG_FORMAT: 'xml' });
    expect(bad.code).toBe(1);
    expect(bad.lines).toMatchObject([{ event: 'cli.error', code: 'CONFIG_INVALID' }]);
    const errFile = join(dir, 'text.log');
    const fd = openSync(errFile, 'w');
    const code = await new Promise<number | null>((resolve) =>
      spawn(BIN, ['send', '--log-format', 'text', 'nope.csv'], {
        cwd: dir,
        stdio: ['ignore', 'ignore', fd],
      }).on('close', resolve),
    );
    closeSync(fd);
    expect(code).toBe(1);
    expect(await readFile(errFile, 'utf8')).toBe(
      'svc-ingest: INPUT_UNREADABLE: cannot read nope.csv: no such file\n',
    );
  });
});
