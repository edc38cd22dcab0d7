// What `ledger status` and `ledger failed` answer, the same from a ledger file (file/query.ts) and from a PostgreSQL
// ledger (postgres/query.ts).

/**
 * What the ledgers hold of one run (the lines that carry its runId; lines without one are the run `null`).
 * @example { runId: '9f3c0a1e', firstTs: '…', lastTs: '…', batches: { acked: 400, failed: 1 }, ids: { acked: 20000, failed: 50, outstanding: 1 }, sources: ['exports/a.csv'] }
 */
export interface LedgerRun {
  runId: string | null;
  /** Earliest and latest `ts` of its lines (ISO 8601). */
  firstTs: string | null;
  lastTs: string | null;
  batches: { acked: number; failed: number };
  /** Ids in its acked and failed lines, and outstanding ids whose last failure is in this run. */
  ids: { acked: number; failed: number; outstanding: number };
  /** Distinct `source` values of its lines (the first 20). */
  sources: string[];
  /** Where it sent (null: lines written before destinations were recorded and not adopted). */
  destination?: string | null;
}

/**
 * What a ledger holds for one destination: as LedgerStatus's counts, its acknowledgements only its own, and its
 * outstanding ids those failed for it and never acknowledged by it.
 * @example { destination: 'https://svc.example/api', batches: { acked: 400, failed: 1, outstanding: 1 }, ids: { acked: 20000, ackedDistinct: 20000, failed: 50, outstanding: 1 } }
 */
export interface DestinationStatus {
  destination: string | null;
  batches: LedgerStatus['batches'];
  ids: LedgerStatus['ids'];
}

/**
 * `ledger status`.
 * @example { ledgers: [{ path, lines: 401, badLines: 0, badLineNumbers: [] }], batches: { acked: 400, failed: 1, outstanding: 1 }, ids: { acked: 20000, ackedDistinct: 20000, failed: 50, outstanding: 1 }, runs: [...], lastRun: {...} }
 */
export interface LedgerStatus {
  ledgers: Array<{ path: string; lines: number; badLines: number; badLineNumbers: number[] }>;
  lines: number;
  badLines: number;
  firstTs: string | null;
  lastTs: string | null;
  /** Lines by status; `outstanding`: failed lines holding the last failure of an outstanding id. */
  batches: { acked: number; failed: number; outstanding: number };
  /**
   * `acked`, `failed`: ids in such lines, each occurrence counted; `ackedDistinct`: distinct acknowledged ids;
   * `outstanding`: distinct ids in failed lines that no acked line holds (what a rerun resends).
   */
  ids: { acked: number; ackedDistinct: number; failed: number; outstanding: number };
  /** In order of first appearance. */
  runs: LedgerRun[];
  /** The run with the latest `ts`. */
  lastRun: LedgerRun | null;
  /**
   * Per destination (the ledger's acknowledgements count only for the one that gave them). With several, the
   * top-level `outstanding` and `ackedDistinct` are their sums: an id acknowledged by two destinations counts twice.
   */
  destinations?: DestinationStatus[];
  /** Set when the status was asked for one destination (`--destination`): every count is that one's. */
  destination?: string;
  /**
   * PostgreSQL: workers of an earlier svc-ingest (ledger schema 6 or older) that may still be running, whose reading
   * of the ledger makes this version record outcomes row by row until they have stopped (docs/postgres.md); only
   * when there are some.
   */
  olderWorkers?: number;
}

/**
 * One outstanding failed id (`ledger failed`): failed and in no acked line of any ledger given, with its last
 * failure.
 * @example {"transactionId":"t-9","failures":2,"error":"HTTP 400 …","httpStatus":400,"attempts":1,"ts":"…","batchId":"…","runId":"…","source":"a.csv","lines":[12,12],"ledger":"ledger/transactions.ndjson"}
 */
export interface OutstandingFailure {
  transactionId: string;
  /** Failed lines naming it, in all the ledgers. */
  failures: number;
  error: string | null;
  httpStatus: number | null;
  attempts: number | null;
  ts: string | null;
  batchId: string | null;
  requestId: string | null;
  clientRequestId: string | null;
  runId: string | null;
  source: string | null;
  lines: [number, number] | null;
  /** Where its last failure was sent (null: before destinations were recorded). */
  destination?: string | null;
  ledger: string;
}
