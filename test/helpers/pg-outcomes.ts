// Batch items and outcomes for the PostgreSQL store's tests, made up in place of a send's.
import type { BatchItem } from '../../src/batch/batcher.ts';

/** `n` items `prefix-0` … `prefix-(n-1)`, each on its own line of in.csv. */
export const items = (prefix: string, n: number): BatchItem[] =>
  Array.from({ length: n }, (_, i) => ({ id: `${prefix}-${i}`, json: '{}', source: 'in.csv', line: i + 2 }));

/** The ids of `its`, sorted. */
export const ids = (its: readonly { id: string }[]): string[] => its.map((i) => i.id).sort();

/** A batch's outcome as the dispatcher records it: acknowledged (HTTP 200) or failed (HTTP 500). */
export const outcome = (batchId: string, its: BatchItem[], status: 'acked' | 'failed' = 'acked') => ({
  batchId,
  runId: 'r',
  status,
  requestId: status === 'acked' ? `req-${batchId}` : null,
  clientRequestId: `c-${batchId}`,
  attempts: 1,
  httpStatus: status === 'acked' ? 200 : 500,
  items: its,
});
