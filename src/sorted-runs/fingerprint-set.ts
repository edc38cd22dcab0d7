// A set of ids as 64-bit fingerprints in flat memory: an open-addressing table (8 bytes an id) that spills
// sorted runs (runs.ts) to a temp folder, each behind a Bloom filter and a sparse key per 4 KiB block.
import { endianness } from 'node:os';
import { fingerprint } from './fingerprint.ts';
import {
  createRunFolder,
  discardRun,
  type Merge,
  type RunFile,
  type RunFolder,
  readFully,
  sortSlots,
  startMerge,
  writeRun,
} from './runs.ts';

/**
 * A set of ids kept as 64-bit fingerprints (8-10 bytes an id instead of ~80 for a Set of strings).
 * Two different ids share a fingerprint with probability about n²/2^65 over n ids (3e-6 for 10M).
 * @example const s = createSpillingFingerprintSet(); s.add('t-1'); s.has('t-1') // true
 */
export interface FingerprintSet {
  has(id: string): boolean;
  /** Adds the id; false if (its fingerprint) was already there. */
  add(id: string): boolean;
  readonly size: number;
  /** Releases what the set keeps outside memory; the set is unusable after. */
  close?(): void;
}

/** Slots a block of a run file (4 KiB); one sparse in-memory key per block. */
const RUN_BLOCK = 512;
/** Runs of one size are merged into one 4x bigger, so a lookup checks at most 3 runs a size (~log4 of ids). */
const MERGE_FANIN = 4;
/** Slots a background merge step writes (~2-4 ms on the bench machine). */
const MERGE_STEP = 64 * 1024;
/**
 * Adds between two paid merge steps, and slots merged per add: each id is merged once per level (~log4 of ids
 * over memoryIds: 5 at 500M ids), so 16 an add keeps the runs few while a large merge is under way.
 */
const PAY_EVERY = 4096;
const PAY_SLOTS_PER_ADD = 16;
/** Bloom filter of a run: 512-bit blocks (one cache line), ~10 bits an id, 7 bits set an id (~1% false hits). */
const BLOOM_BITS_PER_ID = 10;
const BLOOM_SALTS = new Int32Array([
  0x47b6137b, 0x44974d91, 0x8824ad5b, 0xa2b7289d, 0x705495c7, 0x2df1424b, 0x9efc4947,
]);

/** A sorted run of fingerprints on disk and its in-memory index (~1.3 bytes an id). */
interface SpilledRun {
  path: string;
  fd: number;
  count: number;
  /** Merges it came out of: the runs of one level have the same size. */
  level: number;
  /** Number of 512-bit Bloom blocks (16 words each). */
  blocks: number;
  bloom: Int32Array;
  /** (high, low) fingerprint of the first slot of each 4 KiB block of the file. */
  keyHi: Uint32Array;
  keyLo: Uint32Array;
}

/** Word offset of a fingerprint's Bloom block: multiply-shift on the high hash. */
const bloomBase = (hi: number, blocks: number) => Math.floor((hi / 4294967296) * blocks) * 16;

/** A run with an empty index (see allocIndex). */
function newRun(path: string, fd: number, count: number, level: number): SpilledRun {
  const none = new Uint32Array(0);
  return { path, fd, count, level, blocks: 0, bloom: new Int32Array(0), keyHi: none, keyLo: none };
}

function allocIndex(run: SpilledRun): void {
  run.blocks = Math.max(1, Math.ceil((run.count * BLOOM_BITS_PER_ID) / 512));
  run.bloom = new Int32Array(run.blocks * 16);
  run.keyHi = new Uint32Array(Math.ceil(run.count / RUN_BLOCK));
  run.keyLo = new Uint32Array(run.keyHi.length);
}

function freeIndex(run: SpilledRun): void {
  run.bloom = new Int32Array(0);
  run.keyHi = new Uint32Array(0);
  run.keyLo = new Uint32Array(0);
}

