// Where a ledger's acknowledgements came from: the destination of a run (the service's base URL, origin and path,
// plus the institution scope when one is configured). An acknowledgement counts only for the destination that gave
// it; a run against a destination the ledger has not seen is refused unless asked for (--new-destination); the lines
// or rows written before destinations existed are adopted once by the first run after the upgrade.
import { SvcIngestError } from '../errors.ts';

/** The option that lets a run start sending to a destination the ledger has not seen. */
export const NEW_DESTINATION_FLAG = '--new-destination';

/**
 * The destination a run sends to, normalised: lower-case scheme and host, no default port, no trailing slash, no
 * query or fragment; ` institution=ID` appended when a scope is given (the institution configured, if any).
 * @example destinationOf('HTTPS://Svc.Example:443/api/', 'BANK1') // 'https://svc.example/api institution=BANK1'
 */
export function destinationOf(url: string, scope?: string): string {
  let base: string;
  try {
    const u = new URL(url);
    base = `${u.origin}${u.pathname.replace(/\/+$/, '')}`;
  } catch {
    base = url.trim().replace(/\/+$/, '');
  }
  return scope ? `${base} institution=${scope}` : base;
}

/** What a ledger knows of destinations, as read from its lines or rows. */
export interface DestinationCensus {
  /**
   * Destinations the ledger has acknowledgements from (acked outcomes), or registered (added, adopted, or kept
   * known by a prune), in first-seen order: a run against another is refused.
   */
  known: string[];
  /** Every destination named by an outcome, failed ones included (what `ledger status` lists). */
  seen: string[];
  /** Outcomes written before destinations existed (no destination). */
  legacy: number;
  /** The destination the legacy outcomes were adopted for, once a run has done so. */
  adoptedFor: string | undefined;
}

/**
 * What a run against `ours` does with this ledger: `ok` (known), `adopt` (first run after the upgrade: the legacy
 * outcomes become ours), `add` (a new destination, asked for). `legacyOurs`: the legacy outcomes count for us.
 * @throws SvcIngestError LEDGER_DESTINATION when `ours` is new and `allowNew` is false
 * @example decideDestination({ known: ['https://uat/api'], legacy: 0, adoptedFor: undefined }, 'https://prod/api', false, '/l.ndjson') // throws
 */
export function decideDestination(
  census: DestinationCensus,
  ours: string,
  allowNew: boolean,
  location: string,
): { action: 'ok' | 'adopt' | 'add'; legacyOurs: boolean } {
  if (census.legacy > 0 && census.adoptedFor === undefined) return { action: 'adopt', legacyOurs: true };
  const legacyOurs = census.adoptedFor === ours;
  if (census.known.length === 0 || census.known.includes(ours)) return { action: 'ok', legacyOurs };
  if (allowNew) return { action: 'add', legacyOurs };
  throw newDestinationError(location, census.known, ours);
}

/** The one-line refusal: names the ledger, the destinations it has seen and this run's, and the option. */
export function newDestinationError(
  location: string,
  known: readonly string[],
  ours: string,
): SvcIngestError {
  const shown = known.length > 3 ? [...known.slice(0, 3), `… (${known.length} in all)`] : known;
  return new SvcIngestError(
    'LEDGER_DESTINATION',
    `the ledger ${location} has acknowledgements for ${shown.join(', ')}, not for this run's destination ${ours}; ` +
      `its acknowledgements count only for the destination that gave them — give ${NEW_DESTINATION_FLAG} to start ` +
      'sending to it in this ledger (everything is sent to it), or point the run at its own ledger',
    { source: location, destination: ours, known: [...known] },
  );
}
