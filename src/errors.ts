// One error base class for the whole tool, with a closed union of codes and the context
// (source, line, field) where it exists. Only the bin entry turns an error into an exit code.

export type ErrorCode =
  | 'CONFIG_INVALID'
  | 'CONFIG_FILE_UNREADABLE'
  | 'USAGE_INVALID'
  | 'INPUT_UNREADABLE'
  | 'INPUT_FORMAT_UNKNOWN'
  | 'INPUT_HEADER_MISSING_COLUMN'
  | 'INPUT_PARSE'
  | 'INPUT_TRUNCATED'
  | 'INPUT_CONTROL_TOTALS'
  | 'INPUT_TOO_MANY_REJECTS'
  | 'MAPPING_INVALID'
  | 'MAPPING_UNREADABLE'
  | 'SEND_HTTP'
  | 'SEND_NETWORK'
  | 'SEND_TIMEOUT'
  | 'SEND_LIMIT'
  | 'SEND_SESSION'
  | 'SEND_OUTAGE'
  | 'SEND_UNAVAILABLE'
  | 'SEND_AUTH'
  | 'SEND_REDIRECT'
  | 'SEND_ENDPOINT'
  | 'SEND_REQUEST'
  | 'LEDGER_LOCKED'
  | 'LEDGER_PATH_INVALID'
  | 'LEDGER_WRITE'
  | 'LEDGER_READ'
  | 'LEDGER_LEASE'
  | 'LEDGER_DESTINATION'
  | 'LEDGER_MIGRATION_PENDING'
  | 'METRICS_WRITE'
  | 'METRICS_LISTEN';

export interface ErrorContext {
  source?: string;
  line?: number;
  field?: string;
  /** The process's exit status when this error ends a command; default 1 ("could not run"). */
  exitStatus?: number;
  [key: string]: unknown;
}

/**
 * Base error of svc-ingest.
 * @example throw new SvcIngestError('MAPPING_INVALID', 'fields.postedAmount.from: expected a string', { source: 'x.json' })
 */
export class SvcIngestError extends Error {
  readonly code: ErrorCode;
  readonly context: ErrorContext;
  constructor(code: ErrorCode, message: string, context: ErrorContext = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SvcIngestError';
    this.code = code;
    this.context = context;
  }
}

/**
 * This worker's lease on the PostgreSQL ledger ran out and another worker took over some of its claims: every post
 * fails with it from then on, and the send chain stops (src/chain/claims.ts raises it, src/send/classify.ts stops on it).
 * @example if (err instanceof LedgerLeaseError) stop()
 */
export class LedgerLeaseError extends SvcIngestError {
  constructor(message: string) {
    super('LEDGER_LEASE', message);
    this.name = 'LedgerLeaseError';
  }
}

/** Thrown by a command to end the process with a given exit status (only the bin entry exits): see exitWith. */
export class ExitError extends Error {
  readonly exitCode: number;
  constructor(exitCode: number, message = `exit ${exitCode}`) {
    super(message);
    this.name = 'ExitError';
    this.exitCode = exitCode;
  }
}

/**
 * The one way a command ends with a status of its own (a failure's status comes from its error: exitStatusOf): 0
 * returns, any other is thrown as an ExitError, which main() (src/cli/run.ts) returns as the status.
 * @example cmd.action(async (ids, opts) => exitWith(await runTrace(ids, opts)))
 */
export function exitWith(status: number): void {
  if (status !== EXIT.OK) throw new ExitError(status);
}

/** Exit statuses of CONTRACT.md. */
export const EXIT = {
  OK: 0,
  USAGE: 1,
  REJECTED: 2,
  FAILED: 3,
  /** No records: every input was empty (or only a header); `--allow-empty` makes it 0. */
  EMPTY: 4,
  /** The service could not be reached, or stayed down past the outage limit. */
  UNAVAILABLE: 5,
  SIGINT: 130,
  SIGTERM: 143,
} as const;

/**
 * The exit status for an error that ended a command: an ExitError's own, 5 when the service is unavailable, an
 * error's `context.exitStatus`, else 1.
 * @example exitStatusOf(new SvcIngestError('INPUT_UNREADABLE', 'cannot read a.csv: no such file')) // 1
 */
export function exitStatusOf(err: unknown): number {
  if (err instanceof ExitError) return err.exitCode;
  if (err instanceof SvcIngestError && (err.code === 'SEND_UNAVAILABLE' || err.code === 'SEND_OUTAGE'))
    return EXIT.UNAVAILABLE;
  if (err instanceof SvcIngestError && typeof err.context.exitStatus === 'number')
    return err.context.exitStatus;
  return EXIT.USAGE;
}
