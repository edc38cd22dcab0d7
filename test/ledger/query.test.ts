// Ledger queries on real files written by the ledger writer: exact line indexes (fingerprint collisions
// included), outstanding failures (each id once, at its last failure), status counts, find, path checks.
import { appendFile, mkdir, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type LedgerIndexes, loadLedgerIndexes } from '../../src/ledger/file/acked-index.ts';
import { type FoundLine, findInLedgers } from '../../src/ledger/file/find.ts';
import type { LedgerLine } from '../../src/ledger/file/line.ts';
import { checkLedgerPaths, ledgerStatus, outstandingFailures } from '../../src/ledger/file/query.ts';
import { openLedgerWriter } from '../../src/ledger/file/writer.ts';
import type { OutstandingFailure } from '../../src/ledger/status.ts';
import { fingerprint } from '../../src/sorted-runs/fingerprint.ts';
import { range } from '../helpers/transactions.ts';

const tmp = () => mkdtemp(join(tmpdir(), 'svc-query-'));

/** Two ids whose 40-bit index fingerprints are equal (found by a birthday search over `c-<n>`). */
const COLLIDING = ['c-570472', 'c-2059984'] as const;

/** The indexes of a ledger that exists (and a load nothing stops). */
async function load(path: string, failed = false): Promise<LedgerIndexes> {
  const r = await loadLedgerIndexes(path, { failed });
  if (r === undefined || r === 'stopped') throw new Error(`no indexes for ${path}`);
  return r;
}

let seq = 0;
function line(
  status: 'acked' | 'failed',
  ids: string[],
  more: Partial<LedgerLine> & { clientRequestId?: string } = {},
): LedgerLine {
  seq++;
  return {
    ts: new Date(Date.UTC(2026, 10, 20, 2, 0, seq)).toISOString(),
    batchId: `b${seq}`,
    status,
    requestId: status === 'acked' ? `req-${seq}` : null,
    transactionIds: ids,
    attempts: status === 'acked' ? 1 : 6,
    httpStatus: status === 'acked' ? 200 : 500,
    ...(status === 'failed' ? { error: `HTTP 500 (try ${seq})` } : {}),
    ...more,
  };
}

