import { spawn } from 'node:child_process';
import { appendFile, mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadAckedIndex } from '../../src/ledger/acked-index.ts';
import { acquireLedgerLock } from '../../src/ledger/lock.ts';
import { type LedgerReadStats, readLedger } from '../../src/ledger/read.ts';
import type { LedgerLine } from '../../src/ledger/types.ts';
import { openLedgerWriter } from '../../src/ledger/writer.ts';

const tmp = () => mkdtemp(join(tmpdir(), 'svc-ledger-'));
const line = (batchId: string, status: 'acked' | 'failed', ids: string[]): LedgerLine => ({
  ts: new Date().toISOString(),
  batchId,
  status,
  requestId: status === 'acked' ? '00000000-0000-4000-8000-000000000000' : null,
  transactionIds: ids,
  attempts: 1,
  httpStatus: status === 'acked' ? 200 : 500,
});

describe('ledger writer', () => {
  it('appends one NDJSON line per outcome, mode 0600, readable back whole', async () => {
    const path = join(await tmp(), 'sub', 'ledger.ndjson');
    const w = await openLedgerWriter(path);
    await Promise.all([w.append(line('b1', 'acked', ['a', 'b'])), w.append(line('b2', 'failed', ['c']))]);
    await w.append(line('b3', 'acked', ['d']));
    await w.close();
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    const text = await readFile(path, 'utf8');
    expect(text.trim().split('\n')).toHaveLength(3);
    const lines: LedgerLine[] = [];
    for await (const l of readLedger(path)) lines.push(l);
    expect(lines.map((l) => l.batchId)).toEqual(['b1', 'b2', 'b3']);
  });

  it('closes off a torn last line at open, and the reader skips and counts it', async () => {
    const path = join(await tmp(), 'ledger.ndjson');
    await writeFile(path, `${JSON.stringify(line('b1', 'acked', ['a']))}\n{"ts":"2026-11-2`);
    const w = await openLedgerWriter(path);
    expect(w.repairedTornLine).toBe(true);
    await w.append(line('b2', 'acked', ['b']));
    await w.close();
    const stats: LedgerReadStats = { lines: 0, bad: 0, badLines: [] };
    const ids: string[] = [];
    for await (const l of readLedger(path, stats)) ids.push(...l.transactionIds);
    expect(ids).toEqual(['a', 'b']);
    expect(stats.bad).toBe(1);
    expect(stats.badLines).toEqual([2]);
  });

  it('fails every append after an injected write error', async () => {
    const path = join(await tmp(), 'ledger.ndjson');
    process.env.SVC_FAULT_LEDGER_FAIL_AFTER = '1';
    try {
      const w = await openLedgerWriter(path);
      await w.append(line('b1', 'acked', ['a']));
      await expect(w.append(line('b2', 'acked', ['b']))).rejects.toMatchObject({ code: 'LEDGER_WRITE' });
      await expect(w.append(line('b3', 'acked', ['c']))).rejects.toMatchObject({ code: 'LEDGER_WRITE' });
      await w.close();
    } finally {
      delete process.env.SVC_FAULT_LEDGER_FAIL_AFTER;
    }
    expect((await readFile(path, 'utf8')).trim().split('\n')).toHaveLength(1);
  });

  it('refuses a path it cannot write with LEDGER_WRITE', async () => {
    const file = join(await tmp(), 'a-file');
    await writeFile(file, 'x');
    await expect(openLedgerWriter(join(file, 'ledger.ndjson'))).rejects.toMatchObject({
      code: 'LEDGER_WRITE',
    });
  });
});

describe('acked index', () => {
  it('holds acked ids only; failed ones are resent', async () => {
    const path = join(await tmp(), 'ledger.ndjson');
    const w = await openLedgerWriter(path);
    await w.append(line('b1', 'acked', ['a', 'b']));
    await w.append(line('b2', 'failed', ['c']));
    await w.close();
    await appendFile(path, 'not json\n');
    const { index, stats } = await loadAckedIndex(path);
    expect([index.has('a'), index.has('b'), index.has('c')]).toEqual([true, true, false]);
    expect(stats).toMatchObject({ acked: 2, failed: 1, bad: 1 });
  });

  it('reads a missing ledger as empty', async () => {
    const { index } = await loadAckedIndex(join(await tmp(), 'none.ndjson'));
    expect(index.size).toBe(0);
  });
});

describe('ledger lock', () => {
  it('refuses a second holder, naming its pid, and takes over a dead one', async () => {
    const path = join(await tmp(), 'ledger.ndjson');
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 20000)']);
    await new Promise((r) => child.once('spawn', r));
    await writeFile(`${path}.lock`, JSON.stringify({ pid: child.pid, startedAt: 'x' }));
    await expect(acquireLedgerLock(path)).rejects.toThrow(new RegExp(`in use by process ${child.pid}`));
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    const lock = await acquireLedgerLock(path);
    expect(lock.tookOver?.pid).toBe(child.pid);
    const owner = JSON.parse(await readFile(`${path}.lock`, 'utf8'));
    expect(owner.pid).toBe(process.pid);
    await lock.release();
    await expect(stat(`${path}.lock`)).rejects.toThrow();
  });
});

describe('acked index at scale (sorted fingerprints on disk, exact check on a hit)', () => {
  it('knows every acked id of 200,000 and none of the failed or unseen ones', async () => {
    const path = join(await tmp(), 'big.ndjson');
    const w = await openLedgerWriter(path);
    for (let b = 0; b < 4000; b++) {
      const ids = Array.from({ length: 50 }, (_, k) => `id-${b * 50 + k}`);
      await w.append(line(`b${b}`, b % 10 === 9 ? 'failed' : 'acked', ids));
    }
    await w.close();
    const { index, stats } = await loadAckedIndex(path);
    expect(stats).toMatchObject({ acked: 180_000, failed: 20_000 });
    let wrong = 0;
    for (let i = 0; i < 200_000; i += 7) {
      const shouldHave = Math.floor(i / 50) % 10 !== 9;
      if (index.has(`id-${i}`) !== shouldHave) wrong++;
    }
    for (let i = 0; i < 5000; i++) if (index.has(`other-${i}`)) wrong++;
    expect(wrong).toBe(0);
  });
});

describe('fingerprint set (within-run duplicate check)', () => {
  it('add() is true the first time and false after, for 300,000 ids', async () => {
    const { createSpillingFingerprintSet } = await import('../../src/ledger/fingerprint.ts');
    const set = createSpillingFingerprintSet();
    let firsts = 0;
    for (let i = 0; i < 300_000; i++) if (set.add(`tx-${i}`)) firsts++;
    let again = 0;
    for (let i = 0; i < 300_000; i += 3) if (set.add(`tx-${i}`)) again++;
    expect([firsts, again]).toEqual([300_000, 0]);
  });
});
