// The counters a run moves as it goes (one object: the summary, the progress line and the metrics read it), and
// the summary made of them at the end (the `--json` summary of docs/contract.md).
import type { CodeCounts } from '../model/code-lists.ts';

/**
 * What a run did.
 * read + expanded = valid + rejected; valid = sent + skipped + failed (dry run: + batched).
 */
export interface RunSummary {
  read: number;
  /**
   * Notifications a profile's `expand` made beyond one per source record (each settles in a bucket like a record
   * read). Absent when nothing was expanded.
   */
  expanded?: number;
  valid: number;
  rejected: number;
  /** Rejects not in the rejects file before this run (rejected = rejectedNew + rejectedKnown). */
  rejectedNew: number;
  /** Rejects of the same record of the same source already recorded by an earlier run (not appended again). */
  rejectedKnown: number;
  skipped: number;
  sent: number;
  failed: number;
  batches: number;
  failedBatches: number;
  retries: number;
  durationMs: number;
  splits: number;
  dryRun: boolean;
  batched: number;
  interrupted: string | null;
  outage: boolean;
  runId: string;
  /** The ledger's location (an absolute path, or a postgres URL without password; null in a dry run) and the
   *  rejects file's absolute path (null when none is written). */
  ledger: string | null;
  rejects: string | null;
  ledgerBadLines: number;
  /** Inputs that held no record (an empty file, only a header, empty standard input), by source name. */
  emptyInputs: string[];
  /**
   * Id fields the mapping profile declares the bank's own numeric ids (`ownNumericIds`): their all-digit values
   * were sent without the card-number check. Absent when none is declared.
   */
  ownNumericIds?: string[];
  /**
   * Per code field (transactionType, paymentType, …), each distinct value with the records sent carrying it (a dry
   * run: the records that would be sent), so `ECOM` beside `ECOMMERCE` shows at once.
   */
  codes?: CodeCounts;
  /**
   * With a metrics file: whether it was written at the end (false: it could not be, the `metrics.write` error line
   * says why; the run went on and its exit status is its own). Absent when no metrics file was asked for.
   */
  metricsWritten?: boolean;
  /**
   * Warnings of a probably wrong profile the run's records showed (local times in one zone for merchants in
   * several, amounts in another currency, …: docs/mapping.md), each logged once at the end. Absent when none.
   */
  mappingWarnings?: number;
  /**
   * Local times that name no single instant (in a DST repeated hour or gap) and the profile's rule for them
   * (`earlier`, `later`, `reject`: docs/mapping.md), whatever became of their records. Absent when none.
   */
  ambiguousTimes?: { repeatedHour: number; gap: number; rule: string };
  /**
   * Why the run stopped before the end of its input and exits 1 (too many rejects; an input that broke part-way:
   * ended mid-record, cut or corrupt compressed data); absent otherwise.
   */
  error?: { code: string; message: string };
}

/** The counters a run moves as it goes. */
export type Counters = { expanded: number } & Pick<
  RunSummary,
  | 'read'
  | 'rejected'
  | 'rejectedKnown'
  | 'skipped'
  | 'sent'
  | 'failed'
  | 'batches'
  | 'failedBatches'
  | 'retries'
  | 'splits'
  | 'batched'
>;

export function newCounters(): Counters {
  return {
    read: 0,
    expanded: 0,
    rejected: 0,
    rejectedKnown: 0,
    skipped: 0,
    sent: 0,
    failed: 0,
    batches: 0,
    failedBatches: 0,
    retries: 0,
    splits: 0,
    batched: 0,
  };
}

/** A snapshot of a run under way: its counters, what is in flight, and how far through the input it is. */
export type RunProgress = Counters & {
  /** Batches handed to the sink and not yet settled. */
  inFlight: number;
  /** Input bytes consumed so far (compressed bytes for a .gz file), all inputs together. */
  bytesRead: number;
  /** Size of all inputs together, or null when one has no known size (a pipe on standard input). */
  bytesTotal: number | null;
  /** A backfill worker's partitions so far (WorkSummary.partitions); absent for a send. */
  partitions?: { done: number; released: number; lost: number; takenOver: number };
};

/** The summary of a finished run: its counters and how it ended. */
export function summarize(
  c: Counters,
  end: Omit<RunSummary, keyof Counters | 'valid' | 'rejectedNew' | 'expanded'> & {
    tooManyRejects?: string | null;
    /** The input broke part-way (read/broken.ts): the run stopped there, exit 1. */
    inputError?: { code: string; message: string };
  },
): RunSummary {
  const { tooManyRejects, inputError, ...rest } = end;
  return {
    read: c.read,
    ...(c.expanded > 0 ? { expanded: c.expanded } : {}),
    valid: c.read + c.expanded - c.rejected,
    rejected: c.rejected,
    rejectedNew: c.rejected - c.rejectedKnown,
    rejectedKnown: c.rejectedKnown,
    skipped: c.skipped,
    sent: c.sent,
    failed: c.failed,
    batches: c.batches,
    failedBatches: c.failedBatches,
    retries: c.retries,
    durationMs: rest.durationMs,
    splits: c.splits,
    dryRun: rest.dryRun,
    batched: c.batched,
    interrupted: rest.interrupted,
    outage: rest.outage,
    runId: rest.runId,
    ledger: rest.ledger,
    rejects: rest.rejects,
    ledgerBadLines: rest.ledgerBadLines,
    emptyInputs: rest.emptyInputs,
    ...(rest.ownNumericIds ? { ownNumericIds: rest.ownNumericIds } : {}),
    ...(rest.mappingWarnings ? { mappingWarnings: rest.mappingWarnings } : {}),
    ...(rest.ambiguousTimes ? { ambiguousTimes: rest.ambiguousTimes } : {}),
    ...(rest.codes !== undefined ? { codes: rest.codes } : {}),
    ...(inputError ? { error: inputError } : {}),
    ...(tooManyRejects
      ? {
          error: {
            code: 'INPUT_TOO_MANY_REJECTS',
            message: `the input is not what the profile expects: ${tooManyRejects}; stopped reading. Check --mapping and --format (the rejects file says why records were refused), or raise the limit`,
          },
        }
      : {}),
  };
}
