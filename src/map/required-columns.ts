// Checks a CSV header against what a mapping profile needs, before anything is sent or planned.
import { SvcIngestError } from '../errors.ts';
import type { CompiledProfile } from './types.ts';

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
