// Options that would do nothing where they stand are refused at load, naming the rule and the option: a profile
// that says `zeroPad` beside an `enum` must not send `5` where its author expected `05`.
import { bad, CONVERSIONS, type Env, type Json, TEXT_OPTIONS } from './rule-kit.ts';

/** Besides a `const` (the output value itself) only these mean anything. */
const BESIDE_CONST = new Set(['const', 'required', 'description']);
/** Besides a `hash` (a finished id): cutting it by `slice`, and these. */
const BESIDE_HASH = new Set(['hash', 'slice', 'required', 'description']);
/** A rule without a source is its default: nothing else applies. */
const WITHOUT_SOURCE = new Set(['default', 'required', 'description']);

/**
 * Throws MAPPING_INVALID for the first option of rule `r` (at `path`) that would be ignored: anything beside a
 * `const`, options beside a `hash` (but `slice`), options of a rule without a source, and the text options
 * (`maxLength`, `case`, `zeroPad`, `"trim": false`) beside a conversion (`kind`: the conversion the rule has,
 * named or implied by the field's type; 'string' for text).
 * @example checkNoOps(env, 'fields.paymentMethodEntryType', { from: 'MODE', enum: {…}, zeroPad: 2 }, 'enum') // throws
 */
export function checkNoOps(env: Env, path: string, r: Record<string, Json>, kind: string | undefined): void {
  const keys = Object.keys(r);
  const refuse = (k: string, why: string): never =>
    bad(env.source, `${path}.${k}`, `no ${k} here: ${why}`, r[k]);
  if (r.const !== undefined) {
    for (const k of keys)
      if (!BESIDE_CONST.has(k)) refuse(k, 'const is the output value, nothing is applied to it');
    return;
  }
  if (r.hash !== undefined) {
    for (const k of keys)
      if (!BESIDE_HASH.has(k)) refuse(k, 'a hash is the finished id (only slice may cut it)');
    return;
  }
  if (r.from === undefined && r.template === undefined) {
    for (const k of keys) if (!WITHOUT_SOURCE.has(k)) refuse(k, 'a rule without a source is its default');
    return;
  }
  if (kind === undefined || kind === 'string') return;
  for (const k of TEXT_OPTIONS)
    if (r[k] !== undefined)
      refuse(k, `text options apply to a text value without a conversion, and ${kind}'s output is final`);
  if (r.trim === false) refuse('trim', `${kind} reads its value trimmed whatever trim says`);
}

/** The conversion a rule names, or the one its field's type implies (`string` for text). */
export function conversionKind(r: Record<string, Json>, fieldType: string): string {
  const named = CONVERSIONS.find((k) => r[k] !== undefined);
  if (named !== undefined) return named;
  return fieldType === 'boolean' || fieldType === 'integer' ? fieldType : 'string';
}
