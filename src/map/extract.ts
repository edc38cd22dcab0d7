// Taking a value apart: `split` and `match`, applied in that order to a rule's source value.
import { quote } from '../model/quote.ts';
import type { Getter } from './path.ts';
import { compilePattern, type LinearPattern, PATTERN_FLAGS } from './pattern.ts';
import {
  bad,
  type Env,
  isEmpty,
  isObject,
  type Json,
  MapFail,
  NO_MATCH,
  scalarToString,
} from './rule-kit.ts';

/**
 * `split` and `match`, applied in that order to the source value (as text). A value they cannot take
 * apart throws MapFail naming it, or, with `orElse`, gives NO_MATCH (the rule's `else` value is used).
 */
export function compileExtract(
  env: Env,
  path: string,
  rule: Record<string, Json>,
  inner: Getter,
  orElse: boolean,
): Getter {
  const stages: Array<(s: string, raw: unknown) => string | typeof NO_MATCH> = [];
  const noMatch = (message: string): typeof NO_MATCH => {
    if (orElse) return NO_MATCH;
    throw new MapFail(message);
  };
  if (rule.split !== undefined) {
    const o = rule.split;
    const p = `${path}.split`;
    if (!isObject(o)) bad(env.source, p, 'an object {"separator": ",", "part": 0, "at": "last"}', o);
    for (const k of Object.keys(o))
      if (!['separator', 'part', 'at'].includes(k)) bad(env.source, `${p}.${k}`, 'separator, part or at', k);
    const sep = o.separator;
    if (typeof sep !== 'string' || sep === '') bad(env.source, `${p}.separator`, 'a non-empty string', sep);
    const part = o.part;
    if (typeof part !== 'number' || !Number.isInteger(part) || Math.abs(part) > 1000)
      bad(env.source, `${p}.part`, 'an integer (0 = first part, -1 = last)', part);
    const at = o.at;
    if (at !== undefined && at !== 'first' && at !== 'last')
      bad(env.source, `${p}.at`, '"first" or "last" (split once), or no "at" (split at every one)', at);
    const what = at === undefined ? '' : ` at its ${at}`;
    stages.push((s, raw) => {
      let parts: string[];
      if (at === undefined) parts = s.split(sep);
      else {
        const i = at === 'last' ? s.lastIndexOf(sep) : s.indexOf(sep);
        parts = i < 0 ? [s] : [s.slice(0, i), s.slice(i + sep.length)];
      }
      const got = parts[part < 0 ? parts.length + part : part];
      return got !== undefined
        ? got
        : noMatch(`${quote(raw)} has no part ${part} when split on ${JSON.stringify(sep)}${what}`);
    });
  }
  if (rule.match !== undefined) {
    const o = rule.match;
    const p = `${path}.match`;
    const spec: Record<string, Json> =
      typeof o === 'string'
        ? { pattern: o }
        : isObject(o)
          ? o
          : bad(env.source, p, 'a regular expression, or {"pattern", "group", "flags"}', o);
    for (const k of Object.keys(spec))
      if (!['pattern', 'group', 'flags'].includes(k))
        bad(env.source, `${p}.${k}`, 'pattern, group or flags', k);
    const pattern = spec.pattern;
    if (typeof pattern !== 'string' || pattern === '')
      bad(env.source, typeof o === 'string' ? p : `${p}.pattern`, 'a regular expression', pattern);
    const flags = spec.flags ?? '';
    // g and y make a RegExp remember where it stopped: never across records.
    if (typeof flags !== 'string' || !PATTERN_FLAGS.test(flags))
      bad(env.source, `${p}.flags`, 'any of i, m, s, u', flags);
    let re: LinearPattern;
    try {
      re = compilePattern(pattern, flags);
    } catch (err) {
      return bad(
        env.source,
        typeof o === 'string' ? p : `${p}.pattern`,
        'a valid regular expression (RE2 syntax)',
        `${pattern} (${(err as Error).message})`,
      );
    }
    const groups = re.groups;
    const names = re.names;
    const group = spec.group ?? (groups > 0 ? 1 : 0);
    if (
      !(typeof group === 'number' && Number.isInteger(group) && group >= 0 && group <= groups) &&
      !(typeof group === 'string' && names.includes(group))
    ) {
      bad(
        env.source,
        `${p}.group`,
        `a capture group of the pattern (0..${groups}${names.length > 0 ? ` or ${names.join(', ')}` : ''})`,
        group,
      );
    }
    const shown = `/${pattern}/${flags}`;
    stages.push((s, raw) => {
      const m = re.exec(s);
      if (m === null) return noMatch(`${quote(raw)} does not match ${shown}`);
      const got = typeof group === 'number' ? m[group] : m.groups?.[group as string];
      return got !== undefined
        ? got
        : noMatch(`group ${group} of ${shown} took no part in matching ${quote(raw)}`);
    });
  }
  if (stages.length === 1) {
    const only = stages[0] as (s: string, raw: unknown) => string | typeof NO_MATCH;
    return (rec) => {
      const v = inner(rec);
      return isEmpty(v) ? v : only(scalarToString(v).trim(), v);
    };
  }
  return (rec) => {
    const v = inner(rec);
    if (isEmpty(v)) return v;
    let s: string | typeof NO_MATCH = scalarToString(v).trim();
    for (let i = 0; i < stages.length; i++) {
      s = (stages[i] as (s: string, raw: unknown) => string | typeof NO_MATCH)(s, v);
      if (s === NO_MATCH) return s;
    }
    return s;
  };
}
