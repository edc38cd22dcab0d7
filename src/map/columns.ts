// A profile's columns against a CSV header: a missing required one stops the run, any other is a warning
// naming the rule (an error under --strict), so a misspelt column never drops a field unnoticed. The required ones
// alone (checkRequiredColumns) are what backfill plans and reconcile's exports check.
import { SvcIngestError } from '../errors.ts';
import type { ColumnUse, CompiledProfile } from './types.ts';

/**
 * Throw INPUT_HEADER_MISSING_COLUMN naming every column the profile's required fields read that the header lacks.
 * @example checkRequiredColumns(profile, ['transactionId', 'postedAmount'], 'a.csv')
 */
export function checkRequiredColumns(
  profile: CompiledProfile,
  columns: readonly string[],
  source: string,
): void {
  const have = new Set(columns);
  const missing = profile.requiredColumns.filter((col) => !have.has(col));
  if (missing.length > 0) {
    throw new SvcIngestError(
      'INPUT_HEADER_MISSING_COLUMN',
      `${source}: header lacks column${missing.length > 1 ? 's' : ''} ${missing.join(', ')} needed by mapping ${profile.name}`,
      { source },
    );
  }
}

/**
 * How checkHeader reports a missing optional column when it does not throw.
 * @example { strict: false, warn: (m) => log.warn({ event: 'mapping.column_missing' }, m) }
 */
export interface HeaderCheckOptions {
  /** Every column a rule names must be in the header (`--strict`). */
  strict?: boolean;
  /** Called once per missing optional column (not under strict), with the input it is missing from. */
  warn?: (message: string, use: ColumnUse, source: string) => void;
}

/**
 * The column uses of a profile whose column is not in a header, in rule order.
 * @example missingColumns(profile, ['TXN_ID', 'AMOUNT']) // [{ column: 'ARN', rule: 'fields.acquirerReferenceNumber.from', ... }]
 */
export function missingColumns(profile: CompiledProfile, header: readonly string[]): ColumnUse[] {
  const have = new Set(header);
  return profile.columns.filter((c) => !have.has(c.column));
}

/** One line about a missing optional column. */
export function describeMissing(use: ColumnUse, source: string): string {
  return `${source}: header lacks column ${JSON.stringify(use.column)} named by ${use.rule} (${use.field} is left out of every record)`;
}

/**
 * Check a CSV header against a profile. A missing column of a required field without a default →
 * INPUT_HEADER_MISSING_COLUMN (checkRequiredColumns, which backfill plans use alone); any other missing
 * column → `warn` (INPUT_HEADER_MISSING_COLUMN under `strict`).
 * @example checkHeader(profile, columns, 'a.csv', { strict: false, warn: (m) => log.warn(m) })
 */
export function checkHeader(
  profile: CompiledProfile,
  header: readonly string[],
  source: string,
  opts: HeaderCheckOptions = {},
): void {
  checkRequiredColumns(profile, header, source);
  const missing = missingColumns(profile, header);
  if (missing.length === 0) return;
  if (opts.strict) {
    const first = missing[0] as ColumnUse;
    const rest = missing.length > 1 ? ` (and ${missing.length - 1} more)` : '';
    throw new SvcIngestError(
      'INPUT_HEADER_MISSING_COLUMN',
      `${source}: header lacks column ${JSON.stringify(first.column)} named by ${first.rule}${rest}; --strict wants every column a rule names`,
      { source, field: first.field },
    );
  }
  for (const use of missing) opts.warn?.(describeMissing(use, source), use, source);
}
