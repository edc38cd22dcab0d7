// Ledger reader: streams the NDJSON ledger line by line; a torn or unparsable line is counted, never fatal.
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { SvcIngestError } from '../errors.ts';
import type { LedgerLine } from './types.ts';

export interface LedgerReadStats {
  lines: number;
  bad: number;
  /** 1-based numbers of the bad lines (first 20). */
  badLines: number[];
}

/**
 * Stream the ledger's lines. A missing file reads as empty. Bad lines are skipped and counted in `stats`.
 * @example for await (const l of readLedger('ledger/transactions.ndjson')) if (l.status === 'acked') …
 */
export async function* readLedger(path: string, stats?: LedgerReadStats): AsyncGenerator<LedgerLine> {
  const st = stats ?? { lines: 0, bad: 0, badLines: [] };
  const stream = createReadStream(path, { encoding: 'utf8', highWaterMark: 1 << 20 });
  const opened = new Promise<boolean>((resolve, reject) => {
    stream.once('open', () => resolve(true));
    stream.once('error', (err: NodeJS.ErrnoException) =>
      err.code === 'ENOENT' ? resolve(false) : reject(err),
    );
  });
  let exists: boolean;
  try {
    exists = await opened;
  } catch (err) {
    throw new SvcIngestError('LEDGER_READ', `cannot read ledger ${path}: ${(err as Error).message}`, {
      source: path,
    });
  }
  if (!exists) return;
  const rl = createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY });
  for await (const text of rl) {
    st.lines++;
    if (text.length === 0) continue;
    const line = parseLedgerLine(text, st);
    if (line) yield line;
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
  stats.bad++;
  if (stats.badLines.length < 20) stats.badLines.push(stats.lines);
  return undefined;
}