/** Adds slots [from, from + n) of a run, as sorted [low, high] word pairs, to its Bloom filter and sparse keys. */
function indexSlots(run: SpilledRun, words: Uint32Array, from: number, n: number): void {
  const { bloom, blocks, keyHi, keyLo } = run;
  for (let i = 0; i < n; i++) {
    const lo = words[2 * i] as number;
    const hi = words[2 * i + 1] as number;
    if ((from + i) % RUN_BLOCK === 0) {
      keyLo[(from + i) / RUN_BLOCK] = lo;
      keyHi[(from + i) / RUN_BLOCK] = hi;
    }
    const base = bloomBase(hi, blocks);
    for (let k = 0; k < 7; k++) {
      const bit = Math.imul(lo, BLOOM_SALTS[k] as number) >>> 23;
      const w = base + (bit >>> 5);
      bloom[w] = (bloom[w] as number) | (1 << (bit & 31));
    }
  }
}

/**
 * A FingerprintSet in flat memory: at most `memoryIds` fingerprints (default 500,000, ~5 MB) in an in-memory
 * table; when it is full they are sorted and written as one run file (mode 0600) to
 * a folder made on first need in `dir` (default the OS temp folder), removed on exit or by close(). A run
 * keeps in memory a Bloom filter (~1.25 bytes an id) and one key per 4 KiB block, so a lookup reads the file
 * (one 4 KiB pread) only on a Bloom hit; every 4 runs of one size are merged into one (a lookup checks ~3
 * runs per 4x of ids). If the folder cannot be made or written, the table just keeps growing in memory.
 * @example const s = createSpillingFingerprintSet(); s.add('t-1'); s.has('t-1') // true; s.close?.()
 */
export function createSpillingFingerprintSet(
  opts: { memoryIds?: number; dir?: string } = {},
): FingerprintSet {
  const limit = Math.max(1, Math.floor(opts.memoryIds ?? 500_000));
  const folder = createRunFolder('svc-ingest-seen-', opts.dir);
  // Run files hold slots as little-endian 64-bit words; elsewhere, stay in memory.
  let spilling = endianness() === 'LE';
  // The table starts small and doubles up to its size at `limit` ids: a run of a few ids zeroes no ~5 MB.
  const capAtLimit = Math.ceil(limit / 0.8);
  let cap = Math.min(capAtLimit, START_SLOTS);
  let full = cap === capAtLimit ? limit : Math.floor(cap * 0.8); // entries that make room (grow, spill)
  let slots = new Uint32Array(0); // [low, high] word pairs, so a BigUint64Array view sorts by (high, low)
  let inTable = 0;
  let size = 0;
  let closed = false;
  const runs: SpilledRun[] = [];
  const merger = createMerger(folder, runs);
  const fp = new Uint32Array(2);
  const block = new Uint32Array(RUN_BLOCK * 2);
  const blockBytes = new Uint8Array(block.buffer);

  /** Slot of the fingerprint, or -1 - (the empty slot where it would go). */
  const find = (hi: number, lo: number): number => {
    let i = home(hi, cap);
    for (;;) {
      const l = slots[2 * i] as number;
      if (l === 0) return -1 - i;
      if (l === lo && slots[2 * i + 1] === hi) return i;
      if (++i === cap) i = 0;
    }
  };
  /** A new table of `newCap` slots holding the fingerprints in the first `scan` slots of the old one. */
  const rehash = (newCap: number, scan: number): void => {
    slots = rehashed(slots, scan, newCap);
    cap = newCap;
    full = Math.floor(cap * 0.8);
  };

  /** Writes the first n slots (sorted) as a new run file; the run, or null if the file could not be written. */
  const spill = (n: number): SpilledRun | null => {
    let file: RunFile;
    try {
      file = writeRun(folder, slots, n);
    } catch {
      return null;
    }
    const run = newRun(file.path, file.fd, n, 0);
    allocIndex(run);
    indexSlots(run, slots, 0, n);
    return run;
  };

  /** The table is full: grow it (up to its size at `limit`), or move its fingerprints to a sorted run on disk. */
  const makeRoom = (): void => {
    if (cap < capAtLimit || !spilling) {
      rehash(cap < capAtLimit ? Math.min(capAtLimit, 2 * cap) : Math.ceil(cap * 1.5), cap);
      if (cap === capAtLimit) full = limit;
      return;
    }
    const n = compact(slots, cap);
    sortSlots(slots, n);
    const run = spill(n);
    if (!run) {
      spilling = false;
      rehash(Math.ceil(cap * 1.5), n);
      return;
    }
    runs.push(run);
    slots.fill(0);
    inTable = 0;
    merger.startNext();
  };

  const checkOpen = (): void => {
    if (closed) throw new Error('the seen-ids set is closed');
  };

  return {
    has(id) {
      checkOpen();
      fingerprint(id, fp);
      const hi = fp[0] as number;
      const lo = fp[1] as number;
      return (
        (inTable > 0 && find(hi, lo) >= 0) || (runs.length > 0 && inRuns(runs, hi, lo, block, blockBytes))
      );
    },
    add(id) {
      checkOpen();
      fingerprint(id, fp);
      const hi = fp[0] as number;
      const lo = fp[1] as number;
      if (slots.length === 0) slots = new Uint32Array(cap * 2);
      let at = find(hi, lo);
      if (at >= 0 || (runs.length > 0 && inRuns(runs, hi, lo, block, blockBytes))) return false;
      if (inTable >= full) {
        makeRoom();
        at = find(hi, lo);
      }
      const i = -1 - at;
      slots[2 * i] = lo;
      slots[2 * i + 1] = hi;
      inTable++;
      size++;
      merger.pay();
      return true;
    },
    get size() {
      return size;
    },
    close() {
      if (closed) return;
      closed = true;
      merger.close();
      folder.remove(runs);
      runs.length = 0;
      slots = new Uint32Array(0);
    },
  };
}

