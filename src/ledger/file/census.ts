// The destinations a ledger's lines name, gathered as the ledger is read (acked-index.ts, prune.ts, destinations.ts).
import type { DestinationCensus } from '../destination.ts';
import type { LedgerLine, LedgerMark } from './line.ts';

/** Gathers the destinations of a ledger's lines as they are read. */
export function createCensus(): DestinationCensus & {
  see(line: LedgerLine): void;
  mark(m: LedgerMark): void;
} {
  const known = new Set<string>();
  const seen = new Set<string>();
  const c = {
    known: [] as string[],
    seen: [] as string[],
    legacy: 0,
    adoptedFor: undefined as string | undefined,
    see(line: LedgerLine) {
      const d = line.destination;
      if (typeof d !== 'string') {
        c.legacy++;
        return;
      }
      if (!seen.has(d)) {
        seen.add(d);
        c.seen.push(d);
      }
      // A destination that only ever failed has acknowledged nothing: it does not hold the ledger.
      if (line.status === 'acked' && !known.has(d)) {
        known.add(d);
        c.known.push(d);
      }
    },
    mark(m: LedgerMark) {
      const named = [...(m.destinations ?? []), ...(m.destination === undefined ? [] : [m.destination])];
      for (const d of named) {
        if (!seen.has(d)) {
          seen.add(d);
          c.seen.push(d);
        }
        if (!known.has(d)) {
          known.add(d);
          c.known.push(d);
        }
      }
      if (m.event === 'destination.adopted') c.adoptedFor ??= m.destination;
    },
  };
  return c;
}
