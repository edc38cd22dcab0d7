// Retention of a ledger file: `ledger prune --before DATE` drops the outcome lines older than DATE (their ids are
// past any rerun), so that resume's start-up time and memory stay bounded by the retention window instead of the
// ledger's age. The ledger is rewritten beside itself under its lock and renamed over it (atomic: a crash leaves
// the old or the new file whole); destination lines are kept, a `ledger.pruned` line records what was dropped, and
// the dropped lines can be appended to an archive file first. A prune that finds nothing to drop leaves the file as
// it is.
import { rename, rm } from 'node:fs/promises';
import { SvcIngestError } from '../../errors.ts';
import { createCensus } from './census.ts';
import { openStateFile } from './files.ts';
import type { LedgerMark } from './line.ts';
import { createLineSplitter, type SplitLine } from './lines.ts';
import { acquireLedgerLock } from './lock.ts';
import { type LedgerReadStats, ledgerLineOf } from './read.ts';
import { writeAll } from './writer.ts';

/** What a prune did. */
export interface PruneResult {
  ledger: string;
  before: string;
  /** Outcome lines dropped, and the ids they held. */
  prunedLines: number;
  prunedIds: number;
  keptLines: number;
  bytesBefore: number;
  bytesAfter: number;
  archive: string | null;
}

/**
 * Drop the outcome lines with `ts` before `before` (an ISO 8601 instant); bad lines are dropped too (they were
 * skipped by every reader), destination lines kept. Takes the ledger's lock (a running send makes it
 * LEDGER_LOCKED). `archive`: the dropped lines are appended (and synced) there before the ledger is replaced.
 * @example await pruneLedgerFile('ledger/transactions.ndjson', { before: '2026-08-01T00:00:00.000Z' })
 */
export async function pruneLedgerFile(
  path: string,
  o: { before: string; archive?: string; runId?: string },
): Promise<PruneResult> {
  const lock = await acquireLedgerLock(path);
  const tmp = `${lock.file.absPath}.prune-${process.pid}`;
  try {
    const out = await openStateFile(tmp, 'ledger', 'append');
    const arch = o.archive ? await openStateFile(o.archive, 'ledger', 'append') : null;
    if (!out) throw new Error(`cannot create ${tmp}`);
    let unchanged = false;
    const r: PruneResult = {
      ledger: lock.file.absPath,
      before: o.before,
      prunedLines: 0,
      prunedIds: 0,
      keptLines: 0,
      bytesBefore: 0,
      bytesAfter: 0,
      archive: arch?.absPath ?? null,
    };
    try {
      const stats: LedgerReadStats = { lines: 0, bad: 0, badLines: [], marks: [] };
      const census = createCensus();
      let kept: Buffer[] = [];
      let dropped: Buffer[] = [];
      const onLine = (split: SplitLine): void => {
        const line = ledgerLineOf(split, stats);
        const marks = stats.marks as LedgerMark[];
        if (marks.length > 0) {
          for (const m of marks) census.mark(m);
          kept.push(Buffer.from(`${split.text}\n`));
          marks.length = 0;
          r.keptLines++;
          return;
        }
        if (!line) return;
        census.see(line);
        const text = Buffer.from(`${split.text}\n`);
        if (typeof line.ts === 'string' && line.ts < o.before) {
          r.prunedLines++;
          r.prunedIds += line.transactionIds.length;
          dropped.push(text);
        } else {
          r.keptLines++;
          kept.push(text);
        }
      };
      const flush = async () => {
        if (dropped.length > 0 && arch) await writeAll(arch.handle, Buffer.concat(dropped));
        if (kept.length > 0) await writeAll(out.handle, Buffer.concat(kept));
        kept = [];
        dropped = [];
      };
      const splitter = createLineSplitter();
      for await (const chunk of lock.file.handle.createReadStream({
        start: 0,
        highWaterMark: 1 << 20,
        autoClose: false,
      })) {
        r.bytesBefore += (chunk as Buffer).length;
        splitter.push(chunk as Buffer, onLine);
        await flush();
      }
      splitter.end(onLine);
      // Nothing to drop (no old line, no bad one): the ledger stays as it is, without a `ledger.pruned` line.
      if (r.prunedLines === 0 && stats.bad === 0) {
        unchanged = true;
        r.bytesAfter = r.bytesBefore;
        return r;
      }
      const mark: LedgerMark = {
        ts: new Date().toISOString(),
        event: 'ledger.pruned',
        before: o.before,
        prunedLines: r.prunedLines,
        prunedIds: r.prunedIds,
        destinations: census.known,
        ...(o.runId ? { runId: o.runId } : {}),
      };
      kept.push(Buffer.from(`${JSON.stringify(mark)}\n`));
      await flush();
      await arch?.handle.datasync();
      await out.handle.datasync();
      r.bytesAfter = (await out.handle.stat()).size;
    } finally {
      await out.handle.close().catch(() => {});
      await arch?.handle.close().catch(() => {});
      if (unchanged) await rm(tmp, { force: true });
    }
    // Atomic: readers and the next run see the old ledger or the new one, never a part.
    await rename(tmp, lock.file.absPath);
    return r;
  } catch (err) {
    await rm(tmp, { force: true });
    if (err instanceof SvcIngestError) throw err;
    throw new SvcIngestError(
      'LEDGER_WRITE',
      `cannot prune ledger ${lock.file.absPath}: ${(err as Error).message}`,
      {
        source: path,
      },
    );
  } finally {
    await lock.release();
  }
}
