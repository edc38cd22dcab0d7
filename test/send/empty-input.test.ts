// "No records" is its own outcome: empty files, header-only CSV, empty standard input exit 4 with a warning
// unless --allow-empty; a rerun that skips everything is not empty; one empty input among others is named.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { beforeEach, describe, expect, it } from 'vitest';
import { BIN, runCliHere, summaryOf } from '../helpers/cli.ts';
import { useSimulator } from '../helpers/simulator.ts';
import { CANONICAL_COLUMNS, csvOf, makeTx, range } from '../helpers/transactions.ts';

const sim = useSimulator({ seed: 4 }, 'reset');
let dir: string;
const env = () => ({
  SVC_BASE_URL: sim.url,
  SVC_LEDGER_PATH: join(dir, 'ledger.ndjson'),
  SVC_REJECTS_PATH: join(dir, 'rejects.ndjson'),
});
const sends = () => sim.stats().requests.byPath['/v2/data/transactions'] ?? 0;
/** The JSON log lines of stderr with this event. */
const events = (stderr: string, event: string) =>
  stderr
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l))
    .filter((l) => l.event === event);

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-empty-'));
});

describe('send: an input without records', () => {
  it('a 0-byte CSV is "empty file": a warning, exit 4, nothing sent (not a missing-header error)', async () => {
    const file = join(dir, 'nightly.csv');
    await writeFile(file, '');
    const r = await runCliHere(['send', '--json', file], { env: env() });
    expect(r.code, r.stderr).toBe(4);
    expect(summaryOf(r)).toMatchObject({ read: 0, sent: 0, emptyInputs: [file] });
    expect(r.stderr).not.toMatch(/header lacks/);
    const warned = events(r.stderr, 'input.empty');
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatchObject({ level: 40, source: file, msg: `${file}: empty file` });
    expect(events(r.stderr, 'run.empty')).toHaveLength(1);
    expect(sends()).toBe(0);
  });

  it('a 0-byte .csv.gz and a 0-byte NDJSON file are empty files too', async () => {
    for (const name of ['nightly.csv.gz', 'nightly.ndjson']) {
      const file = join(dir, name);
      await writeFile(file, '');
      const r = await runCliHere(['send', '--json', file], { env: env() });
      expect(r.code, r.stderr).toBe(4);
      expect(events(r.stderr, 'input.empty')[0].msg).toBe(`${file}: empty file`);
    }
  });

  it('a header-only CSV (also gzipped) exits 4 with "only a header"', async () => {
    const header = `${CANONICAL_COLUMNS.join(',')}\n`;
    await writeFile(join(dir, 'h.csv'), header);
    await writeFile(join(dir, 'h.csv.gz'), gzipSync(header));
    for (const name of ['h.csv', 'h.csv.gz']) {
      const file = join(dir, name);
      const r = await runCliHere(['send', '--json', file], { env: env() });
      expect(r.code, r.stderr).toBe(4);
      expect(summaryOf(r)).toMatchObject({ read: 0, emptyInputs: [file] });
      expect(events(r.stderr, 'input.empty')[0].msg).toBe(`${file}: only a header, no records`);
    }
    expect(sends()).toBe(0);
  });

  it('empty standard input (a closed pipe, or </dev/null) exits 4', async () => {
    const piped = await runCliHere(['send', '--json'], { env: env(), input: '' });
    expect(piped.code, piped.stderr).toBe(4);
    expect(summaryOf(piped)).toMatchObject({ read: 0, emptyInputs: ['stdin'] });
    expect(events(piped.stderr, 'input.empty')[0].msg).toBe('stdin: empty input');
    // </dev/null exactly as a shell gives it. Not spawnSync: the simulator runs in this process, and send asks it
    // whether it answers before reading.
    const shell = await promisify(execFile)('sh', ['-c', `"${BIN}" send --json - < /dev/null`], {
      env: { ...process.env, SVC_LOG_LEVEL: 'warn', ...env() },
      encoding: 'utf8',
    }).then(
      (r) => ({ status: 0, ...r }),
      (e: { code: number; stdout: string; stderr: string }) => ({
        status: e.code,
        stdout: e.stdout,
        stderr: e.stderr,
      }),
    );
    expect(shell.status, shell.stderr).toBe(4);
    expect(JSON.parse(shell.stdout.trim())).toMatchObject({ read: 0, emptyInputs: ['stdin'] });
  });

  it('header-only CSV on standard input exits 4', async () => {
    const r = await runCliHere(['send', '--json', '--format', 'csv', '-'], {
      env: env(),
      input: `${CANONICAL_COLUMNS.join(',')}\n`,
    });
    expect(r.code, r.stderr).toBe(4);
    expect(events(r.stderr, 'input.empty')[0].msg).toBe('stdin: only a header, no records');
  });

  it('--allow-empty: the same inputs exit 0, the notice is info, not a warning', async () => {
    const file = join(dir, 'nightly.csv');
    await writeFile(file, '');
    const r = await runCliHere(['send', '--json', '--allow-empty', file], {
      env: { ...env(), SVC_LOG_LEVEL: 'info' },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(events(r.stderr, 'input.empty')[0]).toMatchObject({ level: 30 });
    expect(events(r.stderr, 'run.empty')).toHaveLength(0);
    const piped = await runCliHere(['send', '--allow-empty', '--json'], { env: env(), input: '' });
    expect(piped.code).toBe(0);
  });

  it('the human summary says why the exit is 4', async () => {
    const file = join(dir, 'nightly.csv');
    await writeFile(file, '');
    const r = await runCliHere(['send', file], { env: env() });
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/no records: the input was empty or only a header \(exit 4; --allow-empty/);
  });

  it('a rerun whose records were all skipped is not empty: exit 0', async () => {
    const file = join(dir, 'in.csv');
    await writeFile(file, csvOf(range(30).map((i) => makeTx(i, 'em'))));
    expect((await runCliHere(['send', '--json', file], { env: env() })).code).toBe(0);
    const rerun = await runCliHere(['send', '--json', file], { env: env() });
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(summaryOf(rerun)).toMatchObject({ read: 30, skipped: 30, sent: 0, emptyInputs: [] });
  });

  it('several inputs, one empty: the others are sent, the empty one is named, the exit is theirs', async () => {
    const good = join(dir, 'a.csv');
    const empty = join(dir, 'b.csv');
    await writeFile(good, csvOf(range(20).map((i) => makeTx(i, 'mx'))));
    await writeFile(empty, '');
    const r = await runCliHere(['send', '--json', empty, good], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(summaryOf(r)).toMatchObject({ read: 20, sent: 20, emptyInputs: [empty] });
    expect(events(r.stderr, 'input.empty')[0]).toMatchObject({ level: 40, source: empty });
    expect(sim.stats().transactions.distinct).toBe(20);
    const human = await runCliHere(['send', empty, good], { env: env() });
    expect(human.stderr).toContain(`no records in: ${empty}`);
    // Every input empty is exit 4 again.
    const both = await runCliHere(['send', '--json', empty, empty], { env: env() });
    expect(both.code).toBe(4);
    expect(await readFile(join(dir, 'ledger.ndjson'), 'utf8')).not.toContain('"failed"');
  });
});
