// Types of the batch ledger (append-only NDJSON, one line per batch outcome; see CONTRACT.md).

/**
 * One ledger line.
 * @example {"ts":"2026-11-21T10:00:00.000Z","batchId":"b-1","status":"acked","requestId":"…","transactionIds":["t-1"],"attempts":1,"httpStatus":200}
 */
export interface LedgerLine {
  ts: string;
  batchId: string;
  status: 'acked' | 'failed';
  /** requestId answered by the service (acked), or the last one known (failed). */
  requestId?: string | null;
  transactionIds: string[];
  attempts: number;
  /** Last HTTP status; null for a network error or timeout. */
  httpStatus: number | null;
  /** Set on failed lines. */
  error?: string;
  /** Our X-SVC-Request-Id of the last attempt ('' if never sent). */
  clientRequestId?: string;
  source?: string;
  /** First and last source line of the batch's records. */
  lines?: [number, number];
  runId?: string;
}
