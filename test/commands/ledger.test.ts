// `svc-ingest ledger status|failed|find` through the real CLI, on ledgers written by real `send` runs against
// the simulator (poison ids make failed batches; later runs acknowledge them).
import { readdirSync } from 'node:fs';
import { appendFile, copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { writeAckedLedger } from '../bench/gen.ts';
import { type CliResult, runCliHere, startCli, summaryOf, waitFor } from '../helpers/cli.ts';
import { NO_FAULTS, useSimulator } from '../helpers/simulator.ts';
import { csvOf, makeTx, range } from '../helpers/transactions.ts';

const sim = useSimulator({ seed: 21 }, 'none');
const FAST = ['--json', '--retry-base-ms', '1', '--retry-max-ms', '5', '--max-retries', '1'];
const id = (i: number, prefix = 'tx') => makeTx(i, prefix).transactionId;

let dir: string;
let ledger: string;
let fileA: string;
let fileB: string;
/** A second ledger: one run of B. */
let other: string;
let otherRun: string;
const runIds: string[] = [];
/** Copies of the ledger after each run of A. */
const after: string[] = [];

interface Line {
  status: string;
  batchId: string;
  requestId: string | null;
  transactionIds: string[];
  runId: string;
  error?: string;
  ts: string;
  lines: [number, number];
}
const linesOf = async (path: string): Promise<Line[]> =>
  (await readFile(path, 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
const ledgerCli = (args: string[], env: Record<string, string> = {}) =>
  runCliHere(['ledger', ...args], { env: { SVC_LEDGER_PATH: join(dir, 'unused.ndjson'), ...env } });
const ndjson = (r: CliResult) =>
  r.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));

async function send(file: string, ledgerPath: string, poison: string[]): Promise<Record<string, unknown>> {
  sim.setFaults({ ...NO_FAULTS, poison });
  const r = await runCliHere(
    ['send', ...FAST, '--ledger', ledgerPath, '--rejects', join(dir, 'rejects.ndjson'), file],
    {
      env: { SVC_BASE_URL: sim.url },
    },
  );
  return summaryOf(r);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-ledgercmd-'));
  ledger = join(dir, 'transactions.ndjson');
  fileA = join(dir, 'a.csv');
  fileB = join(dir, 'b.csv');
  await writeFile(fileA, csvOf(range(120).map((i) => makeTx(i))));
  await writeFile(fileB, csvOf(range(30).map((i) => makeTx(i, 'bx'))));
  // Run 1: two poison ids fail alone. Run 2: one of them is let through, the other fails again.
  // Run 3: everything is acknowledged.
  for (const poison of [[id(7), id(42)], [id(42)], []]) {
    const s = await send(fileA, ledger, poison);
    runIds.push(String(s.runId));
    const copy = join(dir, `after-${after.length + 1}.ndjson`);
    await copyFile(ledger, copy);
    after.push(copy);
  }
  other = join(dir, 'other.ndjson');
  const sb = await send(fileB, other, []);
  expect(sb).toMatchObject({ sent: 30, failed: 0 });
  otherRun = String(sb.runId);
  sim.setFaults(NO_FAULTS);
});

