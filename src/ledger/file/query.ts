// Questions asked of one or more ledgers: status (runs, counts, outstanding failures), the outstanding failed
// ids (which lines name given ids: find.ts). Flat memory at any ledger size: acked and failed ids live in the sorted
// fingerprint indexes of acked-index.ts (exact), and `find` streams.
import { resolve } from 'node:path';
import { SvcIngestError } from '../../errors.ts';
import { fingerprint } from '../../sorted-runs/fingerprint.ts';
import type { DestinationStatus, LedgerRun, LedgerStatus, OutstandingFailure } from '../status.ts';
import { loadLedgerIndexes } from './acked-index.ts';
import { checkStateFile } from './files.ts';
import { lineContext, str } from './find.ts';
import type { LedgerLine } from './line.ts';
import type { LedgerReadStats } from './read.ts';
import { compareFingerprints, type FingerprintGroup, type LedgerLineIndex } from './slot-index.ts';

const missing = (p: string) => new SvcIngestError('LEDGER_READ', `ledger ${p}: no such file`, { source: p });

/**
 * Each path must name an existing regular file (a ledger that is missing is an error for a reader: a mistyped
 * path must not read as an empty ledger); a directory, a link or a special file is refused as every state file
 * is (LEDGER_PATH_INVALID). Returns the paths without repeats, in the order given.
 * @example await checkLedgerPaths(['ledger/transactions.ndjson']) // throws LEDGER_READ for a missing file
 */
export async function checkLedgerPaths(paths: string[]): Promise<string[]> {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const p of paths) {
    const abs = resolve(p);
    if (seen.has(abs)) continue;
    seen.add(abs);
    if (!(await checkStateFile(p, 'ledger'))) throw missing(p);
    out.push(p);
  }
  return out;
}

interface LoadedLedger {
  path: string;
  acked: LedgerLineIndex;
  failed: LedgerLineIndex;
  stats: LedgerReadStats;
}

/** What the ledgers given together know of destinations (the first adoption recorded in any of them). */
interface Destinations {
  known: string[];
  adoptedFor: string | undefined;
  /** Lines without a destination, none adopted yet. */
  unadopted: boolean;
}

/**
 * Load every ledger's acked and failed indexes; with `destination`, only its lines and the lines written before
 * destinations were recorded, which answer when they were adopted for it.
 */
async function loadAll(
  paths: string[],
  onLine?: (line: LedgerLine) => void,
  destination?: string,
): Promise<{ ledgers: LoadedLedger[]; destinations: Destinations }> {
  const out: LoadedLedger[] = [];
  const known = new Set<string>();
  let adoptedFor: string | undefined;
  let legacy = 0;
  try {
    for (const path of paths) {
      const r = await loadLedgerIndexes(path, {
        failed: true,
        ...(onLine ? { onLine } : {}),
        ...(destination === undefined ? {} : { destination }),
      });
      // Paths are checked first (checkLedgerPaths) and nothing here asks to stop: a file gone since is an error.
      if (r === undefined || r === 'stopped') throw missing(path);
      out.push({ path, acked: r.acked, failed: r.failed as LedgerLineIndex, stats: r.stats });
      for (const d of r.census.seen) known.add(d);
      adoptedFor ??= r.census.adoptedFor;
      legacy += r.census.legacy;
    }
  } catch (err) {
    closeAll(out);
    throw err;
  }
  if (destination !== undefined)
    for (const l of out) {
      l.acked.countLegacy(adoptedFor === destination);
      l.failed.countLegacy(adoptedFor === destination);
    }
  return {
    ledgers: out,
    destinations: { known: [...known], adoptedFor, unadopted: legacy > 0 && adoptedFor === undefined },
  };
}

function closeAll(ledgers: LoadedLedger[]): void {
  for (const l of ledgers) {
    l.acked.close();
    l.failed.close();
  }
}

/**
 * The failed lines that hold the last failure of an outstanding id, each with those ids, in file order
 * (ledgers in the order given). An id counts once, at its last failure (a later ledger's failure is later).
 */
