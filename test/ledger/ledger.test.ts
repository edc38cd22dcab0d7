import { spawn } from 'node:child_process';
import { appendFile, link, mkdtemp, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadAckedIndex } from '../../src/ledger/file/acked-index.ts';
import type { LedgerLine } from '../../src/ledger/file/line.ts';
import { createLineSplitter, type SplitLine } from '../../src/ledger/file/lines.ts';
import { acquireLedgerLock, defaultLockMethod, type LockMethod } from '../../src/ledger/file/lock.ts';
import { type LedgerReadStats, readLedger } from '../../src/ledger/file/read.ts';
import { openLedgerWriter, type WriteTarget, writeAll } from '../../src/ledger/file/writer.ts';
import { ROOT } from '../helpers/cli.ts';

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
    // The fault enters through the writer's handle seam: every write after the first fails with EIO.
    let writes = 0;
    const w = await openLedgerWriter(path, {
      wrapHandle: (h) => ({
        write: (buf, off, len) => {
          if (++writes > 1)
            return Promise.reject(Object.assign(new Error('EIO: i/o error, write'), { code: 'EIO' }));
          return h.write(buf, off, len);
        },
        datasync: () => h.datasync(),
      }),
    });
    await w.append(line('b1', 'acked', ['a']));
    await expect(w.append(line('b2', 'acked', ['b']))).rejects.toMatchObject({ code: 'LEDGER_WRITE' });
    await expect(w.append(line('b3', 'acked', ['c']))).rejects.toMatchObject({ code: 'LEDGER_WRITE' });
    await w.close();
    expect((await readFile(path, 'utf8')).trim().split('\n')).toHaveLength(1);
  });

  it('groups the syncs while other requests are out and waiting pays; not when it does not, nor with nothing else out', async () => {
    // Outcomes arriving one event-loop turn apart while `inFlight` requests are out: they share syncs at any
    // concurrency. (A turn, not a 1 ms timer: under the suite's load such timers fired late and spread, the waits
    // stopped paying and a run synced 21 of 40; the spread case below is the one where waits do not pay.)
    const appendSpaced = async (inFlight: (queued: number) => number) => {
      let queued = 0;
      const w = await openLedgerWriter(join(await tmp(), 'ledger.ndjson'), {
        inFlight: () => inFlight(queued),
      });
      const done: Array<Promise<void>> = [];
      for (let i = 0; i < 40; i++) {
        queued++;
        done.push(w.append(line(`b${i}`, 'acked', [`t${i}`])).finally(() => queued--));
        await new Promise((r) => setImmediate(r));
      }
      await Promise.all(done);
      await w.close();
      return { ...w.groups };
    };
    for (const concurrency of [32, 8]) {
      const busy = await appendSpaced(() => concurrency);
      expect(busy.lines).toBe(40);
      expect(busy.delayed).toBeGreaterThan(0);
      expect(busy.synced).toBeLessThanOrEqual(20);
    }
    // Outcomes spread out (concurrency 8 against a 50 ms service, ~6 ms apart): a 2 ms wait never catches one, so it
    // stops waiting but for a probe now and then. Each outcome here comes only once the one before is on disk, so
    // no wait can catch it however the machine's load bunches timers (timers 6 ms apart did bunch at load 14).
    const spread = await openLedgerWriter(join(await tmp(), 'ledger.ndjson'), { inFlight: () => 8 });
    for (let i = 0; i < 40; i++) {
      await spread.append(line(`s${i}`, 'acked', [`s${i}`]));
      await new Promise((r) => setTimeout(r, 1));
    }
    await spread.close();
    expect(spread.groups.lines).toBe(40);
    expect(spread.groups.synced).toBe(40);
    // About 6 waits before the share of waits that paid falls under a half, then probes: the 8th group after, then
    // 16, 32 … further on while they catch nothing (one in every 8 groups would be 10 in these 40 groups).
    expect(spread.groups.delayed).toBeGreaterThan(0);
    expect(spread.groups.delayed).toBeLessThanOrEqual(9);
    // Only the outcomes already appended are in flight (concurrency 1): nothing else can come, no wait.
    const alone = await appendSpaced((queued) => queued);
    expect(alone.delayed).toBe(0);
    expect(alone.lines).toBe(40);
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
  const LOCK = join(ROOT, 'src/ledger/file/lock.ts');
  /** A child process that takes the lock and holds it until killed. */
  const holder = async (path: string, method: LockMethod) => {
    const code = `import { acquireLedgerLock } from ${JSON.stringify(LOCK)};
      await acquireLedgerLock(${JSON.stringify(path)}, { method: ${JSON.stringify(method)} });
      process.stdout.write('locked\\n'); setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', code], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((res, rej) => {
      child.stdout.once('data', () => res());
      child.once('exit', (c) => rej(new Error(`holder exited ${c}`)));
    });
    return child;
  };

  for (const method of ['native', 'socket'] as const) {
    it(`${method}: refuses a second holder naming its pid, through a symlinked folder and a hard link too; a holder killed -9 frees it`, async () => {
      if (method === 'socket' && process.platform !== 'linux') return;
      const dir = await tmp();
      const path = join(dir, 'ledger.ndjson');
      const child = await holder(path, method);
      try {
        await expect(acquireLedgerLock(path, { method })).rejects.toThrow(
          new RegExp(`LEDGER_LOCKED|in use by process ${child.pid}`),
        );
        await expect(acquireLedgerLock(path, { method })).rejects.toMatchObject({
          code: 'LEDGER_LOCKED',
          context: { pid: child.pid },
        });
        // The same file by other names: the lock follows the device and inode, not the path text.
        await symlink(dir, `${dir}-link`);
        await link(path, join(dir, 'hard.ndjson'));
        for (const other of [join(`${dir}-link`, 'ledger.ndjson'), join(dir, 'hard.ndjson')]) {
          await expect(acquireLedgerLock(other, { method })).rejects.toMatchObject({ code: 'LEDGER_LOCKED' });
        }
      } finally {
        child.kill('SIGKILL');
        await new Promise((r) => child.once('exit', r));
      }
      // kill -9 left its owner file behind; the kernel freed the lock.
      expect(JSON.parse(await readFile(`${path}.lock`, 'utf8')).pid).toBe(child.pid);
      const lock = await acquireLedgerLock(path, { method });
      expect(lock.tookOver?.pid).toBe(child.pid);
      expect(lock.method).toBe(method);
      const owner = JSON.parse(await readFile(`${path}.lock`, 'utf8'));
      expect(owner.pid).toBe(process.pid);
      expect((await stat(`${path}.lock`)).mode & 0o777).toBe(0o600);
      // In this process too, a second take is refused (the lock is per open file, not per process).
      await expect(acquireLedgerLock(path, { method })).rejects.toMatchObject({ code: 'LEDGER_LOCKED' });
      await lock.release();
      await expect(stat(`${path}.lock`)).rejects.toThrow();
      const again = await acquireLedgerLock(path, { method });
      expect(again.tookOver).toBeNull();
      await again.release();
    });
  }

  it('loads the prebuilt native lock on this platform', () => {
    expect(defaultLockMethod()).toBe('native');
  });
});

describe('state file reading and writing', () => {
  it('writeAll writes every byte through short writes, and fails on a write that writes nothing', async () => {
    const got: Buffer[] = [];
    const short: WriteTarget = {
      async write(buf, offset, length) {
        const n = Math.min(7, length);
        got.push(Buffer.from(buf.subarray(offset, offset + n)));
        return { bytesWritten: n };
      },
    };
    const text = Buffer.from(`${'x'.repeat(100)}\n${'y'.repeat(50)}\n`);
    await writeAll(short, text);
    expect(Buffer.concat(got).equals(text)).toBe(true);
    expect(got.length).toBe(Math.ceil(text.length / 7));
    let calls = 0;
    const stuck: WriteTarget = {
      async write(_buf, _offset, length) {
        calls++;
        return { bytesWritten: calls === 1 ? Math.floor(length / 2) : 0 };
      },
    };
    await expect(writeAll(stuck, text)).rejects.toMatchObject({ code: 'EIO' });
  });

  it('the line splitter skips a line over the limit without holding it, at any chunking', () => {
    const long = 'z'.repeat(5000);
    const text = Buffer.from(`a\r\n${long}\nbb\n${long}\n\nccc`);
    for (const size of [1, 3, 64, 4999, 5001, text.length]) {
      const s = createLineSplitter(4096);
      const out: Array<[string | null, number, number]> = [];
      const emit = (l: SplitLine) => out.push([l.text, l.offset, l.bytes]);
      for (let i = 0; i < text.length; i += size) s.push(text.subarray(i, i + size), emit);
      s.end(emit);
      expect(out).toEqual([
        ['a', 0, 1],
        [null, 3, 5000],
        ['bb', 5004, 2],
        [null, 5007, 5000],
        ['', 10008, 0],
        ['ccc', 10009, 3],
      ]);
    }
  });

  it('the ledger reader and the resume index skip and count a line over 1 MiB', async () => {
    const path = join(await tmp(), 'ledger.ndjson');
    const huge = JSON.stringify(line('big', 'acked', ['x'.repeat(2 << 20)]));
    await writeFile(
      path,
      `${JSON.stringify(line('b1', 'acked', ['a']))}\n${huge}\n${JSON.stringify(line('b2', 'acked', ['b']))}\n`,
    );
    const stats: LedgerReadStats = { lines: 0, bad: 0, badLines: [] };
    const ids: string[] = [];
    for await (const l of readLedger(path, stats)) ids.push(...l.transactionIds);
    expect(ids).toEqual(['a', 'b']);
    expect(stats).toEqual({ lines: 3, bad: 1, badLines: [2] });
    const loaded = await loadAckedIndex(path);
    expect(loaded.stats).toMatchObject({ lines: 3, bad: 1, badLines: [2], acked: 2 });
    expect(loaded.index.has('a') && loaded.index.has('b')).toBe(true);
    expect(loaded.index.has('x'.repeat(2 << 20))).toBe(false);
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
    const { createSpillingFingerprintSet } = await import('../../src/sorted-runs/fingerprint-set.ts');
    const set = createSpillingFingerprintSet();
    let firsts = 0;
    for (let i = 0; i < 300_000; i++) if (set.add(`tx-${i}`)) firsts++;
    let again = 0;
    for (let i = 0; i < 300_000; i += 3) if (set.add(`tx-${i}`)) again++;
    expect([firsts, again]).toEqual([300_000, 0]);
  });
});
