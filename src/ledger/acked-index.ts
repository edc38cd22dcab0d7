// Resume index: which transactionIds the ledger shows as acknowledged.
import { type LedgerReadStats, readLedger } from './read.ts';

/** Set of acknowledged transactionIds, built from the ledger at start and grown as batches are acked. */
export interface AckedIndex {
  has(id: string): boolean;
  add(id: string): void;
  readonly size: number;
}

export interface AckedIndexLoad {
  index: AckedIndex;
  stats: LedgerReadStats & { acked: number; failed: number; ackedLines: number };
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

/** Read the whole ledger (a missing file is empty) into an index of acked transactionIds. */
export async function loadAckedIndex(ledgerPath: string): Promise<AckedIndexLoad> {
  const index = createAckedIndex();
  const stats = { lines: 0, bad: 0, badLines: [] as number[], acked: 0, failed: 0, ackedLines: 0 };
  for await (const line of readLedger(ledgerPath, stats)) {
    if (line.status === 'acked') {
      stats.ackedLines++;
      for (const id of line.transactionIds) {
        index.add(id);
        stats.acked++;
      }
    } else {
      stats.failed += line.transactionIds.length;
    }
  }
  return { index, stats };
}
