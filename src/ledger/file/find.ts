// `ledger find` (and reconcile): every line of some ledgers naming one of a few sought ids, streamed once, with
// the context every answer of the `ledger` command repeats (lineContext).
import { SvcIngestError } from '../../errors.ts';
import { openStateFile } from './files.ts';
import type { LedgerLine } from './line.ts';
import { createLineSplitter, type SplitLine } from './lines.ts';
import { type LedgerReadStats, ledgerLineOf } from './read.ts';

const missing = (p: string) => new SvcIngestError('LEDGER_READ', `ledger ${p}: no such file`, { source: p });

/**
 * One ledger line naming a sought id (`ledger find`, reconcile).
 * @example {"transactionId":"t-1","status":"acked","requestId":"…","batchId":"…","ts":"…","ledger":"l.ndjson","ledgerLine":17,…}
 */
export interface FoundLine {
  transactionId: string;
  status: 'acked' | 'failed';
  ts: string | null;
  batchId: string | null;
  requestId: string | null;
  clientRequestId: string | null;
  attempts: number | null;
  httpStatus: number | null;
  error?: string;
  runId: string | null;
  source: string | null;
  lines: [number, number] | null;
  /** Where the batch was sent (null: written before destinations were recorded). */
  destination?: string | null;
  ledger: string;
  /** 1-based line number in the ledger file (a PostgreSQL ledger: the outcome's `seq`). */
  ledgerLine: number;
}

export const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const span = (v: unknown): [number, number] | null =>
  Array.isArray(v) && v.length === 2 && typeof v[0] === 'number' && typeof v[1] === 'number'
    ? [v[0], v[1]]
    : null;

/** The context of a ledger line that every answer repeats. */
export function lineContext(line: LedgerLine) {
  const l = line as LedgerLine & { clientRequestId?: unknown };
  return {
    ts: str(l.ts),
    batchId: str(l.batchId),
    requestId: str(l.requestId),
    // A batch never sent has no request: "" in the line, null here as every other absent value.
    clientRequestId: str(l.clientRequestId) || null,
    attempts: num(l.attempts),
    httpStatus: num(l.httpStatus),
    runId: str(l.runId),
    source: str(l.source),
    lines: span(l.lines),
    destination: str(l.destination),
  };
}

/**
 * Stream the ledgers once and call `onHit` for every line naming one of `ids`, in ledger order, with its line
 * number; returns the read stats of each ledger. Memory: the sought ids only.
 * @example await findInLedgers(['l.ndjson'], new Set(['t-1']), (hit) => console.log(hit.requestId))
 */
export async function findInLedgers(
  paths: string[],
  ids: ReadonlySet<string>,
  onHit: (hit: FoundLine) => void,
): Promise<Array<{ path: string; stats: LedgerReadStats }>> {
  const out: Array<{ path: string; stats: LedgerReadStats }> = [];
  for (const path of paths) {
    const stats: LedgerReadStats = { lines: 0, bad: 0, badLines: [] };
    const onLine = (split: SplitLine): void => {
      const line = ledgerLineOf(split, stats);
      if (!line || ids.size === 0) return;
      let ctx: ReturnType<typeof lineContext> | undefined;
      for (const id of line.transactionIds as unknown[]) {
        if (typeof id !== 'string' || !ids.has(id)) continue;
        ctx ??= lineContext(line);
        onHit({
          transactionId: id,
          status: line.status,
          ...ctx,
          ...(typeof line.error === 'string' ? { error: line.error } : {}),
          ledger: path,
          ledgerLine: stats.lines,
        });
      }
    };
    // Split here rather than through readLedger: each hit needs the number of its own line.
    const file = await openStateFile(path, 'ledger', 'read');
    if (!file) throw missing(path);
    try {
      const splitter = createLineSplitter();
      for await (const chunk of file.handle.createReadStream({ highWaterMark: 1 << 20, autoClose: false }))
        splitter.push(chunk as Buffer, onLine);
      splitter.end(onLine);
    } catch (err) {
      if (err instanceof SvcIngestError) throw err;
      throw new SvcIngestError(
        'LEDGER_READ',
        `cannot read ledger ${file.absPath}: ${(err as Error).message}`,
        {
          source: path,
        },
      );
    } finally {
      await file.handle.close().catch(() => {});
    }
    out.push({ path, stats });
  }
  return out;
}