async function* outstandingLines(
  ledgers: LoadedLedger[],
): AsyncGenerator<{ ledger: LoadedLedger; line: LedgerLine; ids: Array<{ id: string; failures: number }> }> {
  for (let f = 0; f < ledgers.length; f++) {
    const here = ledgers[f] as LoadedLedger;
    for (let n = 0; n < here.failed.lineCount; n++) {
      if ((n & 1023) === 1023) await breathe();
      if (!here.failed.counts(n)) continue;
      const line = here.failed.line(n);
      const ids: Array<{ id: string; failures: number }> = [];
      const inLine = new Set<string>();
      for (const id of line.transactionIds as unknown[]) {
        if (typeof id !== 'string' || inLine.has(id)) continue;
        inLine.add(id);
        if (ledgers.some((l) => l.acked.has(id))) continue;
        const mine = here.failed.linesOf(id);
        if (mine[mine.length - 1] !== n) continue; // failed again later in this ledger
        if (ledgers.slice(f + 1).some((l) => l.failed.has(id))) continue; // …or in a later one
        let failures = mine.length;
        for (let e = 0; e < f; e++) failures += (ledgers[e] as LoadedLedger).failed.linesOf(id).length;
        ids.push({ id, failures });
      }
      if (ids.length > 0) yield { ledger: here, line, ids };
    }
  }
}

/**
 * Every outstanding failed id of the ledgers (each once, with its last failure), in ledger order.
 * @example for await (const f of outstandingFailures(['ledger/transactions.ndjson'])) console.log(f.transactionId)
 */
export async function* outstandingFailures(
  paths: string[],
  stats?: (path: string, s: LedgerReadStats) => void,
  opts: { destination?: string } = {},
): AsyncGenerator<OutstandingFailure> {
  const { ledgers, destinations } = await loadAll(paths, undefined, opts.destination);
  // Several destinations: each one's outstanding ids (failed for it, never acknowledged by it), one after the other.
  if (opts.destination === undefined && destinations.known.length > 1) {
    closeAll(ledgers);
    for (const [k, d] of destinations.known.entries())
      yield* outstandingFailures(paths, k === 0 ? stats : undefined, { destination: d });
    return;
  }
  const adopted = opts.destination ?? destinations.adoptedFor ?? null;
  try {
    for (const l of ledgers) stats?.(l.path, l.stats);
    for await (const { ledger, line, ids } of outstandingLines(ledgers)) {
      const ctx = lineContext(line);
      ctx.destination ??= adopted;
      for (const { id, failures } of ids) {
        yield {
          transactionId: id,
          failures,
          error: str(line.error),
          httpStatus: ctx.httpStatus,
          attempts: ctx.attempts,
          ts: ctx.ts,
          batchId: ctx.batchId,
          requestId: ctx.requestId,
          clientRequestId: ctx.clientRequestId,
          runId: ctx.runId,
          source: ctx.source,
          lines: ctx.lines,
          destination: ctx.destination,
          ledger: ledger.path,
        };
      }
    }
  } finally {
    closeAll(ledgers);
  }
}

const MAX_RUN_SOURCES = 20;

/**
 * Status of the ledgers: one read of each (building its acked and failed indexes), then the failed lines
 * read back for the outstanding ids.
 * @example const s = await ledgerStatus(['ledger/transactions.ndjson']); s.ids.outstanding
 */
export async function ledgerStatus(
  paths: string[],
  opts: { destination?: string } = {},
): Promise<LedgerStatus> {
  if (opts.destination !== undefined) return (await statusOf(paths, opts.destination)).status;
  const { status, destinations } = await statusOf(paths, undefined);
  const one = destinations.known.length <= 1 && !(destinations.unadopted && destinations.known.length === 1);
  if (one) {
    const destination = destinations.known[0] ?? null;
    return { ...status, destinations: [{ destination, batches: status.batches, ids: status.ids }] };
  }
  // Several destinations: each one answered on its own (one more read of the ledgers each), the totals their sums.
  const per: DestinationStatus[] = [];
  for (const d of destinations.known) {
    const s = (await statusOf(paths, d)).status;
    per.push({ destination: d, batches: s.batches, ids: s.ids });
  }
  const total = (pick: (d: DestinationStatus) => number) => per.reduce((s, d) => s + pick(d), 0);
  return {
    ...status,
    batches: { ...status.batches, outstanding: total((d) => d.batches.outstanding) },
    ids: {
      ...status.ids,
      ackedDistinct: total((d) => d.ids.ackedDistinct),
      outstanding: total((d) => d.ids.outstanding),
    },
    destinations: per,
  };
}

