// Local times that name no single instant (a DST repeated hour, a DST gap): how many a run met and the profile's
// rule for them, for send's summary and run.end, `map` and `mapping check` (the counts are silent-errors.ts's).
import type { SilentState } from './silent-errors.ts';
import type { CompiledProfile } from './types.ts';

/**
 * The local times of a run in a DST repeated hour or gap, and what the profile did with them (`earlier`, `later`,
 * `reject`; several rules with different choices: `field: choice, …`).
 * @example { repeatedHour: 8, gap: 0, rule: 'reject' }
 */
export interface AmbiguousTimes {
  repeatedHour: number;
  gap: number;
  rule: string;
}

/** The profile's rule for ambiguous local times, in one word when every timestamp rule makes the same choice. */
export function ambiguousRule(profile: CompiledProfile): string {
  const notes = profile.notes.ambiguous;
  const choices = [...new Set(notes.map((n) => n.choice))];
  if (choices.length <= 1) return choices[0] ?? 'reject';
  return notes.map((n) => `${n.rule.replace(/^fields\./, '').split('.')[0]}: ${n.choice}`).join(', ');
}

/** The counts when the run met any (undefined: none). */
export function ambiguousTimes(profile: CompiledProfile, state: SilentState): AmbiguousTimes | undefined {
  if (state.repeatedHour === 0 && state.gap === 0) return undefined;
  return { repeatedHour: state.repeatedHour, gap: state.gap, rule: ambiguousRule(profile) };
}

const WHAT: Record<string, string> = {
  reject: 'rejected',
  earlier: 'read as the earlier instant',
  later: 'read as the later instant',
};

/**
 * One line in words: `8 local times in a DST repeated hour, 0 in a gap: rejected ("ambiguous": "reject")`.
 * @example ambiguousText({ repeatedHour: 8, gap: 1, rule: 'later' })
 */
export function ambiguousText(a: AmbiguousTimes): string {
  const n = a.repeatedHour + a.gap;
  const what = WHAT[a.rule] ?? `as each rule says (${a.rule})`;
  const rule = WHAT[a.rule] !== undefined ? ` ("ambiguous": "${a.rule}")` : '';
  return `${n} ambiguous local time${n === 1 ? '' : 's'} (${a.repeatedHour} in a DST repeated hour, ${a.gap} in a DST gap): ${what}${rule}`;
}
