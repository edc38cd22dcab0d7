// What `map` says at the end besides its counts, as `send` and `mapping check` say it: the warnings of a probably
// wrong profile (errors under --strict) and the local times that name no single instant with the profile's rule.

import { EXIT } from '../errors.ts';
import { stderrLine } from '../log.ts';
import { ambiguousText, ambiguousTimes } from '../map/ambiguous-times.ts';
import { unknownCodeLines } from '../map/code-notes.ts';
import { createSilentErrors, type SilentErrors, silentWarnings } from '../map/silent-errors.ts';
import type { CompiledProfile } from '../map/types.ts';
import { maskCardNumbers } from '../mask/index.ts';
import type { CodeCounts } from '../model/code-lists.ts';
import { printWarning } from './common.ts';

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

/** What `map` counted. */
export interface MapCounts {
  read: number;
  expanded: number;
  mapped: number;
  rejected: number;
  codes: CodeCounts;
}

/**
 * The end of `map`: code values outside the lists, the notes and warnings (printMapNotes), the summary line; returns
 * the exit status (1 under --strict when the mapping warned, 2 with rejects, else 0).
 */
export function printMapEnd(
  profile: CompiledProfile,
  silent: SilentErrors,
  strict: boolean,
  c: MapCounts,
): number {
  const own =
    profile.ownIds.length > 0 ? `; own numeric ids sent unchecked: ${profile.ownIds.join(', ')}` : '';
  // A value outside the code lists is reported, once per value with its count (the service's lists are not shown).
  for (const line of unknownCodeLines(c.codes, c.mapped)) printWarning(line);
  const gated = printMapNotes(profile, silent, strict) > 0 && strict;
  const code = gated ? EXIT.USAGE : c.rejected > 0 ? EXIT.REJECTED : EXIT.OK;
  const { read, expanded, mapped, rejected } = c;
  stderrLine(
    code === EXIT.OK ? 'info' : 'warn',
    'map.summary',
    `svc-ingest map: ${read} read${expanded > 0 ? ` (+${expanded} expanded)` : ''}, ${mapped} mapped, ${rejected} rejected (mapping ${profile.name}${own})`,
    { read, ...(expanded > 0 ? { expanded } : {}), mapped, rejected, exitStatus: code },
  );
  return code;
}
