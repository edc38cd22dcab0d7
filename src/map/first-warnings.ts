// `send` says each kind of warning of a probably wrong profile as it meets it (its first record, with the record's
// line), not only at the end of the run: a night's operator sees it while the records are still being sent.
import type { Logger } from '../log.ts';
import { maskCardNumbers } from '../mask/index.ts';
import type { SilentState } from './silent-errors.ts';

/** What the first record of each kind shows. */
export const FIRST_TEXT: Readonly<Record<string, string>> = {
  postedBefore:
    'transactionPostingTimestamp earlier than transactionTimestamp: is the posting time read from the right event?',
  scale:
    "an amount scaled by the profile's fixed currency or exponent in a record whose currencyCode is another",
  sign: "transactionType contradicts the sign of the amount, against the export's convention (declared, or the majority so far)",
  oneZone:
    "local times read in the profile's one fixed zone while this record's merchant is in another zone than the earlier ones'",
  positional: "a positional pick ([n]) reads an element whose kind differs from the other records'",
};

/**
 * A watcher to call with the run's state as records are mapped (after each chunk): logs each kind of warning once,
 * at its first record (`mapping.warning`, with `kind` and `at`).
 * @example const announce = firstWarnings(log); for await (const c of chunks) { yield c; announce(silent.state) }
 */
export function firstWarnings(log: Logger): (state: SilentState) => void {
  const said = new Set<string>();
  return (state) => {
    for (const [kind, at] of Object.entries(state.firstAt)) {
      if (said.has(kind)) continue;
      said.add(kind);
      const text = FIRST_TEXT[kind] ?? kind;
      log.warn(
        { event: 'mapping.warning', kind, at, first: true },
        maskCardNumbers(
          `svc-ingest: warning: ${at}: ${text} (its first record; the run's end counts them all)`,
        ),
      );
    }
  };
}
