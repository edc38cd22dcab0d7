// What a send run says along the way that belongs to no one stage: the run's start, a missing optional column,
// the first record without a field the profile relaxed.
import type { Logger } from '../log.ts';
import type { ColumnUse } from '../map/types.ts';
import type { PreparedTx } from './drive.ts';

/** The run.start line: the run id, where the ledger and rejects are. */
export function logRunStart(
  log: Logger,
  runId: string,
  ledger: string,
  rejects: string | null,
  dryRun: boolean,
  /** The setting that named the ledger (src/ledger/ref.ts). */
  ledgerFrom?: string,
): void {
  log.info(
    { event: 'run.start', runId, ledger, ...(ledgerFrom ? { ledgerFrom } : {}), rejects, dryRun },
    `run ${runId}: ledger ${ledger}${rejects ? `, rejects ${rejects}` : ''}`,
  );
}

/** A column a rule names is not in an input's header (its field is left out of every record). */
export function columnMissing(log: Logger): (message: string, use: ColumnUse, source: string) => void {
  return (message, use, source) =>
    log.warn({ event: 'mapping.column_missing', rule: use.rule, column: use.column, source }, message);
}

/**
 * The profile declares id fields the bank's own numeric ids (`ownNumericIds`): said at the start of every run, so
 * sending them without the card-number check is never silent.
 */
export function ownIdsNotice(log: Logger, profileName: string, fields: readonly string[]): void {
  log.warn(
    { event: 'mapping.own_numeric_ids', mapping: profileName, fields },
    `mapping ${profileName} declares ${fields.join(', ')} the bank's own numeric ids: their values (all digits, or of the declared shape) are sent without the card-number check`,
  );
}

/** Fields the profile lets records go without ("required": false): said once a run, when it first happens. */
export function relaxedNotice(log: Logger, profileName: string): (item: PreparedTx) => void {
  const seen = new Set<string>();
  return (item) => {
    for (const field of item.relaxed ?? []) {
      if (seen.has(field)) continue;
      seen.add(field);
      log.warn(
        { event: 'mapping.relaxed_field', field, source: item.source, line: item.line },
        `records without ${field} are sent without it (mapping ${profileName} marks it "required": false; the service's documentation lists it as required)`,
      );
    }
  };
}
