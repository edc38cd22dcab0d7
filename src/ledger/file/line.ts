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
  /** Where the batch was sent (../destination.ts); absent on lines written before destinations were recorded. */
  destination?: string;
}

/**
 * A line about the ledger's destinations (not a batch outcome): the legacy lines adopted for a destination by the
 * first run after the upgrade, or a new destination added (--new-destination). Readers of outcomes pass over it.
 * @example {"ts":"…","event":"destination.adopted","destination":"https://svc.example/api","runId":"r1","legacyLines":12}
 */
export interface LedgerMark {
  ts: string;
  event: 'destination.adopted' | 'destination.added' | 'ledger.pruned';
  /** destination.*: the destination adopted or added. */
  destination?: string;
  runId?: string;
  /** destination.adopted: the outcome lines without a destination that became this destination's. */
  legacyLines?: number;
  /** ledger.pruned: outcome lines older than `before` were dropped (ledger prune), and how many. */
  before?: string;
  prunedLines?: number;
  prunedIds?: number;
  /** ledger.pruned: every destination the ledger had seen, still known after its lines are gone. */
  destinations?: string[];
}
