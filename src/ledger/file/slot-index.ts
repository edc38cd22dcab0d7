// The sorted index of one status's ledger lines (acked or failed), built while acked-index.ts reads the ledger: each
// id one 64-bit slot (a 40-bit fingerprint and the number of its line, 24 bits), the slots sorted in runs and merged
// into one file in the temp folder (sorted-runs/runs.ts), searched through a sparse in-memory key per 4 KiB block;
// a fingerprint match is confirmed against its line read back from the ledger (line-reader.ts).
import { setImmediate as nextTurn } from 'node:timers/promises';
import { SvcIngestError } from '../../errors.ts';
import { fingerprint } from '../../sorted-runs/fingerprint.ts';
import { collectSlots, type SortedSlots } from '../../sorted-runs/runs.ts';
import type { LedgerLine } from './line.ts';
import { createLineReader } from './line-reader.ts';

/** Set of acknowledged transactionIds, built from the ledger at start and grown as batches are acked. */
export interface AckedIndex {
  has(id: string): boolean;
  add(id: string): void;
  readonly size: number;
  /** Whether lines without a destination answer (see LedgerLineIndex.countLegacy); absent: nothing to decide. */
  countLegacy?(yes: boolean): void;
}

/** Work between two looks at `shouldStop` (and two turns of the event loop, so a signal handler runs). */
const BLOCKS_PER_TURN = 1 << 12;

const MAX_LINES = 1 << 24;
/** Slots per block of the on-disk index (4 KiB), one sparse key per block. */
const BLOCK = 512;

/** Gathers the slots of one status's lines while the ledger is read, then sorts them into an index. */
export interface SlotCollector {
  /** Indexes one line's ids (`legacy`: a line without a destination); returns how many were indexed (the string ones). */
  addLine(ids: unknown[], offset: number, bytes: number, legacy?: boolean): number;
  /** The index, or null when `shouldStop()` turned true while merging or indexing (its files are removed). */
  finish(shouldStop: () => boolean): Promise<LedgerLineIndex | null>;
  /** Removes what was written so far (after a failed or stopped read). */
  discard(): void;
}

export function createCollector(absPath: string, status: 'acked' | 'failed'): SlotCollector {
  // Slots sorted in memory 4M at a time (32 MiB); a ledger with fewer ids than that never touches the disk.
  const slots = collectSlots('svc-ingest-index-');
  let lineStart = new Float64Array(1024);
  let lineLength = new Uint32Array(1024);
  // 1 for a line without a destination (written before they were recorded): answers only while legacy counts.
  let lineLegacy = new Uint8Array(1024);
  let lines = 0;
  const fp = new Uint32Array(2);
  return {
    addLine(ids, offset, bytes, legacy) {
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
        const g = new Uint8Array(n * 2);
        g.set(lineLegacy);
        lineLegacy = g;
      }
      lineStart[n] = offset;
      lineLength[n] = bytes;
      lineLegacy[n] = legacy ? 1 : 0;
      let added = 0;
      for (let k = 0; k < ids.length; k++) {
        const id = ids[k];
        if (typeof id !== 'string') continue;
        fingerprint(id, fp);
        slots.push(fp[0] as number, ((((fp[1] as number) & 0xff) << 24) | n) >>> 0);
        added++;
      }
      return added;
    },
    async finish(shouldStop) {
      const store = await slots.finish(shouldStop);
      if (!store) return null;
      const index = await sortedIndex(absPath, store, lines, lineStart, lineLength, lineLegacy, shouldStop);
      if (!index) {
        store.close();
        slots.discard();
      }
      return index;
    },
    discard: () => slots.discard(),
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
  /**
   * Whether lines without a destination answer (default true): false when they were adopted for another
   * destination than the one indexed for.
   */
  countLegacy(yes: boolean): void;
  /** Whether indexed line n answers (false: a line without a destination while legacy lines do not count). */
  counts(n: number): boolean;
}

/** The sparse index of sorted slots: the (high, low) key of the first slot of each block; distinct fingerprints. */
async function scanKeys(
  store: SortedSlots,
  shouldStop: () => boolean,
): Promise<{ blocks: number; keyHi: Uint32Array; keyLo: Uint32Array; distinctFingerprints: number } | null> {
  const count = store.count;
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
  return { blocks, keyHi, keyLo, distinctFingerprints };
}

