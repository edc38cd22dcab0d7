// The destinations a ledger file names, read without building a resume index (a run with --no-resume still checks
// its destination before it sends).
import { createCensus } from './census.ts';
import { type LedgerReadStats, readLedger } from './read.ts';

/**
 * One streaming pass over the ledger: the destinations its lines and marks name, and its lines without one.
 * `'stopped'` when `shouldStop()` turned true first.
 * @example const census = await scanDestinations('ledger/transactions.ndjson', () => false)
 */
export async function scanDestinations(
  path: string,
  shouldStop: () => boolean,
): Promise<ReturnType<typeof createCensus> | 'stopped'> {
  const census = createCensus();
  const stats: LedgerReadStats = { lines: 0, bad: 0, badLines: [], marks: [] };
  let n = 0;
  for await (const line of readLedger(path, stats)) {
    for (const m of stats.marks ?? []) census.mark(m);
    if (stats.marks) stats.marks.length = 0;
    census.see(line);
    if (++n % 65_536 === 0 && shouldStop()) return 'stopped';
  }
  for (const m of stats.marks ?? []) census.mark(m);
  return census;
}
