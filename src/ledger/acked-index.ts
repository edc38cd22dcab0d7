// Resume index: which transactionIds the ledger shows as acknowledged (or failed), in flat memory at any ledger size.
// Each acked id is one 64-bit slot: a 40-bit fingerprint of the id and the number of its ledger line (24 bits).
// Slots are sorted in runs, merged into one sorted file in the temp folder, and searched through a sparse
// in-memory index (one key per 4 KiB block). A fingerprint match is confirmed against that ledger line, read
// back from the ledger (a few lines cached), so a fingerprint collision can never skip a record.
import { closeSync, constants, mkdtempSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { endianness, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { SvcIngestError } from '../errors.ts';
import { openStateFile } from './files.ts';
import { fingerprint } from './fingerprint.ts';
import { createLineSplitter, type SplitLine } from './lines.ts';
import { type LedgerReadStats, ledgerLineOf } from './read.ts';
import type { LedgerLine } from './types.ts';

/** Set of acknowledged transactionIds, built from the ledger at start and grown as batches are acked. */
export interface AckedIndex {
  has(id: string): boolean;
  add(id: string): void;
  readonly size: number;
}

export interface AckedIndexLoad {
  index: AckedIndex;
  /** Lines read, bad lines, ids of acked lines (indexed) and of failed lines, acked and failed lines. */
  stats: LedgerReadStats & { acked: number; failed: number; ackedLines: number; failedLines: number };
  /** True when `shouldStop` said so before the index was complete: `index` is then empty. */
  interrupted: boolean;
}

export interface AckedIndexOptions {
  /** Polled between chunks of the ledger and while merging; true stops the load (a signal arrived). */
  shouldStop?: () => boolean;
}

/** Work between two looks at `shouldStop` (and two turns of the event loop, so a signal handler runs). */
const SLOTS_PER_TURN = 1 << 16;
const BLOCKS_PER_TURN = 1 << 12;
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;

const MAX_LINES = 1 << 24;
/** Slots sorted in memory at once (32 MiB); a ledger with fewer acked ids is never written to disk. */
const RUN_SLOTS = 4 * 1024 * 1024;
/** Slots per block of the on-disk index (4 KiB), one sparse key per block. */
const BLOCK = 512;
const CACHED_LINES = 64;

export function createAckedIndex(): AckedIndex {
  const ids = new Set<string>();
  return {
    has: (id) => ids.has(id),
    add: (id) => {
      ids.add(id);
    },
    get size() {
      return ids.size;
    },
  };
}

function ledgerError(path: string, err: unknown): SvcIngestError {
  return new SvcIngestError('LEDGER_READ', `cannot read ledger ${path}: ${(err as Error).message}`, {
    source: path,
  });
}

/** Sorted slots: [low, high] 32-bit word pairs, so a BigUint64Array view sorts by (high, low). */
function sortSlots(words: Uint32Array, count: number): void {
  new BigUint64Array(words.buffer, words.byteOffset, count).sort();
}

/** Where sorted slots live: in memory (small ledgers) or in a file read block by block. */
interface SlotStore {
  count: number;
  /** Words of slots [from, from + n) (a view valid until the next call with the same `into`). */
  read(from: number, n: number, into?: Uint32Array): Uint32Array;
  close(): void;
}

function memoryStore(words: Uint32Array, count: number): SlotStore {
  return { count, read: (from, n) => words.subarray(2 * from, 2 * (from + n)), close() {} };
}

/** Merge sorted run files into one sorted file; returns its store (pread by block), or null when stopped. */
async function mergeRuns(
  dir: string,
  runs: Array<{ path: string; count: number }>,
  total: number,
  shouldStop: () => boolean,
): Promise<SlotStore | null> {
  const CHUNK = 64 * 1024; // slots buffered per run while merging
  const cursors = runs.map((r) => ({
    fd: openSync(r.path, 'r'),
    left: r.count,
    buf: new Uint32Array(CHUNK * 2),
    at: 0,
    len: 0,
  }));
  const refill = (c: (typeof cursors)[number]): boolean => {
    if (c.at < c.len) return true;
    if (c.left === 0) return false;
    const n = Math.min(CHUNK, c.left);
    readSync(c.fd, new Uint8Array(c.buf.buffer), 0, n * 8, null);
    c.left -= n;
    c.at = 0;
    c.len = n;
    return true;
  };
  const path = join(dir, 'index.bin');
  const out = openSync(path, 'w', 0o600);
  const outBuf = new Uint32Array(CHUNK * 2);
  let outLen = 0;
  const live = cursors.filter(refill);
  let merged = 0;
  let stopped = false;
  while (live.length > 0) {
    if (++merged % SLOTS_PER_TURN === 0) {
      await nextTurn();
      if (shouldStop()) {
        stopped = true;
        break;
      }
    }
    // k is small (runs of 4M slots: 5 at 20M ids, 25 at 100M): a linear pick of the smallest head is enough.
    let best = 0;
    for (let k = 1; k < live.length; k++) {
      const a = live[k] as (typeof live)[number];
      const b = live[best] as (typeof live)[number];
      const ah = a.buf[2 * a.at + 1] as number;
      const bh = b.buf[2 * b.at + 1] as number;
      if (ah < bh || (ah === bh && (a.buf[2 * a.at] as number) < (b.buf[2 * b.at] as number))) best = k;
    }
    const c = live[best] as (typeof live)[number];
    outBuf[2 * outLen] = c.buf[2 * c.at] as number;
    outBuf[2 * outLen + 1] = c.buf[2 * c.at + 1] as number;
    c.at++;
    if (++outLen === CHUNK) {
      writeSync(out, new Uint8Array(outBuf.buffer), 0, outLen * 8);
      outLen = 0;
    }
    if (!refill(c)) live.splice(best, 1);
  }
  if (outLen > 0 && !stopped) writeSync(out, new Uint8Array(outBuf.buffer), 0, outLen * 8);
  closeSync(out);
  for (const c of cursors) closeSync(c.fd);
  for (const r of runs) rmSync(r.path, { force: true });
  if (stopped) return null;
  const fd = openSync(path, 'r');
  const block = new Uint32Array(BLOCK * 2);
  return {
    count: total,
    read(from, n, into = block) {
      readSync(fd, new Uint8Array(into.buffer, into.byteOffset, n * 8), 0, n * 8, from * 8);
      return into.subarray(0, 2 * n);
    },
    close() {
      closeSync(fd);
    },
  };
}

/**
 * Indexes of a ledger's acked lines (and, on request, of its failed lines) with exact answers.
 * @example const { acked, failed } = await loadLedgerIndexes('ledger/transactions.ndjson', { failed: true })
 */
export interface LedgerIndexes {
  acked: LedgerLineIndex;
  /** Only when asked for (`failed: true`). */
  failed: LedgerLineIndex | undefined;
  stats: AckedIndexLoad['stats'];
}

function newStats(): AckedIndexLoad['stats'] {
  return { lines: 0, bad: 0, badLines: [], acked: 0, failed: 0, ackedLines: 0, failedLines: 0 };
}

/**
 * Read the whole ledger (a missing file is empty; a link or anything but a regular file is refused) into an
 * index of acked transactionIds. Bad lines (a torn write after a crash) and lines over 1 MiB are skipped and
 * counted, as readLedger does. Memory: ~12 bytes per acked ledger line and 32 MiB while loading, whatever the
 * number of ids. Stops early, with an empty index and `interrupted`, once `shouldStop()` is true.
 * @example const { index } = await loadAckedIndex('ledger/transactions.ndjson'); index.has('t-1')
 */
export async function loadAckedIndex(
  ledgerPath: string,
  opts: AckedIndexOptions = {},
): Promise<AckedIndexLoad> {
  const loaded = await loadLedgerIndexes(ledgerPath, opts);
  if (!loaded) return { index: createAckedIndex(), stats: newStats(), interrupted: false };
  if (loaded === 'stopped') return { index: createAckedIndex(), stats: newStats(), interrupted: true };
  return { index: loaded.acked, stats: loaded.stats, interrupted: false };
}

/**
 * Read the whole ledger once into the index of its acked lines and, with `failed`, of its failed lines;
 * `onLine` sees every readable line in file order (bad ones are counted in `stats`). A missing file gives
 * undefined; `'stopped'` when `shouldStop()` turned true first. Memory: ~12 bytes per indexed line and up to
 * 32 MiB per index while loading, whatever the number of ids.
 * @example const r = await loadLedgerIndexes(path, { failed: true }); if (r && r !== 'stopped') r.acked.linesOf('t-1')
 */
export async function loadLedgerIndexes(
  ledgerPath: string,
  opts: AckedIndexOptions & { failed?: boolean; onLine?: (line: LedgerLine) => void } = {},
): Promise<LedgerIndexes | undefined | 'stopped'> {
  const shouldStop = opts.shouldStop ?? (() => false);
  const stats = newStats();
  const file = await openStateFile(ledgerPath, 'ledger', 'read');
  if (!file) return undefined;
  if (endianness() !== 'LE') throw new Error('the resume index needs a little-endian machine');
  const acked = createCollector(file.absPath, 'acked');
  const failed = opts.failed ? createCollector(file.absPath, 'failed') : undefined;
  const discard = () => {
    acked.discard();
    failed?.discard();
  };

  const onLine = (split: SplitLine): void => {
    // A line over 1 MiB (no ledger line is that long) is counted bad and never held.
    const line = ledgerLineOf(split, stats);
    if (!line) return;
    const { offset, bytes } = split;
    opts.onLine?.(line);
    if (line.status === 'acked') {
      stats.ackedLines++;
      stats.acked += acked.addLine(line.transactionIds, offset, bytes);
    } else {
      stats.failedLines++;
      stats.failed += line.transactionIds.length;
      failed?.addLine(line.transactionIds, offset, bytes);
    }
  };

  // The splitter keeps each line's byte offset: the exact check reads the line back from there.
  let stopped = false;
  try {
    const splitter = createLineSplitter();
    const stream = file.handle.createReadStream({ highWaterMark: 1 << 20 });
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      splitter.push(chunk, onLine);
      if (shouldStop()) {
        stopped = true;
        stream.destroy();
        break;
      }
    }
    if (!stopped) splitter.end(onLine);
  } catch (err) {
    discard();
    if (err instanceof SvcIngestError) throw err;
    throw ledgerError(file.absPath, err);
  } finally {
    await file.handle.close().catch(() => {});
  }
  if (stopped) {
    discard();
    return 'stopped';
  }
  const ackedIndex = await acked.finish(shouldStop);
  const failedIndex = ackedIndex && failed ? await failed.finish(shouldStop) : undefined;
  if (!ackedIndex || (failed && !failedIndex)) {
    ackedIndex?.close();
    discard();
    return 'stopped';
  }
  return { acked: ackedIndex, failed: failedIndex ?? undefined, stats };
}

/** Gathers the slots of one status's lines while the ledger is read, then sorts them into an index. */
interface SlotCollector {
  /** Indexes one line's ids; returns how many were indexed (the string ones). */
  addLine(ids: unknown[], offset: number, bytes: number): number;
  /** The index, or null when `shouldStop()` turned true while merging or indexing (its files are removed). */
  finish(shouldStop: () => boolean): Promise<LedgerLineIndex | null>;
  /** Removes what was written so far (after a failed or stopped read). */
  discard(): void;
}

function createCollector(absPath: string, status: 'acked' | 'failed'): SlotCollector {
  let run = new Uint32Array(1024 * 2);
  let inRun = 0;
  let dir: string | undefined;
  const runs: Array<{ path: string; count: number }> = [];
  let lineStart = new Float64Array(1024);
  let lineLength = new Uint32Array(1024);
  let lines = 0;
  const fp = new Uint32Array(2);

  const removeDir = (): void => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  };
  const flushRun = (): void => {
    sortSlots(run, inRun);
    if (!dir) {
      dir = mkdtempSync(join(tmpdir(), 'svc-ingest-index-'));
      // Also when the process ends while the ledger is still being read (a signal, an error).
      process.once('exit', removeDir);
    }
    const path = join(dir, `run-${runs.length}.bin`);
    const fd = openSync(path, 'w', 0o600);
    try {
      writeSync(fd, new Uint8Array(run.buffer, 0, inRun * 8));
    } finally {
      closeSync(fd);
    }
    runs.push({ path, count: inRun });
    inRun = 0;
  };
  const pushSlot = (hi: number, lo: number): void => {
    if (inRun * 2 === run.length) {
      if (inRun === RUN_SLOTS) flushRun();
      else {
        const bigger = new Uint32Array(Math.min(RUN_SLOTS, inRun * 2) * 2);
        bigger.set(run);
        run = bigger;
      }
    }
    run[2 * inRun] = lo;
    run[2 * inRun + 1] = hi;
    inRun++;
  };
  const discard = (): void => {
    process.off('exit', removeDir);
    removeDir();
  };

  return {
    addLine(ids, offset, bytes) {
      const n = lines++;
      if (n >= MAX_LINES) {
        throw new SvcIngestError(
          'LEDGER_READ',
          `ledger ${absPath} has more than ${MAX_LINES} ${status} lines; start a new ledger file`,
          { source: absPath },
        );
      }
      if (n === lineStart.length) {
        const s = new Float64Array(n * 2);
        s.set(lineStart);
        lineStart = s;
        const l = new Uint32Array(n * 2);
        l.set(lineLength);
        lineLength = l;
      }
      lineStart[n] = offset;
      lineLength[n] = bytes;
      let added = 0;
      for (let k = 0; k < ids.length; k++) {
        const id = ids[k];
        if (typeof id !== 'string') continue;
        fingerprint(id, fp);
        pushSlot(fp[0] as number, ((((fp[1] as number) & 0xff) << 24) | n) >>> 0);
        added++;
      }
      return added;
    },
    async finish(shouldStop) {
      let store: SlotStore;
      const total = runs.reduce((n, r) => n + r.count, 0) + inRun;
      if (runs.length === 0) {
        sortSlots(run, inRun);
        store = memoryStore(run, inRun);
      } else {
        if (inRun > 0) flushRun();
        run = new Uint32Array(0);
        const merged = await mergeRuns(dir as string, runs, total, shouldStop);
        if (!merged) {
          discard();
          return null;
        }
        store = merged;
      }
      const index = await sortedIndex(absPath, store, lines, lineStart, lineLength, shouldStop, discard);
      if (!index) {
        store.close();
        discard();
      }
      return index;
    },
    discard,
  };
}

