// Ledger reader: streams the NDJSON ledger line by line; a torn, unparsable or overlong line is counted, never fatal.
import { SvcIngestError } from '../../errors.ts';
import { openStateFile } from './files.ts';
import type { LedgerLine, LedgerMark } from './line.ts';
import { createLineSplitter, type SplitLine } from './lines.ts';

export interface LedgerReadStats {
  lines: number;
  bad: number;
  /** 1-based numbers of the bad lines (first 20). */
  badLines: number[];
  /** When present, the destination lines (LedgerMark) met, in file order; never counted bad either way. */
  marks?: LedgerMark[];
}

/** Count one bad line (its number is `stats.lines`). */
export function countBad(stats: LedgerReadStats): void {
  stats.bad++;
  if (stats.badLines.length < 20) stats.badLines.push(stats.lines);
}

/**
 * Stream the ledger's lines. A missing file reads as empty; a link or anything but a regular file is refused
 * (LEDGER_PATH_INVALID). Bad lines, and lines over 1 MiB (never held whole), are skipped and counted in `stats`.
 * @example for await (const l of readLedger('ledger/transactions.ndjson')) if (l.status === 'acked') …
 */
export async function* readLedger(path: string, stats?: LedgerReadStats): AsyncGenerator<LedgerLine> {
  const st = stats ?? { lines: 0, bad: 0, badLines: [] };
  const file = await openStateFile(path, 'ledger', 'read');
  if (!file) return;
  let chunks: AsyncIterator<Buffer> | undefined;
  try {
    const splitter = createLineSplitter();
    let ready: LedgerLine[] = [];
    const onLine = (l: SplitLine): void => {
      st.lines++;
      if (l.text === null) {
        countBad(st);
        return;
      }
      if (l.text.length === 0) return;
      const line = parseLedgerLine(l.text, st);
      if (line) ready.push(line);
    };
    chunks = file.handle
      .createReadStream({ highWaterMark: 1 << 20, autoClose: false })
      [Symbol.asyncIterator]() as AsyncIterator<Buffer>;
    while (true) {
      let next: IteratorResult<Buffer>;
      try {
        next = await chunks.next();
      } catch (err) {
        throw new SvcIngestError(
          'LEDGER_READ',
          `cannot read ledger ${file.absPath}: ${(err as Error).message}`,
          {
            source: path,
          },
        );
      }
      if (next.done) break;
      splitter.push(next.value, onLine);
      const out = ready;
      ready = [];
      yield* out;
    }
    splitter.end(onLine);
    yield* ready;
  } finally {
    await Promise.resolve(chunks?.return?.()).catch(() => {});
    await file.handle.close().catch(() => {});
  }
}

/**
 * One ledger line's text (line number `stats.lines`) → the line; a torn or foreign line is counted in
 * `stats` (bad, first 20 line numbers) and gives undefined.
 */
export function parseLedgerLine(text: string, stats: LedgerReadStats): LedgerLine | undefined {
  let line: LedgerLine | undefined;
  try {
    line = JSON.parse(text) as LedgerLine;
  } catch {
    line = undefined;
  }
  if (
    line &&
    typeof line === 'object' &&
    (line.status === 'acked' || line.status === 'failed') &&
    Array.isArray(line.transactionIds)
  ) {
    return line;
  }
  if (isMark(line)) {
    stats.marks?.push(line);
    return undefined;
  }
  countBad(stats);
  return undefined;
}

/**
 * The ledger line of one split line, counted in `stats.lines` (so its number is `stats.lines`): undefined for an
 * empty line, and for an overlong, torn or foreign one (counted bad).
 * @example const line = ledgerLineOf({ text: '{"status":"acked",…}', offset: 0, bytes: 112 }, stats)
 */
export function ledgerLineOf(l: SplitLine, stats: LedgerReadStats): LedgerLine | undefined {
  stats.lines++;
  if (l.text === null) {
    countBad(stats);
    return undefined;
  }
  if (l.text.length === 0) return undefined;
  return parseLedgerLine(l.text, stats);
}

/** A destination line (adopted / added), not an outcome. */
function isMark(x: unknown): x is LedgerMark {
  const m = x as LedgerMark | null;
  return (
    m !== null &&
    typeof m === 'object' &&
    (((m.event === 'destination.adopted' || m.event === 'destination.added') &&
      typeof m.destination === 'string') ||
      m.event === 'ledger.pruned')
  );
}
