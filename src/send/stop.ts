// Why a run stops sending: a failure no batch can fix (credentials, a redirect, a request that cannot be built)
// or an outage that lasted past the limit. Records read but not sent are then recorded as failed ("not sent: …").
import { SvcIngestError } from '../errors.ts';
import type { FailureClass } from './classify.ts';

/**
 * The run must stop: no batch can succeed now. Batches not sent are recorded as failed with `notSent` as their
 * error, so a rerun sends them. OutageError is exit 5; the others (credentials, redirect) exit 1.
 * @example if (err instanceof StopError) await sink.abandon(rest, err.notSent, true)
 */
export class StopError extends SvcIngestError {
  readonly notSent: string;
  constructor(
    code: 'SEND_AUTH' | 'SEND_REDIRECT' | 'SEND_ENDPOINT' | 'SEND_REQUEST' | 'SEND_OUTAGE' | 'LEDGER_LEASE',
    message: string,
    notSent: string,
  ) {
    // One line whatever the service put in its answer.
    super(code, message.replace(/[\u0000-\u001f\u007f]+/g, ' '));
    this.name = 'StopError';
    this.notSent = notSent;
  }
}

/** The service has been failing for longer than outageMaxMs: stop sending (exit 5). */
export class OutageError extends StopError {
  constructor(ms: number, last?: string) {
    super(
      'SEND_OUTAGE',
      `service unavailable: no batch got through for ${(ms / 1000).toFixed(1)} s; stopped sending${last ? ` (last error: ${last})` : ''}`,
      'not sent: service unavailable',
    );
    this.name = 'OutageError';
  }
}

/** The StopError for a failure that ends the run at once (`f.fatal` is set). */
export function stopFor(f: FailureClass): StopError {
  switch (f.fatal) {
    case 'auth':
      return new StopError(
        'SEND_AUTH',
        `${f.message}; stopped at once: the service refused our credentials (check auth.tokenEnv / auth.tokenFile and tls.*)`,
        `not sent: the service refused our credentials (HTTP ${f.httpStatus})`,
      );
    case 'endpoint':
      return new StopError(
        'SEND_ENDPOINT',
        `${f.message}; stopped at once: the transactions endpoint is not at this base URL (check baseUrl / --base-url)`,
        `not sent: the transactions endpoint answered ${f.httpStatus} (wrong base URL)`,
      );
    case 'lease':
      return new StopError(
        'LEDGER_LEASE',
        `${f.message}; stopped before sending another batch`,
        'not sent: this worker’s lease on the ledger ran out (another worker may have taken these records over; a rerun sends what no one did)',
      );
    case 'redirect':
      return new StopError(
        'SEND_REDIRECT',
        `${f.message}; stopped at once`,
        'not sent: the service answered with a redirect',
      );
    default:
      return new StopError(
        'SEND_REQUEST',
        `${f.message}; stopped at once`,
        'not sent: the request could not be built',
      );
  }
}