describe('ledger status', () => {
  it('after a run with two failed ids: counts equal the ledger, two outstanding, the run summarised', async () => {
    const r = await ledgerCli(['status', '--json', '--ledger', after[0] as string]);
    expect(r.code, r.stderr).toBe(0);
    const s = JSON.parse(r.stdout);
    const lines = await linesOf(after[0] as string);
    const acked = lines.filter((l) => l.status === 'acked');
    const failed = lines.filter((l) => l.status === 'failed');
    expect(failed.map((l) => l.transactionIds)).toEqual([[id(7)], [id(42)]]);
    expect(s.ledgers).toEqual([{ path: after[0], lines: lines.length, badLines: 0, badLineNumbers: [] }]);
    expect(s.batches).toEqual({ acked: acked.length, failed: 2, outstanding: 2 });
    expect(s.ids).toEqual({ acked: 118, ackedDistinct: 118, failed: 2, outstanding: 2 });
    expect(s.runs).toHaveLength(1);
    const ts = lines.map((l) => l.ts).sort();
    expect(s.lastRun).toEqual({
      runId: runIds[0],
      firstTs: ts[0],
      lastTs: ts[ts.length - 1],
      batches: { acked: acked.length, failed: 2 },
      ids: { acked: 118, failed: 2, outstanding: 2 },
      sources: [fileA],
      destination: sim.url,
    });
  });

  it('after three runs: failures acknowledged since are no longer outstanding; the last run is the third', async () => {
    const r2 = JSON.parse((await ledgerCli(['status', '--json', '--ledger', after[1] as string])).stdout);
    expect(r2.ids).toEqual({ acked: 119, ackedDistinct: 119, failed: 3, outstanding: 1 });
    expect(r2.batches).toMatchObject({ failed: 3, outstanding: 1 });
    expect(r2.runs.map((x: { runId: string; ids: object }) => [x.runId, x.ids])).toEqual([
      [runIds[0], { acked: 118, failed: 2, outstanding: 0 }],
      [runIds[1], { acked: 1, failed: 1, outstanding: 1 }],
    ]);

    const r = await ledgerCli(['status', '--json', '--ledger', ledger]);
    const s = JSON.parse(r.stdout);
    expect(s.ids).toEqual({ acked: 120, ackedDistinct: 120, failed: 3, outstanding: 0 });
    expect(s.batches).toMatchObject({ failed: 3, outstanding: 0 });
    expect(s.runs.map((x: { runId: string }) => x.runId)).toEqual(runIds);
    expect(s.lastRun).toMatchObject({
      runId: runIds[2],
      batches: { acked: 1, failed: 0 },
      ids: { acked: 1, failed: 0, outstanding: 0 },
    });
  });

  it('prints a readable status by default, and reads the configured ledger without --ledger', async () => {
    const r = await ledgerCli(['status'], { SVC_LEDGER_PATH: after[0] as string });
    expect(r.code, r.stderr).toBe(0);
    const lines = await linesOf(after[0] as string);
    expect(r.stdout).toContain(`ledger ${after[0]}: ${lines.length} line(s), none unreadable`);
    expect(r.stdout).toContain(
      'transaction ids: 118 acknowledged (118 distinct), 2 in failed batches, 2 outstanding',
    );
    expect(r.stdout).toMatch(new RegExp(`last run ${runIds[0]}: .*ids 118 acked, 2 failed, 2 outstanding`));
  });

  it('counts a torn line (and names its number), and reads two ledgers as one', async () => {
    const torn = join(dir, 'torn.ndjson');
    await copyFile(after[0] as string, torn);
    await appendFile(torn, '{"ts":"2026-11-2');
    const r = await ledgerCli(['status', '--json', '--ledger', torn, '--ledger', other]);
    expect(r.code, r.stderr).toBe(0);
    const s = JSON.parse(r.stdout);
    const n = (await linesOf(after[0] as string)).length;
    expect(s.ledgers).toEqual([
      { path: torn, lines: n + 1, badLines: 1, badLineNumbers: [n + 1] },
      { path: other, lines: 1, badLines: 0, badLineNumbers: [] },
    ]);
    expect(s.badLines).toBe(1);
    expect(s.ids).toEqual({ acked: 148, ackedDistinct: 148, failed: 2, outstanding: 2 });
    expect(s.runs.map((x: { runId: string }) => x.runId)).toEqual([runIds[0], otherRun]);
    expect(s.lastRun.runId).toBe(otherRun);
    expect(r.stderr).toContain('ledger.bad_lines');
  });
});