/** The table's first size, in slots (it doubles up to its size at memoryIds). */
const START_SLOTS = 4096;

/** A fingerprint's home slot in a table of `c` slots: multiply-shift on the high hash. */
const home = (hi: number, c: number) => Math.floor((hi / 4294967296) * c);

/** Moves the fingerprints of a table of `cap` slots to its first slots, in place; how many there are. */
function compact(slots: Uint32Array, cap: number): number {
  let n = 0;
  for (let i = 0; i < cap; i++) {
    const lo = slots[2 * i] as number;
    if (lo === 0) continue;
    slots[2 * n] = lo;
    slots[2 * n + 1] = slots[2 * i + 1] as number;
    n++;
  }
  return n;
}

/** A table of `cap` slots holding the fingerprints in the first `scan` slots of `old`. */
function rehashed(old: Uint32Array, scan: number, cap: number): Uint32Array<ArrayBuffer> {
  const slots = new Uint32Array(cap * 2);
  for (let k = 0; k < scan; k++) {
    const lo = old[2 * k] as number;
    if (lo === 0) continue;
    const hi = old[2 * k + 1] as number;
    let i = home(hi, cap);
    while (slots[2 * i] !== 0) if (++i === cap) i = 0;
    slots[2 * i] = lo;
    slots[2 * i + 1] = hi;
  }
  return slots;
}

/** The merges of a set's runs (below), started as runs are spilled, stepped in the background and paid by adds. */
interface Merger {
  /** Starts the next merge that is due, if none is under way. */
  startNext(): void;
  /** One add made: every PAY_EVERY adds, a step of the merge under way. */
  pay(): void;
  /** Drops the merge under way (its output file goes with the run folder). */
  close(): void;
}

