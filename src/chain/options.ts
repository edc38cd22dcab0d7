// What a send run is given (the CLI builds it from the configuration and the flags).
import type { Config } from '../config/index.ts';
import type { LedgerRef } from '../ledger/ref.ts';
import type { Logger } from '../log.ts';
import type { InputFormat } from '../model/input.ts';
import type { PoolChoice } from '../prepare/choose.ts';
import type { RejectCaps } from '../record/rejecter.ts';
import type { DispatcherOptions } from '../send/dispatcher.ts';

/** The service sink's settings: everything DispatcherOptions takes but the recorder's callbacks. */
export type DispatchSettings = Omit<DispatcherOptions, 'onOutcome' | 'onRetry' | 'onSplit' | 'onBreaker'>;

/** How records are batched: the send slice's batch size. */
export type BatchConfig = Pick<Config['send'], 'batchSize'>;

export interface SendOptions {
  inputs: string[];
  /** `pgtext`: PostgreSQL's text format (read/pgtext.ts). */
  format?: InputFormat | 'pgtext';
  /** The name standard input or a pipe goes by in the ledger, the rejects and the logs (--source-name). */
  sourceName?: string;
  /** Profile name or path; undefined = canonical. */
  mapping?: string;
  delimiter?: string;
  /** Every column a mapping rule names must be in each CSV header (else only required ones; the rest warn). */
  strict?: boolean;
  /** The prepare stage's worker pool for this run (choosePool). */
  pool: PoolChoice;
  batching: BatchConfig;
  /** The service sink (unused in a dry run: nothing is sent). */
  dispatch: DispatchSettings;
  /** Checks that the service answers (the client's checkService); run before any record is read; `signal` ends it. */
  preflight?: (signal?: AbortSignal) => Promise<void>;
  /** The ledger (src/ledger/ref.ts): a file, or PostgreSQL with its connection settings. */
  ledger: LedgerRef;
  /** Where the run sends (ledger/destination.ts), and whether it may be new to the ledger (--new-destination). */
  destination?: string;
  newDestination?: boolean;
  /** The rejects file: --rejects, else the table's send.rejectsPath (cli/common.ts rejectsFileOf). */
  rejectsFile: string;
  /** The reject caps (a slice of the configuration's send.*). */
  caps: RejectCaps;
  /** Write rejects even in a dry run (the user named --rejects). */
  rejectsExplicit?: boolean;
  resume: boolean;
  dryRun: boolean;
  logger: Logger;
  stdin?: NodeJS.ReadableStream;
  /** Aborted (reason: the signal's name) when the run must stop: nothing new is read, what is in flight settles. */
  signal?: AbortSignal;
  /** An input without records is logged at info instead of warn (`--allow-empty`). */
  allowEmpty?: boolean;
  /** A stream's last record may lack its final line break (`--allow-unterminated`; read/broken.ts). */
  allowUnterminated?: boolean;
  /** Declared control totals: --expect-count, --expect-total, --control (send/control-totals.ts). */
  control?: import('../send/control-totals.ts').ControlFlags;
}