describe('ledger failed', () => {
  it('lists each outstanding id once as NDJSON with its last failure; exit 3 while any is outstanding', async () => {
    const r = await ledgerCli(['failed', '--json', '--ledger', after[0] as string]);
    expect(r.code, r.stderr).toBe(3);
    const out = ndjson(r);
    const failed = (await linesOf(after[0] as string)).filter((l) => l.status === 'failed');
    expect(out.map((f) => f.transactionId)).toEqual([id(7), id(42)]);
    out.forEach((f, k) => {
      const l = failed[k] as Line;
      expect(f).toMatchObject({
        failures: 1,
        batchId: l.batchId,
        runId: runIds[0],
        source: fileA,
        error: l.error,
        httpStatus: 500,
        ledger: after[0],
      });
    });
    expect(out[0].lines).toEqual([9, 9]); // record 7 is on line 9 of the CSV (header is line 1)
    expect(out[0].error).toMatch(/HTTP 500/);

    const r2 = await ledgerCli(['failed', '--json', '--ledger', after[1] as string]);
    expect(r2.code).toBe(3);
    expect(ndjson(r2).map((f) => [f.transactionId, f.failures, f.runId])).toEqual([[id(42), 2, runIds[1]]]);
  });

  it('nothing outstanding once everything is acknowledged: exit 0, readable note', async () => {
    const json = await ledgerCli(['failed', '--json', '--ledger', ledger]);
    expect([json.code, json.stdout]).toEqual([0, '']);
    const text = await ledgerCli(['failed', '--ledger', ledger]);
    expect(text.code).toBe(0);
    expect(text.stdout.trim()).toBe(
      'no outstanding failed ids (none failed, or each was acknowledged since)',
    );
    const one = await ledgerCli(['failed', '--ledger', after[1] as string]);
    expect(one.stdout).toContain(`${id(42)}  failed 2x, last `);
    expect(one.stdout).toContain('1 outstanding failed id(s) in 1 batch(es)');
  });
});

describe('ledger find', () => {
  it('names every line holding each id (failed, then acked), with batch, requestId and ledger line', async () => {
    const r = await ledgerCli(['find', '--json', '--ledger', ledger, id(7), id(8), 'no-such-id']);
    expect(r.code).toBe(2);
    const lines = await linesOf(ledger);
    const holding = (tx: string) =>
      lines.map((l, k) => ({ l, n: k + 1 })).filter(({ l }) => l.transactionIds.includes(tx));
    const out = ndjson(r);
    const want = [...holding(id(7)), ...holding(id(8))]
      .sort((a, b) => a.n - b.n)
      .map(({ l, n }) => ({
        transactionId: l.transactionIds.includes(id(7)) ? id(7) : id(8),
        status: l.status,
        batchId: l.batchId,
        requestId: l.requestId,
        runId: l.runId,
        ledgerLine: n,
      }));
    expect(want.filter((w) => w.transactionId === id(7)).map((w) => w.status)).toEqual(['failed', 'acked']);
    expect(out.slice(0, -1)).toMatchObject(want);
    expect(out.slice(0, -1).every((o) => o.ledger === ledger && o.source === fileA)).toBe(true);
    expect(out[out.length - 1]).toEqual({ transactionId: 'no-such-id', status: 'absent' });
  });

  it('reads every --ledger; exit 0 when each id is found; readable lines by default', async () => {
    const r = await ledgerCli([
      'find',
      '--ledger',
      after[0] as string,
      '--ledger',
      other,
      id(3),
      id(4, 'bx'),
    ]);
    expect(r.code, r.stderr).toBe(0);
    const out = r.stdout.trim().split('\n');
    expect(out).toHaveLength(2);
    // A readable line is masked whole: a UUID whose digit groups form a Luhn-valid window shows some as '*'.
    expect(out[0]).toMatch(
      new RegExp(`^${id(3)}  acked   \\S+  batch \\S+ \\(run ${runIds[0]}\\)  requestId [0-9a-f*-]{36}`),
    );
    expect(out[0]).toContain(`[${after[0]}:`);
    expect(out[1]).toMatch(new RegExp(`^${id(4, 'bx')}  acked .*\\[${other}:1\\]$`));
  });
});