/** What the steps below read of one sorted index: its slots, their sparse keys, and the lines they point at. */
interface SlotView {
  store: SortedSlots;
  count: number;
  blocks: number;
  keyHi: Uint32Array;
  keyLo: Uint32Array;
  /** Whether indexed line n answers (see LedgerLineIndex.counts). */
  lineOk: (n: number) => boolean;
  /** The ids of indexed line n, read back from the ledger. */
  lineIds: (n: number) => Set<string>;
  /** Scratch for one fingerprint. */
  fp: Uint32Array;
}

/**
 * Visits, in ascending order, each indexed line holding the id (the slots with its 40-bit fingerprint whose
 * line has it); stops when `visit` returns true.
 */
function lookup(v: SlotView, id: string, visit: (n: number) => boolean): void {
  const { store, count, blocks, keyHi, keyLo, fp } = v;
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
      if (line !== last && v.lineOk(line) && v.lineIds(line).has(id) && visit(line)) return;
      last = line;
    }
  }
}

/** Fingerprint groups in order (see LedgerLineIndex.groups). */
function* groupsOf(v: SlotView): Generator<FingerprintGroup> {
  const { store, count, blocks } = v;
  // Slots sort by fingerprint: a group is contiguous. Its own buffer, so lookups may run between groups.
  const buf = new Uint32Array(BLOCK * 2);
  let group: FingerprintGroup | undefined;
  for (let b = 0; b < blocks; b++) {
    const n = Math.min(BLOCK, count - b * BLOCK);
    const w = store.read(b * BLOCK, n, buf);
    for (let i = 0; i < n; i++) {
      const hi = w[2 * i + 1] as number;
      const lo = w[2 * i] as number;
      if (!v.lineOk(lo & 0xffffff)) continue;
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
function idsOfGroup(v: SlotView, g: FingerprintGroup): Set<string> {
  const { fp } = v;
  const ids = new Set<string>();
  for (const n of new Set(g.lines)) {
    for (const id of v.lineIds(n)) {
      fingerprint(id, fp);
      if (fp[0] === g.hi && ((fp[1] as number) & 0xff) === g.lo8) ids.add(id);
    }
  }
  return ids;
}

async function sortedIndex(
  path: string,
  store: SortedSlots,
  lineCount: number,
  lineStart: Float64Array,
  lineLength: Uint32Array,
  lineLegacy: Uint8Array,
  shouldStop: () => boolean,
): Promise<LedgerLineIndex | null> {
  let legacyCounts = true;
  const lineOk = (n: number): boolean => legacyCounts || lineLegacy[n] !== 1;
  const keys = await scanKeys(store, shouldStop);
  if (!keys) return null;
  const { blocks, keyHi, keyLo } = keys;
  const added = new Set<string>();
  const lines = createLineReader(path, lineStart, lineLength);
  const v: SlotView = {
    store,
    count: store.count,
    blocks,
    keyHi,
    keyLo,
    lineOk,
    lineIds: lines.ids,
    fp: new Uint32Array(2),
  };
  const groups = (): Generator<FingerprintGroup> => groupsOf(v);
  const idsOf = (g: FingerprintGroup): Set<string> => idsOfGroup(v, g);

  return {
    has(id) {
      if (added.has(id)) return true;
      let found = false;
      lookup(v, id, () => {
        found = true;
        return true;
      });
      return found;
    },
    add(id) {
      added.add(id);
    },
    get size() {
      return keys.distinctFingerprints + added.size;
    },
    lineCount,
    linesOf(id) {
      const out: number[] = [];
      lookup(v, id, (n) => {
        out.push(n);
        return false;
      });
      return out;
    },
    line(n) {
      if (!(n >= 0 && n < lineCount)) throw new RangeError(`no indexed line ${n}`);
      return lines.line(n);
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
      lines.close();
      store.close();
    },
    countLegacy(yes) {
      legacyCounts = yes;
    },
    counts: lineOk,
  };
}