function createMerger(folder: RunFolder, runs: SpilledRun[]): Merger {
  let merging = true;
  let closed = false;
  /**
   * The merge under way: MERGE_FANIN runs of one level (still answering lookups, indexes kept) merged into one
   * run, a bounded step at a time, so no step pauses the event loop for long (issue 14: the whole merge at 16M ids
   * was a ~1.5 s pause). Steps run on setImmediate between other work, and every PAY_EVERY adds pay for a step, so
   * merging keeps up with a thread that never idles. The merged run replaces its inputs only when complete.
   */
  let pending: { inputs: SpilledRun[]; merged: SpilledRun; m: Merge; left: number } | null = null;
  let tick: NodeJS.Immediate | null = null;
  let addsSincePay = 0;

  /** The first MERGE_FANIN runs of one level (levels only decrease along `runs`, so equal levels are adjacent). */
  const mergeable = (): SpilledRun[] | null => {
    for (let i = 0; i + MERGE_FANIN <= runs.length; ) {
      const level = (runs[i] as SpilledRun).level;
      let j = i;
      while (j < runs.length && (runs[j] as SpilledRun).level === level) j++;
      if (j - i >= MERGE_FANIN) return runs.slice(i, i + MERGE_FANIN);
      i = j;
    }
    return null;
  };

  /** Starts the next merge that is due, if none is under way. */
  const startNext = (): void => {
    if (!merging || pending !== null || closed) return;
    const inputs = mergeable();
    if (!inputs) return;
    let merged: SpilledRun | undefined;
    try {
      const m = startMerge(folder, inputs, (words, n, at) => indexSlots(merged as SpilledRun, words, at, n));
      merged = newRun(m.out.path, m.out.fd, m.out.count, (inputs[0] as SpilledRun).level + 1);
      allocIndex(merged);
      pending = { inputs, merged, m, left: m.out.count };
    } catch {
      merging = false; // the runs stay as they are, each with its index
      return;
    }
    schedule();
  };

  /** Merges up to `budget` slots; a merge that completes takes its inputs' place and the next one due goes on. */
  const advance = (budget: number): void => {
    while (budget > 0 && pending !== null) {
      const p = pending;
      const n = Math.min(budget, p.left);
      let done: boolean;
      try {
        done = p.m.step(n);
      } catch {
        p.m.abort();
        pending = null;
        merging = false;
        return;
      }
      budget -= n;
      p.left -= n;
      if (!done) continue;
      pending = null;
      runs.splice(runs.indexOf(p.inputs[0] as SpilledRun), MERGE_FANIN, p.merged);
      for (const r of p.inputs) {
        freeIndex(r);
        discardRun(r);
      }
      startNext();
    }
  };

  function schedule(): void {
    if (tick !== null || pending === null) return;
    tick = setImmediate(() => {
      tick = null;
      advance(MERGE_STEP);
      schedule();
    });
    tick.unref(); // a merge never keeps the process alive; close() drops it
  }

  return {
    startNext,
    pay() {
      if (pending !== null && ++addsSincePay >= PAY_EVERY) {
        addsSincePay = 0;
        advance(PAY_EVERY * PAY_SLOTS_PER_ADD);
      }
    },
    close() {
      closed = true;
      if (tick !== null) clearImmediate(tick);
      tick = null;
      if (pending !== null) {
        pending.m.abort();
        pending = null;
      }
    },
  };
}

/** Is the fingerprint in this run? Reads the one 4 KiB block that may hold it (a run's keys are distinct). */
function inRun(run: SpilledRun, hi: number, lo: number, block: Uint32Array, blockBytes: Uint8Array): boolean {
  const { keyHi, keyLo } = run;
  let a = 0;
  let b = keyHi.length;
  while (a < b) {
    const m = (a + b) >>> 1;
    const h = keyHi[m] as number;
    if (h < hi || (h === hi && (keyLo[m] as number) <= lo)) a = m + 1;
    else b = m;
  }
  if (a === 0) return false;
  const blk = a - 1;
  const n = Math.min(RUN_BLOCK, run.count - blk * RUN_BLOCK);
  readFully(run.fd, blockBytes, n * 8, blk * RUN_BLOCK * 8);
  let x = 0;
  let y = n - 1;
  while (x <= y) {
    const m = (x + y) >>> 1;
    const h = block[2 * m + 1] as number;
    const l = block[2 * m] as number;
    if (h === hi && l === lo) return true;
    if (h < hi || (h === hi && l < lo)) x = m + 1;
    else y = m - 1;
  }
  return false;
}

/** Is the fingerprint in one of the runs? Each run's Bloom filter first, the newest run first. */
function inRuns(
  runs: SpilledRun[],
  hi: number,
  lo: number,
  block: Uint32Array,
  blockBytes: Uint8Array,
): boolean {
  for (let r = runs.length - 1; r >= 0; r--) {
    const run = runs[r] as SpilledRun;
    const bloom = run.bloom;
    const base = bloomBase(hi, run.blocks);
    let k = 0;
    for (; k < 7; k++) {
      const bit = Math.imul(lo, BLOOM_SALTS[k] as number) >>> 23;
      if (((bloom[base + (bit >>> 5)] as number) & (1 << (bit & 31))) === 0) break;
    }
    if (k === 7 && inRun(run, hi, lo, block, blockBytes)) return true;
  }
  return false;
}
