// Indexed ledger lines read back from the file by offset (never through a link), the ids of the last few cached:
// how the resume index confirms a fingerprint match against the line itself.
import { closeSync, constants, openSync, readSync } from 'node:fs';
import { SvcIngestError } from '../../errors.ts';
import type { LedgerLine } from './line.ts';

const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const CACHED_LINES = 64;

export function ledgerError(path: string, err: unknown): SvcIngestError {
  return new SvcIngestError('LEDGER_READ', `cannot read ledger ${path}: ${(err as Error).message}`, {
    source: path,
  });
}

export interface LineReader {
  /** The ids of indexed line n (cached). */
  ids(n: number): Set<string>;
  /** Indexed line n, parsed. */
  line(n: number): LedgerLine;
  close(): void;
}

/** Line n starts at byte lineStart[n] and is lineLength[n] bytes long. */
export function createLineReader(path: string, lineStart: Float64Array, lineLength: Uint32Array): LineReader {
  const cache = new Map<number, Set<string>>();
  let fd: number | undefined;
  const text = (n: number): string => {
    const len = lineLength[n] as number;
    const buf = Buffer.allocUnsafe(len);
    try {
      fd ??= openSync(path, constants.O_RDONLY | NOFOLLOW);
      readSync(fd, buf, 0, len, lineStart[n] as number);
    } catch (err) {
      throw ledgerError(path, err);
    }
    return buf.toString('utf8');
  };
  const parse = <T>(n: number): T => {
    try {
      return JSON.parse(text(n)) as T;
    } catch (err) {
      if (err instanceof SvcIngestError) throw err;
      throw ledgerError(path, err);
    }
  };
  return {
    ids(n) {
      const hit = cache.get(n);
      if (hit) return hit;
      const line = parse<{ transactionIds: unknown[] }>(n);
      let ids: Set<string>;
      try {
        ids = new Set(line.transactionIds.filter((x): x is string => typeof x === 'string'));
      } catch (err) {
        throw ledgerError(path, err);
      }
      if (cache.size >= CACHED_LINES) cache.delete(cache.keys().next().value as number);
      cache.set(n, ids);
      return ids;
    },
    line: (n) => parse<LedgerLine>(n),
    close() {
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
    },
  };
}
