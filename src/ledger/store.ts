// The seam between the send chain and its ledger: the LedgerStore interface (types only). The file ledger and
// the PostgreSQL ledger (src/ledger/postgres/) implement it; the chain talks to nothing else of the ledger.
import type { BatchItem } from '../batch/batcher.ts';
import type { Logger } from '../log.ts';

/** Why a record is not sent now: acked earlier | claimed by another live worker. */
export type SkipReason = 'acked' | 'elsewhere';

/**
 * What admit() decided for a group of records.
 * @example { send: [{ id: 't-2', … }], skipped: [{ item: { id: 't-1', … }, reason: 'acked' }] }
 */
export interface Admission {
  /** May be sent now (file: not acked; pg: claimed by this worker under its lease). Input order kept. */
  send: BatchItem[];
  skipped: Array<{ item: BatchItem; reason: SkipReason }>;
}

/**
 * One batch outcome as the store persists it (the file store writes exactly today's ledger line from it).
 * @example { batchId: 'r1-7', runId: 'r1', status: 'acked', requestId: 'req-9', clientRequestId: 'c0ffee…', attempts: 1, httpStatus: 200, items }
 */
export interface RecordedOutcome {
  batchId: string;
  runId: string;
  status: 'acked' | 'failed';
  /** The service's. */
  requestId: string | null;
  /** Our X-SVC-Request-Id of the last attempt ('' if never sent). */
  clientRequestId: string;
  /** 0 = never sent (interrupted / not sent). */
  attempts: number;
  httpStatus: number | null;
  /** Already masked. */
  error?: string;
  /** Ids, source, first/last line. */
  items: readonly BatchItem[];
}

export interface LedgerStore {
  /** For messages and the summary: an absolute file path, or a postgres URL without credentials. */
  readonly location: string;
  /** Unreadable lines/rows seen when opened (file: torn or foreign lines). */
  readonly badLines: number;
  /**
   * Resume + exclusivity for a group of records about to be batched (the dedupe stage calls it with
   * groups of up to one batch size). With resume off, acked ids pass (pg still respects live claims
   * of other workers). A read-only store (dry run) only looks up, never claims.
   */
  admit(items: readonly BatchItem[]): Promise<Admission>;
  /**
   * Batches a group handed to admit() should hold (default 1). pg: several, so that one statement claims the ids
   * of several batches (a round trip and a commit less per batch); the file store answers from memory.
   */
  readonly admitBatches?: number;
  /**
   * Persist one outcome; resolves once durable (file: group-committed fdatasync; pg: committed,
   * concurrent outcomes in one transaction). A rejection is fatal for the run (LEDGER_WRITE).
   */
  record(outcome: RecordedOutcome): Promise<void>;
  /** Flush, release lock/claims/leases, close connections. Idempotent. */
  close(): Promise<void>;
  /**
   * Asked before each batch leaves: are the claims this run was admitted on still its own? pg: while the lease is
   * fresh, yes without a query; past it, a heartbeat renews it (waiting up to ledger.waitMs for the database), and
   * after a lapse the claims not yet recorded are checked in the database: false (for good) once another worker
   * has taken any of them over. Absent (file): the kernel lock holds for the whole run.
   */
  claimsHeld?(): Promise<boolean>;
}

export interface OpenLedgerOptions {
  /** read: dry run (no lock, no claims, no writes). */
  mode: 'write' | 'read';
  resume: boolean;
  runId: string;
  /** pg: the claiming worker (default host:pid:runId). */
  workerId?: string;
  logger: Logger;
  /** SIGTERM while opening/loading stops promptly. */
  signal?: AbortSignal;
  /**
   * Where this run sends (destination.ts: base URL origin + path, institution): recorded with every outcome, and
   * resume skips only ids acknowledged by it. Absent: outcomes carry none and every acknowledgement counts.
   */
  destination?: string;
  /** The destination may be one the ledger has not seen (--new-destination); else such a run is refused. */
  newDestination?: boolean;
}

/**
 * `store` with each admit's answer shown to `seen` before the caller gets it (the rest passed through as it is).
 * @example observeAdmit(store, (a) => kept.push(...a.skipped.filter((s) => s.reason === 'elsewhere')))
 */
export function observeAdmit(store: LedgerStore, seen: (a: Admission) => void | Promise<void>): LedgerStore {
  return {
    get location() {
      return store.location;
    },
    get badLines() {
      return store.badLines;
    },
    admitBatches: store.admitBatches,
    async admit(items) {
      const a = await store.admit(items);
      await seen(a);
      return a;
    },
    record: (outcome) => store.record(outcome),
    close: () => store.close(),
  };
}