describe('ledger paths', () => {
  it('a missing ledger, a directory: exit 1 with one line naming the path; nothing on stdout', async () => {
    const missing = join(dir, 'typo.ndjson');
    for (const sub of ['status', 'failed', 'find']) {
      const args = sub === 'find' ? [sub, 'x'] : [sub];
      const r = await ledgerCli([...args, '--ledger', ledger, '--ledger', missing]);
      expect(r.code).toBe(1);
      expect(r.stderr.trim()).toBe(`svc-ingest: LEDGER_READ: ledger ${missing}: no such file`);
      expect(r.stdout).toBe('');
    }
    await mkdir(join(dir, 'a-dir'), { recursive: true });
    const d = await ledgerCli(['status', '--ledger', join(dir, 'a-dir')]);
    expect(d.code).toBe(1);
    expect(d.stderr.trim()).toBe(
      `svc-ingest: LEDGER_PATH_INVALID: ledger ${join(dir, 'a-dir')} is a directory; name a regular file, or a path where one can be created`,
    );
    const def = await ledgerCli(['status']);
    expect(def.code).toBe(1);
    expect(def.stderr).toContain(`ledger ${join(dir, 'unused.ndjson')}: no such file`);
  });
});

describe('ledger status on a ledger whose index spills to disk', () => {
  it('SIGTERM while it loads: exit 143 and its temporary index files are gone', async () => {
    // 5M acked ids: more than one sorted run (4M slots) of the index, so a folder is made in TMPDIR mid-read.
    const big = join(dir, 'big.ndjson');
    await writeAckedLedger(big, 5_000_000);
    const tmp = join(dir, 'tmp');
    await mkdir(tmp);
    try {
      const run = startCli(['ledger', 'status', '--ledger', big], { env: { TMPDIR: tmp } });
      await waitFor(() => readdirSync(tmp).length > 0, run.child, 60_000);
      run.child.kill('SIGTERM');
      const r = await run.done;
      expect(r.code, r.stderr).toBe(143);
      expect(readdirSync(tmp)).toEqual([]);
    } finally {
      await rm(big, { force: true });
    }
  });
});

describe('batches and inputs', () => {
  it('a batch never spans two inputs: each ledger line names one file and its own line range, and find points at the right file', async () => {
    const d = await mkdtemp(join(tmpdir(), 'svc-spans-'));
    try {
      const small = join(d, 'small.csv');
      const big = join(d, 'big.csv');
      await writeFile(small, csvOf(range(18, 9_000).map((i) => makeTx(i, 'sp'))));
      await writeFile(big, csvOf(range(70, 9_100).map((i) => makeTx(i, 'sp'))));
      const l = join(d, 'ledger.ndjson');
      sim.setFaults(NO_FAULTS);
      const r = await runCliHere(
        ['send', ...FAST, '--ledger', l, '--rejects', join(d, 'rejects.ndjson'), small, big],
        { env: { SVC_BASE_URL: sim.url } },
      );
      expect(r.code, r.stderr).toBe(0);
      expect(summaryOf(r)).toMatchObject({ read: 88, sent: 88 });
      const got = (await linesOf(l)).map((x) => ({
        source: (x as unknown as { source: string }).source,
        lines: x.lines,
        n: x.transactionIds.length,
      }));
      // 18 + 70 records: 18 | 50 + 20, never 50 + 38.
      expect(got).toEqual([
        { source: small, lines: [2, 19], n: 18 },
        { source: big, lines: [2, 51], n: 50 },
        { source: big, lines: [52, 71], n: 20 },
      ]);
      const f = await ledgerCli(['find', '--json', '--ledger', l, makeTx(9_100, 'sp').transactionId]);
      expect(f.code, f.stderr).toBe(0);
      expect(ndjson(f)[0]).toMatchObject({ status: 'acked', source: big });
    } finally {
      await rm(d, { recursive: true, force: true });
    }
  });
});
