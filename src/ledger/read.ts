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
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    const line = parsed as LedgerLine | undefined;
    if (
      !line ||
      typeof line !== 'object' ||
      (line.status !== 'acked' && line.status !== 'failed') ||
      !Array.isArray(line.transactionIds)
    ) {
      st.bad++;
      if (st.badLines.length < 20) st.badLines.push(st.lines);
      continue;
    }
    yield line;
  }
}
