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
  | 'MAPPING_INVALID'
  | 'MAPPING_UNREADABLE'
  | 'RECORD_INVALID'
  | 'SEND_HTTP'
  | 'SEND_NETWORK'
  | 'SEND_TIMEOUT'
  | 'SEND_LIMIT'
  | 'SEND_SESSION'
  | 'SEND_OUTAGE'
  | 'LEDGER_LOCKED'
  | 'LEDGER_WRITE'
  | 'LEDGER_READ';

export interface ErrorContext {
  source?: string;
  line?: number;
  field?: string;
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

/** Thrown by a command to end the process with a given exit status (only the bin entry exits). */
export class ExitError extends Error {
  readonly exitCode: number;
  constructor(exitCode: number, message = `exit ${exitCode}`) {
    super(message);
    this.name = 'ExitError';
    this.exitCode = exitCode;
  }
}

/** Exit statuses of CONTRACT.md. */
export const EXIT = {
  OK: 0,
  USAGE: 1,
  REJECTED: 2,
  FAILED: 3,
  EMPTY: 4,
  UNAVAILABLE: 5,
  SIGINT: 130,
  SIGTERM: 143,
} as const;