async function writeLedger(path: string, lines: LedgerLine[]): Promise<void> {
  const w = await openLedgerWriter(path);
  for (const l of lines) await w.append(l);
  await w.close();
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

describe('line indexes (acked and failed, exact)', () => {
  it('the colliding pair really shares the 40-bit fingerprint', () => {
    const a = new Uint32Array(2);
    const b = new Uint32Array(2);
    fingerprint(COLLIDING[0], a);
    fingerprint(COLLIDING[1], b);
    expect([a[0], (a[1] as number) & 0xff]).toEqual([b[0], (b[1] as number) & 0xff]);
  });

  it('linesOf / has / distinct stay exact when two ids collide and when an id repeats', async () => {
    const path = join(await tmp(), 'l.ndjson');
    seq = 0;
    await writeLedger(path, [
      line('acked', [COLLIDING[0], 'x-1']), // acked 0
      line('failed', [COLLIDING[1], 'y-1']), // failed 0
      line('acked', ['x-2', 'x-1']), // acked 1: x-1 acked twice
      line('failed', [COLLIDING[1]]), // failed 1
      line('acked', [COLLIDING[1]]), // acked 2
    ]);
    const { acked, failed, stats } = await load(path, true);
    try {
      expect(stats).toMatchObject({ lines: 5, ackedLines: 3, failedLines: 2, acked: 5, failed: 3, bad: 0 });
      expect([acked.lineCount, failed?.lineCount]).toEqual([3, 2]);
      expect(acked.linesOf(COLLIDING[0])).toEqual([0]);
      expect(acked.linesOf(COLLIDING[1])).toEqual([2]);
      expect(acked.linesOf('x-1')).toEqual([0, 1]);
      expect(acked.linesOf('nope')).toEqual([]);
      expect(failed?.linesOf(COLLIDING[1])).toEqual([0, 1]);
      expect(failed?.linesOf(COLLIDING[0])).toEqual([]);
      expect(failed?.has('y-1')).toBe(true);
      expect(acked.has('y-1')).toBe(false);
      // 4 distinct acked ids: c-570472, x-1, x-2, c-2059984 (x-1 twice; the colliding pair counted as two).
      expect(acked.distinct()).toBe(4);
      expect(failed?.distinct()).toBe(2);
      expect(failed?.line(1)).toMatchObject({ batchId: 'b4', transactionIds: [COLLIDING[1]] });
    } finally {
      acked.close();
      failed?.close();
    }
  });

  it('an id only its collision partner was acked under is not acked', async () => {
    const path = join(await tmp(), 'l.ndjson');
    await writeLedger(path, [line('acked', [COLLIDING[0]])]);
    const { acked } = await load(path);
    expect([acked.has(COLLIDING[0]), acked.has(COLLIDING[1])]).toEqual([true, false]);
    expect(acked.distinct()).toBe(1);
    acked.close();
  });
});

describe('outstanding failures and status', () => {
  it('each failed id never acked comes once, at its last failure, with the number of failures', async () => {
    const dir = await tmp();
    const a = join(dir, 'a.ndjson');
    const b = join(dir, 'b.ndjson');
    seq = 0;
    await writeLedger(a, [
      line('acked', ['t-1', 't-2'], { runId: 'r1', source: 'in.csv', lines: [2, 3] }), // b1
      line('failed', ['t-3', 't-4', 't-5'], { runId: 'r1', source: 'in.csv', lines: [4, 6] }), // b2
      line('failed', ['t-3'], { runId: 'r2', source: 'in.csv', lines: [4, 4] }), // b3: t-3 fails again
      line('acked', ['t-4'], { runId: 'r2', source: 'in.csv', lines: [5, 5] }), // b4: t-4 acked since
      line('failed', ['t-1'], { runId: 'r3', source: 'in.csv', lines: [2, 2] }), // b5: --no-resume rerun failed an acked id
    ]);
    await appendFile(a, '{"ts":"2026-11-2');
    await writeLedger(b, [
      line('failed', ['t-5', 't-6'], { runId: 'r4', source: 'more.csv', lines: [2, 3] }), // b6: t-5 fails again, in a later ledger
      line('acked', ['t-6', 't-7'], { runId: 'r4', source: 'more.csv', lines: [2, 3] }), // b7
    ]);

    const out: OutstandingFailure[] = await collect(outstandingFailures([a, b]));
    expect(out.map((f) => [f.transactionId, f.failures, f.batchId, f.ledger])).toEqual([
      ['t-3', 2, 'b3', a],
      ['t-5', 2, 'b6', b],
    ]);
    expect(out[0]).toMatchObject({
      error: 'HTTP 500 (try 3)',
      httpStatus: 500,
      attempts: 6,
      runId: 'r2',
      source: 'in.csv',
      lines: [4, 4],
      requestId: null,
    });
    // One ledger alone: t-5 is outstanding there, at b2 (in the order of the failed lines).
    expect((await collect(outstandingFailures([a]))).map((f) => [f.transactionId, f.batchId])).toEqual([
      ['t-5', 'b2'],
      ['t-3', 'b3'],
    ]);

    const s = await ledgerStatus([a, b]);
    expect(s.ledgers).toEqual([
      { path: a, lines: 6, badLines: 1, badLineNumbers: [6] },
      { path: b, lines: 2, badLines: 0, badLineNumbers: [] },
    ]);
    expect(s.batches).toEqual({ acked: 3, failed: 4, outstanding: 2 });
    expect(s.ids).toEqual({ acked: 5, ackedDistinct: 5, failed: 7, outstanding: 2 });
    expect(s.runs.map((r) => [r.runId, r.batches.acked, r.batches.failed, r.ids.outstanding])).toEqual([
      ['r1', 1, 1, 0],
      ['r2', 1, 1, 1],
      ['r3', 0, 1, 0],
      ['r4', 1, 1, 1],
    ]);
    expect(s.lastRun).toMatchObject({ runId: 'r4', sources: ['more.csv'], ids: { acked: 2, failed: 2 } });
    expect(s.firstTs).toBe('2026-11-20T02:00:01.000Z');
    expect(s.lastTs).toBe('2026-11-20T02:00:07.000Z');
  });

  it('distinct acked ids across ledgers count an id acked in both once', async () => {
    const dir = await tmp();
    const a = join(dir, 'a.ndjson');
    const b = join(dir, 'b.ndjson');
    await writeLedger(a, [line('acked', ['d-1', 'd-2', COLLIDING[0]])]);
    await writeLedger(b, [line('acked', ['d-2', 'd-3', COLLIDING[1]]), line('acked', ['d-3'])]);
    const s = await ledgerStatus([a, b]);
    expect(s.ids).toMatchObject({ acked: 7, ackedDistinct: 5 });
  });

  it('distinct acked ids across ledgers sharing more than 65,536 fingerprints (the bit-set pass)', async () => {
    const dir = await tmp();
    const a = join(dir, 'a.ndjson');
    const b = join(dir, 'b.ndjson');
    const batches = (from: number, to: number) =>
      range(Math.ceil((to - from) / 50)).map((k) =>
        line(
          'acked',
          range(Math.min(50, to - from - k * 50), from + k * 50).map((i) => `s-${i}`),
        ),
      );
    await writeLedger(a, batches(0, 100_000));
    // b shares 30,000..99,999 (70,000 ids) with a, repeats 60,000..60,049 in a second line, adds up to 129,999.
    await writeLedger(b, [...batches(30_000, 130_000), ...batches(60_000, 60_050)]);
    const s = await ledgerStatus([a, b]);
    expect(s.ids).toMatchObject({ acked: 200_050, ackedDistinct: 130_000 });
  });
});

describe('find and path checks', () => {
  it('reports every line naming a sought id, with its ledger line number', async () => {
    const dir = await tmp();
    const a = join(dir, 'a.ndjson');
    seq = 0;
    await writeLedger(a, [
      line('failed', ['f-1', 'f-2']),
      line('acked', ['f-3'], { clientRequestId: 'c-9' }),
      line('acked', ['f-1']),
    ]);
    const hits: FoundLine[] = [];
    const read = await findInLedgers([a], new Set(['f-1', 'f-3', 'zz']), (h) => hits.push(h));
    expect(hits.map((h) => [h.transactionId, h.status, h.batchId, h.ledgerLine])).toEqual([
      ['f-1', 'failed', 'b1', 1],
      ['f-3', 'acked', 'b2', 2],
      ['f-1', 'acked', 'b3', 3],
    ]);
    expect(hits[1]).toMatchObject({ requestId: 'req-2', clientRequestId: 'c-9', httpStatus: 200, ledger: a });
    expect(hits[0]?.error).toBe('HTTP 500 (try 1)');
    expect(read).toEqual([{ path: a, stats: { lines: 3, bad: 0, badLines: [] } }]);
  });

  it('a missing path, a directory or a special file is an error naming it; repeats are read once', async () => {
    const dir = await tmp();
    const a = join(dir, 'a.ndjson');
    await writeLedger(a, [line('acked', ['a'])]);
    await mkdir(join(dir, 'sub'));
    await expect(checkLedgerPaths([join(dir, 'none.ndjson')])).rejects.toMatchObject({
      code: 'LEDGER_READ',
      message: `ledger ${join(dir, 'none.ndjson')}: no such file`,
    });
    await expect(checkLedgerPaths([a, join(dir, 'sub')])).rejects.toMatchObject({
      code: 'LEDGER_PATH_INVALID',
      message: `ledger ${join(dir, 'sub')} is a directory; name a regular file, or a path where one can be created`,
    });
    await expect(checkLedgerPaths(['/dev/null'])).rejects.toMatchObject({
      code: 'LEDGER_PATH_INVALID',
      message: expect.stringMatching(/^ledger \/dev\/null is a character device;/),
    });
    expect(await checkLedgerPaths([a, a])).toEqual([a]);
  });
});
