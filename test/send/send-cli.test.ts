import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { beforeEach, describe, expect, it } from 'vitest';
import { runCliHere, startCli, summaryOf, waitFor } from '../helpers/cli.ts';
import { expectHeldOnceStarted, tracedNode } from '../helpers/heap-trace.ts';
import { useSimulator } from '../helpers/simulator.ts';
import { csvOf, makeTx, ndjsonOf, range } from '../helpers/transactions.ts';

const sim = useSimulator({ seed: 11 }, 'reset');
let dir: string;
const env = () => ({
  SVC_BASE_URL: sim.url,
  SVC_LEDGER_PATH: join(dir, 'ledger.ndjson'),
  SVC_REJECTS_PATH: join(dir, 'rejects.ndjson'),
});
const fast = ['--json', '--retry-base-ms', '1', '--retry-max-ms', '20'];
const ledgerLines = async () =>
  (await readFile(join(dir, 'ledger.ndjson'), 'utf8'))
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
const rejectLines = async () =>
  (await readFile(join(dir, 'rejects.ndjson'), 'utf8').catch(() => ''))
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-send-'));
});

const sends = () => sim.stats().requests.byPath['/v2/data/transactions'] ?? 0;

describe('send: the main job, end to end through the real CLI', () => {
  it('sends a canonical CSV in batches of 50, writes a ledger with requestIds, exits 0', async () => {
    const file = join(dir, 'in.csv');
    await writeFile(file, csvOf(range(120).map((i) => makeTx(i))));
    const r = await runCliHere(['send', ...fast, file], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(summaryOf(r)).toMatchObject({
      read: 120,
      valid: 120,
      rejected: 0,
      skipped: 0,
      sent: 120,
      failed: 0,
      batches: 3,
      failedBatches: 0,
      retries: 0,
    });
    expect(sim.stats().transactions).toMatchObject({ distinct: 120, duplicates: 0 });
    expect(sim.stats().largestBatch).toBe(50);
    const lines = await ledgerLines();
    expect(lines.map((l) => l.transactionIds.length).sort()).toEqual([20, 50, 50]);
    for (const l of lines) {
      expect(l).toMatchObject({ status: 'acked', attempts: 1, httpStatus: 200 });
      expect(l.requestId).toMatch(/^[0-9a-f-]{36}$/);
    }
    expect((await stat(join(dir, 'ledger.ndjson'))).mode & 0o777).toBe(0o600);
    expect(r.stdout.trim().split('\n')).toHaveLength(1);
  });

  it('resumes: a second run sends nothing, counts everything skipped, exits 0', async () => {
    const file = join(dir, 'in.csv');
    await writeFile(file, csvOf(range(75).map((i) => makeTx(i))));
    expect((await runCliHere(['send', ...fast, file], { env: env() })).code).toBe(0);
    const before = sends();
    const r = await runCliHere(['send', ...fast, file], { env: env() });
    expect(r.code).toBe(0);
    expect(summaryOf(r)).toMatchObject({ read: 75, skipped: 75, sent: 0, batches: 0 });
    expect(sends()).toBe(before);
    const again = await runCliHere(['send', ...fast, '--no-resume', file], { env: env() });
    expect(summaryOf(again)).toMatchObject({ sent: 75, skipped: 0 });
    expect(sim.stats().transactions.duplicates).toBe(75);
  });

  it('SVC_INGEST_HEAP=small: the launcher gives Node the small heap; a send and its rerun go as usual', async () => {
    // The launcher execs Node in its own place: the process's command line is Node's, flags included.
    const flags = ['--min-semi-space-size=2', '--max-semi-space-size=2'];
    const txs = range(120).map((i) => makeTx(i, 'heap'));
    const heapEnv = { ...env(), SVC_INGEST_HEAP: 'small' };
    for (const round of [1, 2]) {
      const run = startCli(['send', ...fast, '--format', 'ndjson', '-'], {
        env: heapEnv,
        keepStdinOpen: true,
      });
      const cmdline = () => readFileSync(`/proc/${run.child.pid}/cmdline`, 'utf8').split('\0');
      await waitFor(() => cmdline().some((a) => /\/cli\/main\.(ts|cjs)$/.test(a)), run.child);
      expect(cmdline().filter((a) => /^--(min-semi-space|max-semi-space|heap-growing)/.test(a))).toEqual(
        flags,
      );
      run.child.stdin!.end(ndjsonOf(txs));
      const r = await run.done;
      expect(r.code, r.stderr).toBe(0);
      expect(summaryOf(r)).toMatchObject(
        round === 1 ? { read: 120, sent: 120, skipped: 0 } : { read: 120, sent: 0, skipped: 120 },
      );
    }
    expect(sim.stats().transactions.duplicates).toBe(0);
  });

  it("holds V8's old generation to twice its live size once its records start (V8's own trace of its collections)", async () => {
    // The CLI sets it at run time, once a send's records start (src/runtime/heap-growth.ts; on Node's command line the flag
    // would cost Node's code cache at every start): the collections of the start keep V8's factor.
    const input = ndjsonOf(range(1000).map((i) => makeTx(i, 'growth')));
    const r = await startCli(['send', ...fast, '--format', 'ndjson', '-'], {
      env: { ...env(), SVC_INGEST_NODE: await tracedNode(dir) },
      input,
    }).done;
    expect(r.code, r.stderr).toBe(0);
    expect(summaryOf(r)).toMatchObject({ read: 1000, sent: 1000 });
    expectHeldOnceStarted(r.stdout);
  });

  it('reads NDJSON from standard input with --format, and sniffs it without', async () => {
    const input = ndjsonOf(range(30).map((i) => makeTx(i, 'in')));
    const r = await runCliHere(['send', ...fast, '--format', 'ndjson', '-'], { env: env(), input });
    expect(r.code, r.stderr).toBe(0);
    expect(summaryOf(r)).toMatchObject({ read: 30, sent: 30 });
    const sniffed = await runCliHere(['send', ...fast, '--no-resume'], { env: env(), input });
    expect(summaryOf(sniffed)).toMatchObject({ read: 30, sent: 30 });
  });

  it('reads .gz files and several files in one run, in order', async () => {
    await writeFile(join(dir, 'a.csv.gz'), gzipSync(csvOf(range(40).map((i) => makeTx(i, 'a')))));
    await writeFile(join(dir, 'b.ndjson'), ndjsonOf(range(25).map((i) => makeTx(i, 'b'))));
    await writeFile(join(dir, 'c.jsonl.gz'), gzipSync(ndjsonOf(range(10).map((i) => makeTx(i, 'c')))));
    const r = await runCliHere(
      ['send', ...fast, join(dir, 'a.csv.gz'), join(dir, 'b.ndjson'), join(dir, 'c.jsonl.gz')],
      { env: env() },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(summaryOf(r)).toMatchObject({ read: 75, sent: 75 });
    expect(sim.deliveries().get('c-00000009')).toBe(1);
  });

  it('rejects invalid records with source, line and every error, sends the rest, exits 2', async () => {
    const txs = range(10).map((i) => makeTx(i, 'rj')) as unknown as Array<Record<string, unknown>>;
    txs[2]!.postedAmount = '12.50';
    txs[2]!.paymentNetworkMCC = '58';
    txs[6]!.paymentNetworkMerchantCountryCode = 'USA';
    txs[8]!.transactionId = 'rj-00000001';
    const file = join(dir, 'in.csv');
    await writeFile(file, csvOf(txs as never));
    const r = await runCliHere(['send', ...fast, file], { env: env() });
    expect(r.code).toBe(2);
    expect(summaryOf(r)).toMatchObject({ read: 10, valid: 7, rejected: 3, sent: 7 });
    const rj = await rejectLines();
    expect(rj.map((l) => l.line)).toEqual([4, 8, 10]);
    expect(rj[0].source).toBe(file);
    expect(rj[0].errors.map((e: { field: string }) => e.field).sort()).toEqual([
      'paymentNetworkMCC',
      'postedAmount',
    ]);
    expect(rj[2].errors[0].field).toBe('transactionId');
    expect(rj[2].errors[0].message).toMatch(/duplicate/);
    expect(sim.deliveries().get('rj-00000001')).toBe(1);
  });

  it('retries 500s and delivers every valid record exactly once (20% injected failures)', async () => {
    sim.setFaults({ failRate: 0.2 });
    const file = join(dir, 'in.ndjson');
    await writeFile(file, ndjsonOf(range(2000).map((i) => makeTx(i, 'fr'))));
    const r = await runCliHere(['send', ...fast, '--max-retries', '10', file], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    const s = summaryOf(r);
    expect(s).toMatchObject({ read: 2000, sent: 2000, failed: 0, batches: 40 });
    expect(sim.stats().transactions).toMatchObject({ distinct: 2000, duplicates: 0 });
    expect(sends()).toBe(40 + (s.retries as number));
    expect(s.retries as number).toBeGreaterThan(0);
  });

  it('marks batches failed after all retries (exit 3), and a rerun resends exactly those', async () => {
    sim.setFaults({ failRate: 1 });
    const file = join(dir, 'in.csv');
    await writeFile(file, csvOf(range(100).map((i) => makeTx(i, 'fl'))));
    const r = await runCliHere(['send', ...fast, '--max-retries', '1', '--split-retries', '0', file], {
      env: env(),
    });
    expect(r.code).toBe(3);
    expect(summaryOf(r)).toMatchObject({ read: 100, sent: 0, failed: 100, failedBatches: 2 });
    const failedLines = await ledgerLines();
    expect(
      failedLines.every((l) => l.status === 'failed' && l.httpStatus === 500 && l.error && l.attempts === 2),
    ).toBe(true);
    sim.setFaults({ failRate: 0 });
    const rerun = await runCliHere(['send', ...fast, file], { env: env() });
    expect(rerun.code).toBe(0);
    expect(summaryOf(rerun)).toMatchObject({ sent: 100, skipped: 0 });
    expect(sim.stats().transactions).toMatchObject({ distinct: 100, duplicates: 0 });
  });

  it('exits 1 with one clear line for bad usage, missing input, bad header; sends nothing', async () => {
    const missing = await runCliHere(['send', join(dir, 'nope.csv')], { env: env() });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/nope\.csv/);
    expect(missing.stderr).not.toMatch(/\n\s+at /);
    const bad = await runCliHere(['send', '--batch-size', '51', join(dir, 'x.csv')], { env: env() });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/batch/i);
    const file = join(dir, 'in.csv');
    const text = csvOf(range(5).map((i) => makeTx(i))).replace('paymentNetworkMCC', 'mcc');
    await writeFile(file, text);
    const header = await runCliHere(['send', ...fast, file], { env: env() });
    expect(header.code).toBe(1);
    expect(header.stderr).toMatch(/paymentNetworkMCC/);
    expect(header.stderr).toContain(file);
    expect(sends()).toBe(0);
  });

  it('--dry-run reads, maps, validates and batches, sends nothing, leaves no ledger', async () => {
    const file = join(dir, 'in.csv');
    await writeFile(file, csvOf(range(60).map((i) => makeTx(i))));
    const r = await runCliHere(['send', ...fast, '--dry-run', '--batch-size', '7', file], { env: env() });
    expect(r.code).toBe(0);
    expect(summaryOf(r)).toMatchObject({
      read: 60,
      valid: 60,
      sent: 0,
      batches: 9,
      batched: 60,
      dryRun: true,
    });
    expect(sends()).toBe(0);
    await expect(stat(join(dir, 'ledger.ndjson'))).rejects.toThrow();
  });

  it('honours --batch-size and --concurrency on the wire', async () => {
    sim.setFaults({ latencyMs: 30 });
    const file = join(dir, 'in.csv');
    await writeFile(file, csvOf(range(140).map((i) => makeTx(i))));
    const r = await runCliHere(['send', ...fast, '--batch-size', '7', '--concurrency', '3', file], {
      env: env(),
    });
    expect(r.code).toBe(0);
    expect(sim.stats().largestBatch).toBe(7);
    expect(sim.stats().maxInFlight).toBe(3);
    expect(summaryOf(r)).toMatchObject({ batches: 20 });
  });

  it('SIGTERM drains what is in flight, exits 143; the rerun completes with no duplicate', async () => {
    sim.setFaults({ latencyMs: 40 });
    const file = join(dir, 'in.csv');
    await writeFile(file, csvOf(range(3000).map((i) => makeTx(i, 'sg'))));
    const run = startCli(['send', ...fast, '--concurrency', '2', file], { env: env() });
    await waitFor(() => sim.stats().transactions.accepted >= 200, run.child);
    run.child.kill('SIGTERM');
    const r = await run.done;
    expect(r.code).toBe(143);
    const s = summaryOf(r);
    expect(s.interrupted).toBe('SIGTERM');
    expect((s.sent as number) + (s.failed as number)).toBe(s.valid);
    expect(s.read as number).toBeLessThan(3000);
    const rerun = await runCliHere(['send', ...fast, file], { env: env() });
    expect(rerun.code).toBe(0);
    expect(sim.stats().transactions).toMatchObject({ distinct: 3000, duplicates: 0 });
  });

  it('refuses a second run on the same ledger, naming the process', async () => {
    sim.setFaults({ latencyMs: 100 });
    const file = join(dir, 'in.csv');
    await writeFile(file, csvOf(range(2000).map((i) => makeTx(i))));
    const first = startCli(['send', ...fast, '--concurrency', '1', file], { env: env() });
    await waitFor(() => sim.stats().requests.total >= 1, first.child);
    const second = await runCliHere(['send', ...fast, file], { env: env() });
    expect(second.code).toBe(1);
    expect(second.stderr).toMatch(new RegExp(`in use by process ${first.child.pid}`));
    first.child.kill('SIGINT');
    expect((await first.done).code).toBe(130);
  });
});