/** The status of the ledgers, or of one destination's lines in them (and the lines it adopted). */
async function statusOf(
  paths: string[],
  only: string | undefined,
): Promise<{ status: LedgerStatus; destinations: Destinations }> {
  // Keyed by run id; lines without a destination under their own key, kept at the end only if they count.
  const runs = new Map<string, LedgerRun & { sourceSet: Set<string>; legacy: boolean }>();
  const runOf = (runId: string | null, legacy: boolean, destination: string | null) => {
    const key = `${legacy ? 'L' : 'D'}${runId ?? '\0'}`;
    let r = runs.get(key);
    if (!r) {
      r = {
        destination,
        legacy,
        runId,
        firstTs: null,
        lastTs: null,
        batches: { acked: 0, failed: 0 },
        ids: { acked: 0, failed: 0, outstanding: 0 },
        sources: [],
        sourceSet: new Set(),
      };
      runs.set(key, r);
    }
    return r;
  };
  const onLine = (line: LedgerLine): void => {
    const destination = str(line.destination);
    if (only !== undefined && destination !== null && destination !== only) return;
    const r = runOf(str(line.runId), destination === null, destination);
    const ts = str(line.ts);
    if (ts !== null) {
      if (r.firstTs === null || ts < r.firstTs) r.firstTs = ts;
      if (r.lastTs === null || ts > r.lastTs) r.lastTs = ts;
    }
    const n = line.transactionIds.length;
    if (line.status === 'acked') {
      r.batches.acked++;
      r.ids.acked += n;
    } else {
      r.batches.failed++;
      r.ids.failed += n;
    }
    const source = str(line.source);
    if (source !== null && r.sourceSet.size < MAX_RUN_SOURCES) r.sourceSet.add(source);
  };

  const { ledgers, destinations } = await loadAll(paths, onLine, only);
  try {
    let outstandingBatches = 0;
    let outstandingIds = 0;
    for await (const { line, ids } of outstandingLines(ledgers)) {
      outstandingBatches++;
      outstandingIds += ids.length;
      const destination = str(line.destination);
      runOf(str(line.runId), destination === null, destination).ids.outstanding += ids.length;
    }
    // Lines without a destination are the adopted destination's (all of them when no destination is asked for).
    const legacyCounts = only === undefined || destinations.adoptedFor === only;
    const list: LedgerRun[] = [...runs.values()]
      .filter((r) => legacyCounts || !r.legacy)
      .map(({ sourceSet, legacy, ...r }) => ({
        ...r,
        destination: r.destination ?? (legacy ? (destinations.adoptedFor ?? null) : null),
        sources: [...sourceSet],
      }));
    let lastRun: LedgerRun | null = null;
    for (const r of list) if (lastRun === null || (r.lastTs ?? '') >= (lastRun.lastTs ?? '')) lastRun = r;
    const sum = (pick: (l: LoadedLedger) => number) => ledgers.reduce((s, l) => s + pick(l), 0);
    // ISO 8601 UTC stamps sort as text.
    const stamps = list
      .flatMap((r) => [r.firstTs, r.lastTs])
      .filter((t): t is string => t !== null)
      .sort();
    const status: LedgerStatus = {
      ledgers: ledgers.map((l) => ({
        path: l.path,
        lines: l.stats.lines,
        badLines: l.stats.bad,
        badLineNumbers: l.stats.badLines,
      })),
      lines: sum((l) => l.stats.lines),
      badLines: sum((l) => l.stats.bad),
      firstTs: stamps[0] ?? null,
      lastTs: stamps[stamps.length - 1] ?? null,
      batches: {
        acked: list.reduce((s, r) => s + r.batches.acked, 0),
        failed: list.reduce((s, r) => s + r.batches.failed, 0),
        outstanding: outstandingBatches,
      },
      ids: {
        acked: list.reduce((s, r) => s + r.ids.acked, 0),
        ackedDistinct: await distinctAcross(ledgers),
        failed: list.reduce((s, r) => s + r.ids.failed, 0),
        outstanding: outstandingIds,
      },
      runs: list,
      lastRun,
      ...(only === undefined ? {} : { destination: only }),
    };
    return { status, destinations };
  } finally {
    closeAll(ledgers);
  }
}

