// A profile's regular expression (`match`), compiled by RE2JS: matching takes time linear in the value, whatever
// the pattern (`^(a+)+$` on 10,000 characters: milliseconds), where JavaScript's backtracking RegExp can take
// longer than the run. RE2 syntax: no backreferences, no lookahead or lookbehind; everything else a profile
// writes (classes, quantifiers, groups, named groups `(?<name>…)`, anchors, \d \w \s \b) reads as in JavaScript.
import { createRequire } from 'node:module';
import type { RE2JS as RE2JSClass } from 're2js';

const require = createRequire(import.meta.url);
let re2js: typeof RE2JSClass | undefined;

/** RE2JS, loaded when a profile first has a pattern: most profiles have none, and it is ~2 ms of every start. */
function RE2(): typeof RE2JSClass {
  re2js ??= (require('re2js') as typeof import('re2js')).RE2JS;
  return re2js;
}

/** A compiled pattern: exec like RegExp's (groups 0..n and named groups, undefined for a group that took no part). */
export interface LinearPattern {
  exec(
    s: string,
  ): { [group: number]: string | undefined; groups?: Record<string, string | undefined> } | null;
  /** Does the pattern match somewhere in s (no groups built: faster than exec)? */
  test(s: string): boolean;
  /** Number of capture groups. */
  groups: number;
  /** Names of the named groups. */
  names: string[];
}

/** The flags a profile may give (g and y would carry state from one record to the next: never allowed). */
export const PATTERN_FLAGS = /^[imsu]*$/;

/**
 * Compile a profile pattern with flags i (case-insensitive), m (^ $ at line ends), s (. matches newlines) and u
 * (accepted; RE2 always reads the pattern as Unicode). Throws an Error whose message says what is wrong
 * (RE2's, e.g. `invalid escape sequence: \1` for a backreference).
 * @example compilePattern('^(?<city>.+?),\\s*(?<st>[A-Z]{2})$', '').exec('AUSTIN, TX')?.groups?.st // 'TX'
 */
export function compilePattern(pattern: string, flags: string): LinearPattern {
  const RE2JS = RE2();
  let f = 0;
  if (flags.includes('i')) f |= RE2JS.CASE_INSENSITIVE;
  if (flags.includes('m')) f |= RE2JS.MULTILINE;
  if (flags.includes('s')) f |= RE2JS.DOTALL;
  let re: RE2JSClass;
  try {
    re = RE2JS.compile(pattern, f);
  } catch (err) {
    // RE2's own words, without its prefix: "error parsing regexp: invalid escape sequence: `\1`".
    const why = (err as Error).message.replace(/^error parsing regexp: /, '');
    throw new Error(`${why} (the RE2 syntax: no backreferences, lookahead or lookbehind)`);
  }
  return {
    exec: (s) => re.exec(s),
    test: (s) => re.test(s),
    groups: re.groupCount(),
    names: Object.keys(re.namedGroups()),
  };
}
