// Resume index: which transactionIds the ledger shows as acknowledged (or failed), in flat memory at any ledger size.
// Each acked id is one 64-bit slot: a 40-bit fingerprint of the id and the number of its ledger line (24 bits).
// Slots are sorted in runs, merged into one sorted file in the temp folder (sorted-runs/runs.ts), and searched
// through a sparse in-memory index (one key per 4 KiB block). A fingerprint match is confirmed against that ledger line, read
// back from the ledger (a few lines cached), so a fingerprint collision can never skip a record. Here: the read of
// the ledger; the slots and their sorted index: slot-index.ts; the destinations met: census.ts.
import { endianness } from 'node:os';
import { SvcIngestError } from '../../errors.ts';
import type { DestinationCensus } from '../destination.ts';
import { createCensus } from './census.ts';
import { openStateFile } from './files.ts';
import type { LedgerLine } from './line.ts';
import { ledgerError } from './line-reader.ts';
import { createLineSplitter, type SplitLine } from './lines.ts';
import { type LedgerReadStats, ledgerLineOf } from './read.ts';
import { type AckedIndex, createCollector, type LedgerLineIndex } from './slot-index.ts';

export type { AckedIndex } from './slot-index.ts';

export interface AckedIndexLoad {
  index: AckedIndex;
  /** Lines read, bad lines, ids of acked lines (indexed) and of failed lines, acked and failed lines. */
  stats: LedgerReadStats & { acked: number; failed: number; ackedLines: number; failedLines: number };
  /** True when `shouldStop` said so before the index was complete: `index` is then empty. */
  interrupted: boolean;
  /** The destinations the ledger's lines name (all of them, whatever `destination` indexed). */
  census: DestinationCensus;
}

export interface AckedIndexOptions {
  /** Polled between chunks of the ledger and while merging; true stops the load (a signal arrived). */
  shouldStop?: () => boolean;
  /**
   * Index only the lines of this destination, and the lines without one (written before destinations were recorded,
   * tagged: `countLegacy` decides whether they answer). The census of destinations is returned.
   */
  destination?: string;
}

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

/**
 * Indexes of a ledger's acked lines (and, on request, of its failed lines) with exact answers.
 * @example const { acked, failed } = await loadLedgerIndexes('ledger/transactions.ndjson', { failed: true })
 */
export interface LedgerIndexes {
  acked: LedgerLineIndex;
  /** Only when asked for (`failed: true`). */
  failed: LedgerLineIndex | undefined;
  stats: AckedIndexLoad['stats'];
  /** The destinations the ledger knows (always gathered). */
  census: DestinationCensus;
}

function newStats(): AckedIndexLoad['stats'] {
  return { lines: 0, bad: 0, badLines: [], marks: [], acked: 0, failed: 0, ackedLines: 0, failedLines: 0 };
}

/**
 * Read the whole ledger (a missing file is empty; a link or anything but a regular file is refused) into an
 * index of acked transactionIds. Bad lines (a torn write after a crash) and lines over 1 MiB are skipped and
 * counted, as readLedger does. Memory: ~12 bytes per acked ledger line and 32 MiB while loading, whatever the
 * number of ids. Stops early, with an empty index and `interrupted`, once `shouldStop()` is true.
 * @example const { index } = await loadAckedIndex('ledger/transactions.ndjson'); index.has('t-1')
 */
export async function loadAckedIndex(
  ledgerFile: string,
  opts: AckedIndexOptions = {},
): Promise<AckedIndexLoad> {
  const loaded = await loadLedgerIndexes(ledgerFile, opts);
  const empty = { index: createAckedIndex(), stats: newStats(), census: createCensus() };
  if (!loaded) return { ...empty, interrupted: false };
  if (loaded === 'stopped') return { ...empty, interrupted: true };
  return { index: loaded.acked, stats: loaded.stats, census: loaded.census, interrupted: false };
}

/**
 * Read the whole ledger once into the index of its acked lines and, with `failed`, of its failed lines;
 * `onLine` sees every readable line in file order (bad ones are counted in `stats`). A missing file gives
 * undefined; `'stopped'` when `shouldStop()` turned true first. Memory: ~12 bytes per indexed line and up to
 * 32 MiB per index while loading, whatever the number of ids.
 * @example const r = await loadLedgerIndexes(path, { failed: true }); if (r && r !== 'stopped') r.acked.linesOf('t-1')
 */
export async function loadLedgerIndexes(
  ledgerFile: string,
  opts: AckedIndexOptions & { failed?: boolean; onLine?: (line: LedgerLine) => void } = {},
): Promise<LedgerIndexes | undefined | 'stopped'> {
  const shouldStop = opts.shouldStop ?? (() => false);
  const stats = newStats();
  const census = createCensus();
  const file = await openStateFile(ledgerFile, 'ledger', 'read');
  if (!file) return undefined;
  const ours = opts.destination;
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
    if (stats.marks && stats.marks.length > 0) {
      for (const m of stats.marks) census.mark(m);
      stats.marks.length = 0;
    }
    if (!line) return;
    const { offset, bytes } = split;
    census.see(line);
    opts.onLine?.(line);
    // Another destination's line: not ours to skip (nor to count as ours).
    const legacy = typeof line.destination !== 'string';
    if (ours !== undefined && !legacy && line.destination !== ours) return;
    if (line.status === 'acked') {
      stats.ackedLines++;
      stats.acked += acked.addLine(line.transactionIds, offset, bytes, legacy);
    } else {
      stats.failedLines++;
      stats.failed += line.transactionIds.length;
      failed?.addLine(line.transactionIds, offset, bytes, legacy);
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
  return { acked: ackedIndex, failed: failedIndex ?? undefined, stats, census };
}
