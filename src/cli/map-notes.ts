// What `map` says at the end besides its counts, as `send` and `mapping check` say it: the warnings of a probably
// wrong profile (errors under --strict) and the local times that name no single instant with the profile's rule.

import { stderrLine } from '../log.ts';
import { ambiguousText, ambiguousTimes } from '../map/ambiguous-times.ts';
import { createSilentErrors, type SilentErrors, silentWarnings } from '../map/silent-errors.ts';
import type { CompiledProfile } from '../map/types.ts';
import { maskCardNumbers } from '../mask/index.ts';

/** The collector `map` hands to prepareChunks (created before the first record is mapped). */
export function mapSilent(profile: CompiledProfile): SilentErrors {
  return createSilentErrors(profile);
}

/**
 * Print the end notes; returns how many warnings there were (under `strict` they are printed as errors and the
 * caller exits 1).
 * @example if (printMapNotes(profile, silent, strict) > 0 && strict) code = EXIT.INVALID
 */
export function printMapNotes(profile: CompiledProfile, silent: SilentErrors, strict: boolean): number {
  const state = silent.end();
  const ambiguous = ambiguousTimes(profile, state);
  if (ambiguous !== undefined)
    stderrLine('info', 'map.ambiguous', `svc-ingest map: ${ambiguousText(ambiguous)}`, { ...ambiguous });
  const warnings = silentWarnings(profile, state);
  for (const w of warnings)
    stderrLine(
      strict ? 'error' : 'warn',
      'mapping.warning',
      maskCardNumbers(`svc-ingest: ${strict ? 'error (--strict)' : 'warning'}: ${w}`),
    );
  return warnings.length;
}