/**
 * Slots with one 40-bit fingerprint: its high 32 bits, its low 8 bits, and the indexed lines they point at.
 * @example { hi: 3735928559, lo8: 17, lines: [4, 90] }
 */
export interface FingerprintGroup {
  hi: number;
  lo8: number;
  lines: number[];
}

/** Orders two fingerprints: negative, zero or positive. */
export function compareFingerprints(a: FingerprintGroup, b: FingerprintGroup): number {
  return a.hi !== b.hi ? a.hi - b.hi : a.lo8 - b.lo8;
}

/**
 * An index of the transactionIds of one status's ledger lines (acked or failed), exact: a fingerprint match is
 * confirmed against the ledger line it points at.
 * @example index.linesOf('t-1') // [3, 17]: the 4th and 18th indexed lines hold t-1; index.line(17).requestId
 */
export interface LedgerLineIndex extends AckedIndex {
  /** Lines indexed (numbered 0.. in file order). */
  readonly lineCount: number;
  /** Numbers of the indexed lines holding the id, ascending. */
  linesOf(id: string): number[];
  /** Indexed line n, read back from the ledger. */
  line(n: number): LedgerLine;
  /** Distinct ids in the indexed lines: each group of equal fingerprints is counted from its lines' text. */
  distinct(): number;
  /** The groups of slots with equal 40-bit fingerprints, in fingerprint order (one sequential read). */
  groups(): Generator<FingerprintGroup>;
  /** The distinct ids of a group's lines that have the group's fingerprint. */
  idsOf(group: FingerprintGroup): Set<string>;
  /** Closes the ledger and the index file and removes the index's temp folder (else removed at exit). */
  close(): void;
}