/** Lets the event loop run (signals, I/O) during a long computation. */
const breathe = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Shared fingerprint groups checked one by one; beyond this many, one pass over the ledger's lines instead. */
const FEW_SHARED = 1 << 16;
/** Bits of the shared-fingerprint set: 2^27 (16 MiB), indexed by the top 27 bits of the fingerprint. */
const SHARED_BITS_WORDS = 1 << 22;

/**
 * Distinct acked ids over the ledgers: each ledger's distinct ids (one sequential pass over its sorted
 * fingerprints, groups of equal fingerprints counted from their lines), less those an earlier ledger already
 * acked. Which fingerprints a ledger shares with earlier ones is found by walking the sorted fingerprints side by
 * side; only ids with such a fingerprint are checked exactly: group by group when they are few, else in one
 * sequential pass over the ledger's acked lines (a bit set of the shared fingerprints in front of the check).
 */
async function distinctAcross(ledgers: LoadedLedger[]): Promise<number> {
  let total = 0;
  const fp = new Uint32Array(2);
  for (let f = 0; f < ledgers.length; f++) {
    const here = (ledgers[f] as LoadedLedger).acked;
    const earlier = ledgers.slice(0, f).map((l) => {
      const it = l.acked.groups();
      return { index: l.acked, it, at: it.next().value as FingerprintGroup | undefined };
    });
    const few: FingerprintGroup[] = [];
    let bits: Uint32Array | undefined;
    const mark = (g: FingerprintGroup) => {
      const b = g.hi >>> 5;
      (bits as Uint32Array)[b >>> 5] = ((bits as Uint32Array)[b >>> 5] as number) | (1 << (b & 31));
    };
    let k = 0;
    for (const g of here.groups()) {
      if ((++k & 0xffff) === 0) await breathe();
      total += g.lines.length === 1 ? 1 : here.idsOf(g).size;
      let shared = false;
      for (const e of earlier) {
        while (e.at && compareFingerprints(e.at, g) < 0)
          e.at = e.it.next().value as FingerprintGroup | undefined;
        if (e.at && compareFingerprints(e.at, g) === 0) shared = true;
      }
      if (!shared) continue;
      if (!bits && few.length < FEW_SHARED) few.push(g);
      else {
        if (!bits) {
          bits = new Uint32Array(SHARED_BITS_WORDS);
          for (const x of few) mark(x);
          few.length = 0;
        }
        mark(g);
      }
    }
    const ackedBefore = (id: string) => earlier.some((e) => e.index.has(id));
    if (!bits) {
      for (const g of few) for (const id of here.idsOf(g)) if (ackedBefore(id)) total--;
      continue;
    }
    for (let n = 0; n < here.lineCount; n++) {
      if ((n & 1023) === 1023) await breathe();
      const seen = new Set<string>();
      for (const id of here.line(n).transactionIds as unknown[]) {
        if (typeof id !== 'string' || seen.has(id)) continue;
        seen.add(id);
        fingerprint(id, fp);
        const b = (fp[0] as number) >>> 5;
        if ((((bits[b >>> 5] as number) >>> (b & 31)) & 1) === 0) continue;
        // Counted once: at the first line of this ledger that holds it.
        if (ackedBefore(id) && here.linesOf(id)[0] === n) total--;
      }
    }
  }
  return total;
}
