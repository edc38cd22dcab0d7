// Sorted runs on disk: the one external sort of the tool. 64-bit slots ([low, high] 32-bit word pairs, so a
// BigUint64Array view sorts them by (high, low)) are sorted in memory, written as run files (mode 0600) to a temp
// folder removed at exit, and merged k ways into one sorted file, in steps (so a caller may yield between them).
// Two users: the set of fingerprints (fingerprint-set.ts: the within-run duplicate check, known rejects) and the
// resume index of the file ledger (collectSlots below: slots from a stream into one sorted file).
import { closeSync, mkdtempSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';

/** Sorts the first `count` slots of `words` by (high, low). */
export function sortSlots(words: Uint32Array, count: number): void {
  new BigUint64Array(words.buffer, words.byteOffset, count).sort();
}

/** Reads exactly n bytes at `position`, or throws (a run file shorter than written). */
export function readFully(fd: number, bytes: Uint8Array, n: number, position: number): void {
  for (let got = 0; got < n; ) {
    const r = readSync(fd, bytes, got, n - got, position + got);
    if (r === 0) throw new Error('a sorted-run file is shorter than written');
    got += r;
  }
}

function writeFully(fd: number, bytes: Uint8Array, n: number, position: number): void {
  for (let put = 0; put < n; ) put += writeSync(fd, bytes, put, n - put, position + put);
}

/** One sorted run file: `count` slots. */
export interface RunFile {
  path: string;
  fd: number;
  count: number;
}

/**
 * A temp folder for run files (`<parent>/<prefix>XXXXXX`), made on first need and removed by remove() or
 * when the process exits.
 */
export interface RunFolder {
  /** A new empty run file (mode 0600). Throws when the folder or the file cannot be made. */
  create(): { path: string; fd: number };
  /** Closes the given files and removes the folder (never throws). */
  remove(open?: readonly RunFile[]): void;
}

export function createRunFolder(prefix: string, parent = tmpdir()): RunFolder {
  let dir: string | undefined;
  let seq = 0;
  const removeDir = (): void => {
    try {
      if (dir) rmSync(dir, { recursive: true, force: true });
    } catch {
      // left for the OS to clean up: never fail a run over a temp folder
    }
  };
  return {
    create() {
      if (!dir) {
        dir = mkdtempSync(join(parent, prefix));
        // Also when the process ends while the runs are in use (a signal, an error).
        process.once('exit', removeDir);
      }
      const path = join(dir, `run-${seq++}.bin`);
      return { path, fd: openSync(path, 'w+', 0o600) };
    },
    remove(open = []) {
      for (const r of open) closeRun(r);
      process.off('exit', removeDir);
      removeDir();
    },
  };
}

/** Closes a run's file and deletes it (never throws). */
export function discardRun(run: { path: string; fd: number }): void {
  closeRun(run);
  try {
    rmSync(run.path, { force: true });
  } catch {
    // nothing more to undo
  }
}

function closeRun(run: { fd: number }): void {
  try {
    if (run.fd >= 0) closeSync(run.fd);
  } catch {
    // already closed
  }
  run.fd = -1;
}

/** Writes the first `count` slots of `words` (sorted) as a new run file of `folder`. Throws on failure. */
export function writeRun(folder: RunFolder, words: Uint32Array, count: number): RunFile {
  const file = folder.create();
  try {
    writeFully(file.fd, new Uint8Array(words.buffer, words.byteOffset, count * 8), count * 8, 0);
  } catch (err) {
    discardRun(file);
    throw err;
  }
  return { ...file, count };
}

/** Slots buffered per run while merging (512 KiB). */
const MERGE_CHUNK = 64 * 1024;

/**
 * A k-way merge of sorted runs into one new run of `folder`, done in steps. `onOut` sees each piece of merged
 * slots as it is written, with the number of slots written before it (to build an index alongside).
 */
export interface Merge {
  /** Merges up to `budget` slots; true once every slot is written. Throws on an i/o error. */
  step(budget: number): boolean;
  /** The merged run (after the last step). */
  readonly out: RunFile;
  /** Deletes the output (a failed or stopped merge); the inputs are left as they were. */
  abort(): void;
}

export function startMerge(
  folder: RunFolder,
  inputs: readonly RunFile[],
  onOut?: (words: Uint32Array, n: number, at: number) => void,
): Merge {
  const total = inputs.reduce((n, r) => n + r.count, 0);
  const file = folder.create();
  const out: RunFile = { ...file, count: total };
  const buf = new Uint32Array(MERGE_CHUNK * 2);
  let outLen = 0;
  let written = 0;
  const cursors = inputs.map((r) => ({
    fd: r.fd,
    pos: 0,
    left: r.count,
    buf: new Uint32Array(MERGE_CHUNK * 2),
    at: 0,
    len: 0,
  }));
  type Cursor = (typeof cursors)[number];
  const refill = (c: Cursor): boolean => {
    if (c.at < c.len) return true;
    if (c.left === 0) return false;
    const n = Math.min(MERGE_CHUNK, c.left);
    readFully(c.fd, new Uint8Array(c.buf.buffer), n * 8, c.pos * 8);
    c.pos += n;
    c.left -= n;
    c.at = 0;
    c.len = n;
    return true;
  };
  const flush = (): void => {
    writeFully(out.fd, new Uint8Array(buf.buffer), outLen * 8, written * 8);
    onOut?.(buf, outLen, written);
    written += outLen;
    outLen = 0;
  };
  let live: Cursor[] | undefined;
  return {
    out,
    step(budget) {
      live ??= cursors.filter(refill);
      for (let done = 0; done < budget && live.length > 0; done++) {
        // A few runs: a linear pick of the smallest head is enough.
        let best = 0;
        let c = live[0] as Cursor;
        for (let k = 1; k < live.length; k++) {
          const a = live[k] as Cursor;
          const ah = a.buf[2 * a.at + 1] as number;
          const ch = c.buf[2 * c.at + 1] as number;
          if (ah < ch || (ah === ch && (a.buf[2 * a.at] as number) < (c.buf[2 * c.at] as number))) {
            best = k;
            c = a;
          }
        }
        buf[2 * outLen] = c.buf[2 * c.at] as number;
        buf[2 * outLen + 1] = c.buf[2 * c.at + 1] as number;
        c.at++;
        if (++outLen === MERGE_CHUNK) flush();
        if (!refill(c)) live.splice(best, 1);
      }
      if (live.length > 0) return false;
      if (outLen > 0) flush();
      return true;
    },
    abort() {
      discardRun(out);
    },
  };
}

/** Sorted slots, in memory (few) or in one run file read by block. */
export interface SortedSlots {
  readonly count: number;
  /** Words of slots [from, from + n) (a view valid until the next call with the same `into`). */
  read(from: number, n: number, into?: Uint32Array): Uint32Array;
  /** Releases the file and its folder. */
  close(): void;
}

/** Gathers slots (from a stream of any length) into sorted runs; finish() merges them into one SortedSlots. */
export interface SlotCollector {
  push(hi: number, lo: number): void;
  /** The sorted slots, or null when `shouldStop()` turned true while merging (its files are removed). */
  finish(shouldStop: () => boolean): Promise<SortedSlots | null>;
  /** Removes what was written so far (after a failed or stopped read). */
  discard(): void;
}

/** Slots merged between two looks at `shouldStop` (and two turns of the event loop, so a signal handler runs). */
const SLOTS_PER_TURN = 1 << 16;

/**
 * A collector that sorts `runSlots` slots in memory at a time (default 4M, 32 MiB) and writes each full run to
 * a temp folder named `prefix` (in `parent`, default the OS temp folder); fewer slots than that never touch the disk.
 * @example const c = collectSlots('svc-ingest-index-'); c.push(hi, lo); const sorted = await c.finish(() => false)
 */
export function collectSlots(prefix: string, runSlots = 4 * 1024 * 1024, parent?: string): SlotCollector {
  let run = new Uint32Array(Math.min(1024, runSlots) * 2);
  let inRun = 0;
  const folder = createRunFolder(prefix, parent);
  const runs: RunFile[] = [];
  const flushRun = (): void => {
    sortSlots(run, inRun);
    runs.push(writeRun(folder, run, inRun));
    inRun = 0;
  };
  const discard = (): void => folder.remove(runs);
  return {
    push(hi, lo) {
      if (inRun * 2 === run.length) {
        if (inRun >= runSlots) flushRun();
        else {
          const bigger = new Uint32Array(Math.min(runSlots, inRun * 2) * 2);
          bigger.set(run);
          run = bigger;
        }
      }
      run[2 * inRun] = lo;
      run[2 * inRun + 1] = hi;
      inRun++;
    },
    async finish(shouldStop) {
      if (runs.length === 0) {
        sortSlots(run, inRun);
        const words = run;
        const count = inRun;
        return { count, read: (from, n) => words.subarray(2 * from, 2 * (from + n)), close() {} };
      }
      if (inRun > 0) flushRun();
      run = new Uint32Array(0);
      const merge = startMerge(folder, runs);
      while (!merge.step(SLOTS_PER_TURN)) {
        await nextTurn();
        if (shouldStop()) {
          discard();
          return null;
        }
      }
      for (const r of runs.splice(0)) discardRun(r);
      const { fd, count } = merge.out;
      const block = new Uint32Array(512 * 2);
      return {
        count,
        read(from, n, into = block) {
          readFully(fd, new Uint8Array(into.buffer, into.byteOffset, n * 8), n * 8, from * 8);
          return into.subarray(0, 2 * n);
        },
        close() {
          folder.remove([merge.out]);
        },
      };
    },
    discard,
  };
}