async function sortedIndex(
  path: string,
  store: SlotStore,
  lineCount: number,
  lineStart: Float64Array,
  lineLength: Uint32Array,
  shouldStop: () => boolean,
  removeTemp: () => void,
): Promise<LedgerLineIndex | null> {
  const count = store.count;
  // Sparse index: the (high, low) key of the first slot of each block.
  const blocks = Math.ceil(count / BLOCK);
  const keyHi = new Uint32Array(blocks);
  const keyLo = new Uint32Array(blocks);
  let distinctFingerprints = 0;
  let prevHi = -1;
  let prevLo8 = -1;
  for (let b = 0; b < blocks; b++) {
    if (b > 0 && b % BLOCKS_PER_TURN === 0) {
      await nextTurn();
      if (shouldStop()) return null;
    }
    const n = Math.min(BLOCK, count - b * BLOCK);
    const w = store.read(b * BLOCK, n);
    keyLo[b] = w[0] as number;
    keyHi[b] = w[1] as number;
    for (let i = 0; i < n; i++) {
      const hi = w[2 * i + 1] as number;
      const lo8 = (w[2 * i] as number) >>> 24;
      if (hi !== prevHi || lo8 !== prevLo8) distinctFingerprints++;
      prevHi = hi;
      prevLo8 = lo8;
    }
  }
  const added = new Set<string>();
  const fp = new Uint32Array(2);
  const cache = new Map<number, Set<string>>();
  let fd: number | undefined;

  /** The text of indexed line n, read back from the file (never through a link). */
  const lineText = (n: number): string => {
    const len = lineLength[n] as number;
    const buf = Buffer.allocUnsafe(len);
    try {
      fd ??= openSync(path, constants.O_RDONLY | NOFOLLOW);
      readSync(fd, buf, 0, len, lineStart[n] as number);
    } catch (err) {
      throw ledgerError(path, err);
    }
    return buf.toString('utf8');
  };

  /** The ids of one indexed ledger line. */
  const lineIds = (n: number): Set<string> => {
    const hit = cache.get(n);
    if (hit) return hit;
    let ids: Set<string>;
    try {
      const line = JSON.parse(lineText(n)) as { transactionIds: unknown[] };
      ids = new Set(line.transactionIds.filter((x): x is string => typeof x === 'string'));
    } catch (err) {
      if (err instanceof SvcIngestError) throw err;
      throw ledgerError(path, err);
    }
    if (cache.size >= CACHED_LINES) cache.delete(cache.keys().next().value as number);
    cache.set(n, ids);
    return ids;
  };

  /**
   * Visits, in ascending order, each indexed line holding the id (the slots with its 40-bit fingerprint whose
   * line has it); stops when `visit` returns true.
   */
  const lookup = (id: string, visit: (n: number) => boolean): void => {
    if (count === 0) return;
    fingerprint(id, fp);
    const hi = fp[0] as number;
    const lo8 = (fp[1] as number) & 0xff;
    // Last block whose first key is below the fingerprint (equal keys may start in the block before).
    let a = 0;
    let b = blocks;
    while (a < b) {
      const m = (a + b) >>> 1;
      const h = keyHi[m] as number;
      if (h < hi || (h === hi && (keyLo[m] as number) >>> 24 < lo8)) a = m + 1;
      else b = m;
    }
    let last = -1;
    for (let blk = Math.max(0, a - 1); blk < blocks; blk++) {
      const n = Math.min(BLOCK, count - blk * BLOCK);
      const w = store.read(blk * BLOCK, n);
      for (let i = 0; i < n; i++) {
        const h = w[2 * i + 1] as number;
        const lo = w[2 * i] as number;
        if (h < hi || (h === hi && lo >>> 24 < lo8)) continue;
        if (h !== hi || lo >>> 24 !== lo8) return;
        const line = lo & 0xffffff;
        // An id written twice in one line has two slots of that line: visit it once.
        if (line !== last && lineIds(line).has(id) && visit(line)) return;
        last = line;
      }
    }
  };

  /** Fingerprint groups in order (see LedgerLineIndex.groups). */
  function* groups(): Generator<FingerprintGroup> {
    // Slots sort by fingerprint: a group is contiguous. Its own buffer, so lookups may run between groups.
    const buf = new Uint32Array(BLOCK * 2);
    let group: FingerprintGroup | undefined;
    for (let b = 0; b < blocks; b++) {
      const n = Math.min(BLOCK, count - b * BLOCK);
      const w = store.read(b * BLOCK, n, buf);
      for (let i = 0; i < n; i++) {
        const hi = w[2 * i + 1] as number;
        const lo = w[2 * i] as number;
        if (group && group.hi === hi && group.lo8 === lo >>> 24) {
          group.lines.push(lo & 0xffffff);
          continue;
        }
        if (group) yield group;
        group = { hi, lo8: lo >>> 24, lines: [lo & 0xffffff] };
      }
    }
    if (group) yield group;
  }

  /** Distinct ids of a group's lines with its fingerprint. */
  const idsOf = (g: FingerprintGroup): Set<string> => {
    const ids = new Set<string>();
    for (const n of new Set(g.lines)) {
      for (const id of lineIds(n)) {
        fingerprint(id, fp);
        if (fp[0] === g.hi && ((fp[1] as number) & 0xff) === g.lo8) ids.add(id);
      }
    }
    return ids;
  };

  return {
    has(id) {
      if (added.has(id)) return true;
      let found = false;
      lookup(id, () => {
        found = true;
        return true;
      });
      return found;
    },
    add(id) {
      added.add(id);
    },
    get size() {
      return distinctFingerprints + added.size;
    },
    lineCount,
    linesOf(id) {
      const out: number[] = [];
      lookup(id, (n) => {
        out.push(n);
        return false;
      });
      return out;
    },
    line(n) {
      if (!(n >= 0 && n < lineCount)) throw new RangeError(`no indexed line ${n}`);
      try {
        return JSON.parse(lineText(n)) as LedgerLine;
      } catch (err) {
        if (err instanceof SvcIngestError) throw err;
        throw ledgerError(path, err);
      }
    },
    distinct() {
      // A group of one slot is one id; a bigger one (the same id in several lines, or ids whose fingerprints
      // collide) is counted from its lines.
      let total = 0;
      for (const g of groups()) total += g.lines.length === 1 ? 1 : idsOf(g).size;
      return total;
    },
    groups,
    idsOf,
    close() {
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
      store.close();
      removeTemp();
    },
  };
}
