// The dry run's sink: the same chain, nothing sent and nothing recorded; it only counts what would be sent.
import type { Batch } from '../batch/batcher.ts';
import type { CodeTally } from '../model/code-lists.ts';
import type { Sink } from './sink.ts';

/** What a dry run counts: batches that would be sent, and their records. */
export interface DryRunCounts {
  batches: number;
  batched: number;
}

/**
 * A sink that sends nothing. A batch the run would abandon (too many rejects) counts as one it would send:
 * a dry run reports what the input holds.
 * @example const sink = createDryRunSink(counters); await sink.submit(batch) // counters.batched += batch.items.length
 */
export function createDryRunSink(counts: DryRunCounts, codes?: CodeTally): Sink {
  const take = async (batch: Batch): Promise<void> => {
    counts.batches++;
    counts.batched += batch.items.length;
    if (codes) for (const item of batch.items) codes.add(item.codes);
  };
  return {
    submit: take,
    abandon: take,
    drain: async () => {},
    stop() {},
    inFlight: 0,
  };
}
