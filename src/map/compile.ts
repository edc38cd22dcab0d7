// Compiles a checked mapping-profile document into one fast closure per field (no per-record interpretation).
import { createHash } from 'node:crypto';
import type { TransactionField, TransactionNotification } from '../client/models.ts';
import { TRANSACTION_FIELDS } from '../client/models.ts';
import { SvcIngestError } from '../errors.ts';
import { luhnValid, maskCardNumbers, maskDeep, maskPan } from '../mask.ts';
import type { InputFormat } from '../read/open.ts';
import type { FieldError } from '../validate/validate.ts';
import { addError, REQUIRED_FIELDS, validateTransaction } from '../validate/validate.ts';
import { toMinorUnits } from './amount.ts';
import { currencyExponent, toCountryAlpha2, toCurrencyAlpha3, toStateCode } from './codes.ts';
import { MapFail, quote } from './fail.ts';
import { type Getter, PathError, compileGetter as parseGetter, pathText } from './path.ts';
import type { ColumnUse, CompiledProfile } from './profile.ts';
import { compileTimestamp } from './timestamp.ts';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Convert = (v: unknown, tx: Record<string, unknown>) => unknown;
interface Step {
  field: TransactionField;
  run: (rec: Record<string, unknown>, tx: Record<string, unknown>) => unknown;
}

const SOURCES = ['from', 'template', 'const', 'hash'] as const;
const CONVERSIONS = [
  'amount',
  'timestamp',
  'boolean',
  'integer',
  'currency',
  'country',
  'state',
  'enum',
] as const;
const OPTIONS = [
  'default',
  'else',
  'trim',
  'maxLength',
  'case',
  'zeroPad',
  'slice',
  'split',
  'match',
  'required',
] as const;
const RULE_KEYS = [...SOURCES, ...OPTIONS, ...CONVERSIONS, 'description'] as const;

const PROFILE_KEYS = ['$schema', 'name', 'description', 'format', 'delimiter', 'timeZone', 'pan', 'fields'];
// Free text where a card number typed by a clerk could hide; ids are left alone (a 16-digit id is legal).
const FREE_TEXT = new Set<string>([
  'paymentNetworkMerchant',
  'paymentNetworkMerchantAddress1',
  'paymentNetworkMerchantAddress2',
  'paymentNetworkMerchantCity',
]);
const TRUE_WORDS = new Set(['y', 'yes', 'true', 't', '1']);
const FALSE_WORDS = new Set(['n', 'no', 'false', 'f', '0']);
const INTEGER = /^[+-]?\d{1,15}$/;
const MASKED_PAN = /^(\d{6,8})[*Xx#•]+(\d{4})$/;

const FIELDS = Object.keys(TRANSACTION_FIELDS) as TransactionField[];
const FIELD_INDEX = new Map<string, number>(FIELDS.map((f, i) => [f, i]));
const CURRENCY_INDEX = FIELD_INDEX.get('currencyCode') as number;
const IIN_INDEX = FIELD_INDEX.get('iin') as number;
const LAST4_INDEX = FIELD_INDEX.get('last4') as number;
const NETWORK_INDEX = FIELD_INDEX.get('cardNetworkIdentifier') as number;
if (!FIELDS.every((f) => /^[A-Za-z][A-Za-z0-9]*$/.test(f)))
  throw new Error('TRANSACTION_FIELDS must be identifiers');
/**
 * values (in TRANSACTION_FIELDS order) → TransactionNotification, leaving out undefined ones. Generated
 * once from the fixed field names (never from profile text) because named stores keep V8's fast
 * object shape, while ~30 keyed stores (`tx[field] = v`) push each object into slow dictionary mode.
 */
const buildTx = new Function(
  'v',
  `const o = {};\n${FIELDS.map((f, i) => `if (v[${i}] !== undefined) o.${f} = v[${i}];`).join('\n')}\nreturn o;`,
) as (values: unknown[]) => Record<string, unknown>;

/** Throws MAPPING_INVALID with the JSON path of the bad key. */
function bad(source: string, path: string, expected: string, got: unknown): never {
  const shown = got === undefined ? 'nothing' : JSON.stringify(got);
  throw new SvcIngestError('MAPPING_INVALID', `${path}: expected ${expected}, got ${shown}`, {
    source,
    path,
  });
}

function isObject(v: unknown): v is Record<string, Json> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isEmpty(v: unknown): boolean {
  return (
    v === undefined || v === null || (typeof v === 'string' && (v.length === 0 || v.trim().length === 0))
  );
}

function scalarToString(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  throw new MapFail(`expected a text or number, got ${quote(v)}`);
}

/** A profile's context while compiling. */
interface Env {
  source: string;
  timeZone?: string;
}

function checkOutputValue(env: Env, path: string, field: TransactionField, value: unknown): void {
  // null is the way to say "leave the field out".
  if (value === null) return;
  const errors = validateTransaction({ [field]: value }).filter(
    (e) => e.field === field && e.message !== 'required',
  );
  if (errors.length > 0) bad(env.source, path, `a valid ${field} (${errors[0]?.message})`, value);
}

/** A column (or path) a rule reads, and the JSON path of the rule key that names it. */
export interface ColumnRef {
  column: string;
  rule: string;
}

/** A path's getter; a path the language does not understand is MAPPING_INVALID at `jsonPath`. */
function getterAt(env: Env, jsonPath: string, path: string): Getter {
  try {
    return parseGetter(path);
  } catch (err) {
    if (err instanceof PathError) bad(env.source, jsonPath, err.message, path);
    throw err;
  }
}

/** One hash part as text: objects as JSON, anything else trimmed. */
function hashPart(v: unknown): string {
  return typeof v === 'object' ? JSON.stringify(v) : String(v).trim();
}

function compileSource(
  env: Env,
  path: string,
  rule: Record<string, Json>,
): { get: Getter; columns: ColumnRef[] } {
  const present = SOURCES.filter((k) => rule[k] !== undefined);
  if (present.length > 1) bad(env.source, path, 'one of from, template, const, hash', present);
  if (rule.from !== undefined) {
    const from = rule.from;
    if (typeof from !== 'string' || from === '')
      bad(env.source, `${path}.from`, 'a column name or dotted path', from);
    return {
      get: getterAt(env, `${path}.from`, from),
      columns: [{ column: pathText(from), rule: `${path}.from` }],
    };
  }
  if (rule.template !== undefined) {
    const t = rule.template;
    if (typeof t !== 'string') bad(env.source, `${path}.template`, 'a string like "{DATE} {TIME}"', t);
    const literals: string[] = [];
    const getters: Getter[] = [];
    const columns: ColumnRef[] = [];
    const re = /\{([^{}]+)\}/g;
    let last = 0;
    for (let m = re.exec(t); m !== null; m = re.exec(t)) {
      literals.push(t.slice(last, m.index));
      const col = m[1] as string;
      columns.push({ column: pathText(col), rule: `${path}.template` });
      getters.push(getterAt(env, `${path}.template`, col));
      last = m.index + m[0].length;
    }
    if (getters.length === 0) bad(env.source, `${path}.template`, 'at least one {column}', t);
    const tail = t.slice(last);
    return {
      columns,
      get: (rec) => {
        let out = literals[0] as string;
        for (let i = 0; i < getters.length; i++) {
          const v = (getters[i] as Getter)(rec);
          // Any missing part makes the whole value missing: "2025-10-09 " is not half a timestamp.
          if (isEmpty(v)) return undefined;
          out += scalarToString(v).trim() + (i + 1 < literals.length ? (literals[i + 1] as string) : tail);
        }
        return out;
      },
    };
  }
  if (rule.hash !== undefined) {
    const h = rule.hash;
    if (!isObject(h)) bad(env.source, `${path}.hash`, 'an object {"of": [columns], ...}', h);
    for (const k of Object.keys(h)) {
      if (!['of', 'separator', 'length', 'prefix'].includes(k))
        bad(env.source, `${path}.hash.${k}`, 'of, separator, length or prefix', k);
    }
    const of = h.of;
    if (!Array.isArray(of) || of.length === 0 || !of.every((c) => typeof c === 'string' && c !== '')) {
      bad(env.source, `${path}.hash.of`, 'a non-empty array of column names', of);
    }
    const sep = h.separator ?? '|';
    // One character (not the backslash, which escapes it): the encoding below needs both to be unambiguous.
    if (typeof sep !== 'string' || sep.length !== 1 || sep === '\\')
      bad(env.source, `${path}.hash.separator`, 'one character other than a backslash', sep);
    const length = h.length ?? 32;
    if (typeof length !== 'number' || !Number.isInteger(length) || length < 8 || length > 64) {
      bad(env.source, `${path}.hash.length`, 'integer 8..64', length);
    }
    const prefix = h.prefix ?? '';
    if (typeof prefix !== 'string' || !/^[A-Za-z0-9._:-]{0,31}$/.test(prefix)) {
      bad(env.source, `${path}.hash.prefix`, 'up to 31 characters of A-Z a-z 0-9 . _ : -', prefix);
    }
    const cols = of as string[];
    const getters = cols.map((c, i) => getterAt(env, `${path}.hash.of[${i}]`, c));
    const n = getters.length;
    const escapedSep = `\\${sep}`;
    return {
      columns: cols.map((c, i) => ({ column: pathText(c), rule: `${path}.hash.of[${i}]` })),
      get: (rec) => {
        // Parts joined by the separator, as before, while no part holds it (so ids made earlier stay the
        // same); otherwise every backslash and separator inside a part is escaped with a backslash. A plain
        // join holds exactly n-1 separators and an escaped one at least n, and each form decodes one way
        // only: two different tuples never hash the same text.
        let joined = '';
        let holdsSeparator = false;
        for (let i = 0; i < n; i++) {
          const v = (getters[i] as Getter)(rec);
          // Like a template, any empty part makes the id missing (never an id made of the other parts).
          if (isEmpty(v)) return undefined;
          const part = hashPart(v);
          if (part.includes(sep)) holdsSeparator = true;
          joined = i === 0 ? part : joined + sep + part;
        }
        if (holdsSeparator) {
          joined = '';
          for (let i = 0; i < n; i++) {
            const part = hashPart((getters[i] as Getter)(rec))
              .replaceAll('\\', '\\\\')
              .replaceAll(sep, escapedSep);
            joined = i === 0 ? part : joined + sep + part;
          }
        }
        return prefix + createHash('sha256').update(joined).digest('hex').slice(0, length);
      },
    };
  }
  return { get: () => undefined, columns: [] };
}

/** What an extraction (split, match) yields for a value it cannot take apart, when the rule has an `else`. */
const NO_MATCH: unique symbol = Symbol('no match');

/**
 * `split` and `match`, applied in that order to the source value (as text). A value they cannot take
 * apart throws MapFail naming it, or, with `orElse`, gives NO_MATCH (the rule's `else` value is used).
 */
function compileExtract(
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
    if (typeof flags !== 'string' || !/^[imsu]*$/.test(flags))
      bad(env.source, `${p}.flags`, 'any of i, m, s, u', flags);
    let re: RegExp;
    let groups: number;
    let names: string[];
    try {
      re = new RegExp(pattern, flags);
      const probe = new RegExp(`${pattern}|`, flags).exec('') as RegExpExecArray;
      groups = probe.length - 1;
      names = Object.keys(probe.groups ?? {});
    } catch (err) {
      return bad(
        env.source,
        typeof o === 'string' ? p : `${p}.pattern`,
        'a valid regular expression',
        `${pattern} (${(err as Error).message})`,
      );
    }
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

function compileConversion(
  env: Env,
  path: string,
  field: TransactionField,
  rule: Record<string, Json>,
): Convert {
  const present = CONVERSIONS.filter((k) => rule[k] !== undefined);
  if (present.length > 1) bad(env.source, path, 'at most one conversion', present);
  const kind =
    present[0] ??
    (TRANSACTION_FIELDS[field] === 'boolean'
      ? 'boolean'
      : TRANSACTION_FIELDS[field] === 'integer'
        ? 'integer'
        : 'string');
  const opt = kind === 'string' ? undefined : rule[kind];
  const p = `${path}.${kind}`;
  const optionsOf = (allowed: string[]): Record<string, Json> => {
    // Implied by the field's type (no conversion key given): no options.
    if (opt === true || opt === undefined) return {};
    if (!isObject(opt)) bad(env.source, p, 'true or an options object', opt);
    for (const k of Object.keys(opt))
      if (!allowed.includes(k))
        bad(env.source, `${p}.${k}`, `one of ${allowed.join(', ') || '(no options)'}`, k);
    return opt;
  };
  switch (kind) {
    case 'string':
      return compileString(env, path, field, rule);
    case 'amount': {
      const o = optionsOf(['units', 'abs', 'currency', 'exponent']);
      const units = o.units ?? 'major';
      if (units !== 'major' && units !== 'minor') bad(env.source, `${p}.units`, '"major" or "minor"', units);
      const abs = o.abs ?? false;
      if (typeof abs !== 'boolean') bad(env.source, `${p}.abs`, 'true or false', abs);
      let fixed: number | undefined;
      if (o.exponent !== undefined) {
        const e = o.exponent;
        if (typeof e !== 'number' || !Number.isInteger(e) || e < 0 || e > 4)
          bad(env.source, `${p}.exponent`, 'integer 0..4', e);
        fixed = e;
      } else if (o.currency !== undefined) {
        const c = typeof o.currency === 'string' ? toCurrencyAlpha3(o.currency) : undefined;
        if (c === undefined) bad(env.source, `${p}.currency`, 'an ISO 4217 currency code', o.currency);
        fixed = currencyExponent(c);
      }
      const opts = { units, abs } as const;
      if (units === 'minor') return (v) => toMinorUnits(v, 0, opts);
      if (fixed !== undefined) {
        const exponent = fixed;
        return (v) => toMinorUnits(v, exponent, opts);
      }
      return (v, tx) => {
        const code = tx.currencyCode;
        const exponent = typeof code === 'string' ? currencyExponent(code) : undefined;
        if (exponent === undefined) throw new MapFail('no valid currencyCode to scale the amount by');
        return toMinorUnits(v, exponent, opts);
      };
    }
    case 'timestamp': {
      const o = optionsOf(['format', 'zone']);
      const format = o.format ?? 'auto';
      if (typeof format !== 'string' || format === '')
        bad(env.source, `${p}.format`, '"auto", "iso", "unix-s", "unix-ms" or a pattern', format);
      const zone = o.zone ?? env.timeZone;
      if (zone !== undefined && typeof zone !== 'string')
        bad(env.source, `${p}.zone`, 'an IANA zone name or an offset', zone);
      try {
        const conv = compileTimestamp({ format, zone });
        return (v) => conv(v);
      } catch (err) {
        return bad(
          env.source,
          o.zone === undefined && zone !== undefined ? 'timeZone' : p,
          'a valid format and zone',
          `${(err as Error).message}`,
        );
      }
    }
    case 'boolean':
      optionsOf([]);
      return (v) => {
        if (typeof v === 'boolean') return v;
        if (v === 1 || v === 0) return v === 1;
        if (typeof v === 'string') {
          const w = v.trim().toLowerCase();
          if (TRUE_WORDS.has(w)) return true;
          if (FALSE_WORDS.has(w)) return false;
        }
        throw new MapFail(`expected Y/N, yes/no, true/false, T/F or 1/0, got ${quote(v)}`);
      };
    case 'integer':
      optionsOf([]);
      return (v) => {
        if (typeof v === 'number' && Number.isSafeInteger(v)) return v;
        if (typeof v === 'string' && INTEGER.test(v.trim())) return Number(v.trim());
        throw new MapFail(`expected an integer, got ${quote(v)}`);
      };
    case 'currency':
    case 'country':
    case 'state': {
      optionsOf([]);
      const convert =
        kind === 'currency' ? toCurrencyAlpha3 : kind === 'country' ? toCountryAlpha2 : toStateCode;
      const what =
        kind === 'currency'
          ? 'an ISO 4217 currency (alpha or numeric)'
          : kind === 'country'
            ? 'an ISO 3166 country (alpha-2, alpha-3 or numeric)'
            : 'a state abbreviation or name';
      return (v) => {
        const r = convert(scalarToString(v).trim());
        if (r === undefined) throw new MapFail(`expected ${what}, got ${quote(v)}`);
        return r;
      };
    }
    case 'enum': {
      if (!isObject(opt) || Object.keys(opt).length === 0)
        bad(env.source, p, 'an object mapping source values to output values', opt);
      const exact = new Map<string, Json>();
      const folded = new Map<string, Json>();
      for (const [k, out] of Object.entries(opt)) {
        checkOutputValue(env, `${p}.${k}`, field, out);
        exact.set(k, out);
        if (!folded.has(k.toLowerCase())) folded.set(k.toLowerCase(), out);
      }
      const hasElse = rule.else !== undefined || rule.default !== undefined;
      const otherwise = rule.else !== undefined ? rule.else : rule.default;
      if (rule.else !== undefined) checkOutputValue(env, `${path}.else`, field, rule.else);
      const known = [...exact.keys()].slice(0, 8).join(', ');
      return (v) => {
        const key = scalarToString(v).trim();
        const hit = exact.get(key) ?? folded.get(key.toLowerCase());
        if (hit !== undefined) return hit;
        if (hasElse) return otherwise;
        throw new MapFail(`unknown value ${quote(v)} (known: ${known})`);
      };
    }
  }
  return bad(env.source, path, 'a conversion', kind);
}

function compileString(env: Env, path: string, field: TransactionField, rule: Record<string, Json>): Convert {
  const trim = rule.trim ?? true;
  if (typeof trim !== 'boolean') bad(env.source, `${path}.trim`, 'true or false', trim);
  const maxLength = rule.maxLength;
  if (
    maxLength !== undefined &&
    (typeof maxLength !== 'number' || !Number.isInteger(maxLength) || maxLength < 1)
  ) {
    bad(env.source, `${path}.maxLength`, 'a positive integer', maxLength);
  }
  const caseOpt = rule.case;
  if (caseOpt !== undefined && caseOpt !== 'upper' && caseOpt !== 'lower')
    bad(env.source, `${path}.case`, '"upper" or "lower"', caseOpt);
  const zeroPad = rule.zeroPad;
  if (
    zeroPad !== undefined &&
    (typeof zeroPad !== 'number' || !Number.isInteger(zeroPad) || zeroPad < 1 || zeroPad > 32)
  ) {
    bad(env.source, `${path}.zeroPad`, 'integer 1..32', zeroPad);
  }
  const mask = FREE_TEXT.has(field);
  if (TRANSACTION_FIELDS[field] !== 'string')
    bad(
      env.source,
      path,
      `a conversion for a ${TRANSACTION_FIELDS[field]} field (e.g. "${TRANSACTION_FIELDS[field]}": true)`,
      rule,
    );
  if (trim && maxLength === undefined && caseOpt === undefined && zeroPad === undefined && !mask) {
    return (v) => (typeof v === 'string' ? v.trim() : scalarToString(v));
  }
  return (v) => {
    let s = scalarToString(v);
    if (trim) s = s.trim();
    if (caseOpt === 'upper') s = s.toUpperCase();
    else if (caseOpt === 'lower') s = s.toLowerCase();
    if (zeroPad !== undefined && s.length < zeroPad) s = s.padStart(zeroPad, '0');
    if (maxLength !== undefined && s.length > maxLength)
      s = trim ? s.slice(0, maxLength).trimEnd() : s.slice(0, maxLength);
    if (mask) s = maskCardNumbers(s);
    return s;
  };
}

/** What one compiled rule brings to its profile. */
interface CompiledRule {
  step: Step;
  columns: ColumnRef[];
  hasDefault: boolean;
  /** The rule's own `required` (absent = the field's default). */
  required?: boolean;
}

function compileRule(env: Env, field: TransactionField, rule: Json): CompiledRule {
  const path = `fields.${field}`;
  const r: Record<string, Json> =
    typeof rule === 'string'
      ? { from: rule }
      : isObject(rule)
        ? rule
        : bad(env.source, path, 'a column name or a rule object', rule);
  for (const k of Object.keys(r)) {
    if (!(RULE_KEYS as readonly string[]).includes(k))
      bad(env.source, `${path}.${k}`, `one of ${RULE_KEYS.join(', ')}`, k);
  }
  const extract = r.split !== undefined || r.match !== undefined;
  if (r.else !== undefined && r.enum === undefined && !extract)
    bad(env.source, `${path}.else`, 'else only together with enum, split or match', r.else);
  if (extract && (r.const !== undefined || r.hash !== undefined))
    bad(
      env.source,
      r.split !== undefined ? `${path}.split` : `${path}.match`,
      'split and match only with from or template',
      r.split ?? r.match,
    );
  if (r.description !== undefined && typeof r.description !== 'string')
    bad(env.source, `${path}.description`, 'a string', r.description);
  const required = r.required;
  if (required !== undefined && typeof required !== 'boolean')
    bad(env.source, `${path}.required`, 'true or false', required);
  // The ledger, resume and the duplicate check all key on the id: it can never be left out.
  if (required === false && field === 'transactionId')
    bad(env.source, `${path}.required`, 'true (every record needs its transactionId)', required);
  const own = required === undefined ? {} : { required };
  const source = compileSource(env, path, r);
  const columns = source.columns;
  let get = source.get;
  // The else value stands in for a value split or match cannot take apart (enum handles its own).
  const extractElse = extract && r.else !== undefined;
  if (extractElse) checkOutputValue(env, `${path}.else`, field, r.else);
  if (extract) get = compileExtract(env, path, r, get, extractElse);
  if (r.slice !== undefined) {
    const sl = r.slice;
    if (
      !Array.isArray(sl) ||
      sl.length < 1 ||
      sl.length > 2 ||
      !sl.every((n) => typeof n === 'number' && Number.isInteger(n))
    ) {
      bad(
        env.source,
        `${path}.slice`,
        '[start] or [start, end] (integers, negative counts from the end)',
        sl,
      );
    }
    const [a, b] = sl as number[];
    const inner = get;
    get = (rec) => {
      const v = inner(rec);
      return isEmpty(v) || v === NO_MATCH ? v : scalarToString(v).trim().slice(a, b);
    };
  }
  if (r.const !== undefined) {
    checkOutputValue(env, `${path}.const`, field, r.const);
    const value = r.const;
    return { step: { field, run: () => value }, columns: [], hasDefault: true, ...own };
  }
  if (r.default !== undefined) checkOutputValue(env, `${path}.default`, field, r.default);
  const dflt = r.default === null ? undefined : r.default;
  if (r.hash !== undefined) {
    return { step: { field, run: get }, columns, hasDefault: false, ...own };
  }
  if (r.from === undefined && r.template === undefined) {
    if (dflt === undefined) bad(env.source, path, 'a source: from, template, const, hash (or a default)', r);
    return { step: { field, run: () => dflt }, columns: [], hasDefault: true, ...own };
  }
  const convert = compileConversion(env, path, field, r);
  const otherwise = r.else === null ? undefined : r.else;
  const step: Step = {
    field,
    run: extractElse
      ? (rec, tx) => {
          const v = get(rec);
          if (v === NO_MATCH) return otherwise;
          if (v === undefined || v === null || v === '' || (typeof v === 'string' && v.trim() === ''))
            return dflt;
          const out = convert(v, tx);
          return out === '' ? dflt : out;
        }
      : (rec, tx) => {
          const v = get(rec);
          if (v === undefined || v === null || v === '' || (typeof v === 'string' && v.trim() === ''))
            return dflt;
          const out = convert(v, tx);
          return out === '' ? dflt : out;
        },
  };
  return { step, columns, hasDefault: dflt !== undefined, ...own };
}

/** A card-number column turned into iin, last4 and cardNetworkIdentifier. */
interface PanRule {
  from: string;
  get: Getter;
  iinLength: number;
}

function compilePan(env: Env, v: Json): PanRule {
  if (!isObject(v)) bad(env.source, 'pan', 'an object {"from": column, "iinLength": 6 or 8}', v);
  for (const k of Object.keys(v))
    if (k !== 'from' && k !== 'iinLength') bad(env.source, `pan.${k}`, 'from or iinLength', k);
  if (typeof v.from !== 'string' || v.from === '')
    bad(env.source, 'pan.from', 'a column name or dotted path', v.from);
  const iinLength = v.iinLength ?? 6;
  if (iinLength !== 6 && iinLength !== 8) bad(env.source, 'pan.iinLength', '6 or 8', iinLength);
  return { from: v.from, get: getterAt(env, 'pan.from', v.from), iinLength };
}

function applyPan(
  pan: PanRule,
  rec: Record<string, unknown>,
  vals: unknown[],
  explicit: Set<string>,
): FieldError | undefined {
  const raw = pan.get(rec);
  if (isEmpty(raw)) return undefined;
  const s = typeof raw === 'number' ? String(raw) : typeof raw === 'string' ? raw.replace(/[\s-]/g, '') : '';
  let iin: string;
  let last4: string;
  if (/^\d{12,19}$/.test(s)) {
    if (!luhnValid(s))
      return { field: 'iin', message: `card number in ${pan.from} fails the Luhn check (${maskPan(s)})` };
    iin = s.slice(0, pan.iinLength);
    last4 = s.slice(-4);
  } else {
    const m = MASKED_PAN.exec(s);
    if (m === null || (m[1] as string).length < pan.iinLength) {
      return {
        field: 'iin',
        message: `expected a card number of 12-19 digits in ${pan.from}, got ${quote(s.length > 4 ? maskPan(s) : s)}`,
      };
    }
    iin = (m[1] as string).slice(0, pan.iinLength);
    last4 = m[2] as string;
  }
  if (!explicit.has('iin') && vals[IIN_INDEX] === undefined) vals[IIN_INDEX] = iin;
  if (!explicit.has('last4') && vals[LAST4_INDEX] === undefined) vals[LAST4_INDEX] = last4;
  if (!explicit.has('cardNetworkIdentifier') && vals[NETWORK_INDEX] === undefined) {
    vals[NETWORK_INDEX] = iin.charCodeAt(0) - 48;
  }
  return undefined;
}

function setPath(obj: Record<string, unknown>, path: string, f: (v: unknown) => unknown): void {
  if (Object.hasOwn(obj, path)) {
    obj[path] = f(obj[path]);
    return;
  }
  const parts = path.split('.');
  let o: unknown = obj;
  for (let i = 0; i < parts.length - 1; i++) {
    if (typeof o !== 'object' || o === null) return;
    o = (o as Record<string, unknown>)[parts[i] as string];
  }
  const last = parts[parts.length - 1] as string;
  if (typeof o === 'object' && o !== null && Object.hasOwn(o, last)) {
    (o as Record<string, unknown>)[last] = f((o as Record<string, unknown>)[last]);
  }
}

/**
 * Compile a parsed profile document. `source` names the file in error messages.
 * @example compileProfile({ fields: { transactionId: 'TXN_ID' } }, 'x.json', 'x') // throws MAPPING_INVALID: required fields have no rule
 */
export function compileProfile(doc: unknown, source: string, defaultName: string): CompiledProfile {
  const env: Env = { source };
  if (!isObject(doc)) bad(source, '(top)', 'a JSON object', doc);
  for (const k of Object.keys(doc))
    if (!PROFILE_KEYS.includes(k)) bad(source, k, `one of ${PROFILE_KEYS.join(', ')}`, k);
  const name = doc.name ?? defaultName;
  if (typeof name !== 'string' || name === '') bad(source, 'name', 'a non-empty string', name);
  const description = doc.description;
  if (description !== undefined && typeof description !== 'string')
    bad(source, 'description', 'a string', description);
  const format = doc.format;
  if (format !== undefined && format !== 'csv' && format !== 'ndjson')
    bad(source, 'format', '"csv" or "ndjson"', format);
  const delimiter = doc.delimiter;
  if (
    delimiter !== undefined &&
    (typeof delimiter !== 'string' || delimiter.length !== 1 || /["\r\n]/.test(delimiter))
  ) {
    bad(source, 'delimiter', 'one character (not a quote or newline)', delimiter);
  }
  if (doc.timeZone !== undefined) {
    if (typeof doc.timeZone !== 'string')
      bad(source, 'timeZone', 'an IANA zone name such as "America/Chicago"', doc.timeZone);
    try {
      compileTimestamp({ format: 'auto', zone: doc.timeZone });
    } catch (err) {
      bad(source, 'timeZone', 'an IANA zone name such as "America/Chicago"', (err as Error).message);
    }
    env.timeZone = doc.timeZone;
  }
  const pan = doc.pan === undefined ? undefined : compilePan(env, doc.pan);
  const fields = doc.fields;
  if (!isObject(fields)) bad(source, 'fields', 'an object of TransactionNotification field → rule', fields);
  const steps: Step[] = [];
  const columns: ColumnUse[] = [];
  const explicit = new Set<string>();
  const required = new Set<TransactionField>(REQUIRED_FIELDS);
  const relaxed: TransactionField[] = [];
  for (const [field, rule] of Object.entries(fields)) {
    if (!Object.hasOwn(TRANSACTION_FIELDS, field))
      bad(source, `fields.${field}`, 'a TransactionNotification field name', field);
    const f = field as TransactionField;
    const compiled = compileRule(env, f, rule);
    explicit.add(f);
    // The currency must be known before any amount is scaled by its exponent.
    if (f === 'currencyCode') steps.unshift(compiled.step);
    else steps.push(compiled.step);
    if (compiled.required === false && required.delete(f)) relaxed.push(f);
    else if (compiled.required === true) required.add(f);
    // A column is needed when its field is required and has no default to fall back on.
    const needed = required.has(f) && !compiled.hasDefault;
    for (const c of compiled.columns) columns.push({ ...c, field: f, required: needed });
  }
  if (pan !== undefined)
    columns.push({ column: pathText(pan.from), rule: 'pan.from', field: 'iin', required: false });
  const missing = REQUIRED_FIELDS.filter((f) => !explicit.has(f));
  if (missing.length > 0)
    bad(
      source,
      'fields',
      `a rule for every required field (missing ${missing.join(', ')})`,
      Object.keys(fields),
    );
  return buildProfile({
    name,
    description,
    format,
    delimiter,
    columns,
    // The service's order first (the order of "required" errors), then fields a rule made required.
    required: [
      ...REQUIRED_FIELDS.filter((f) => required.has(f)),
      ...[...required].filter((f) => !REQUIRED_FIELDS.includes(f)),
    ],
    relaxed,
    steps,
    pan,
    explicit,
  });
}

/** Assemble the CompiledProfile around compiled steps (shared by files and the canonical profile). */
export function buildProfile(p: {
  name: string;
  description?: string;
  format?: InputFormat;
  delimiter?: string;
  columns: ColumnUse[];
  required: readonly TransactionField[];
  relaxed?: readonly TransactionField[];
  steps: Step[];
  pan?: PanRule;
  explicit: Set<string>;
}): CompiledProfile {
  const { steps, pan, explicit } = p;
  const n = steps.length;
  const index = steps.map((s) => FIELD_INDEX.get(s.field) as number);
  const width = FIELDS.length;
  return {
    name: p.name,
    ...(p.description ? { description: p.description } : {}),
    ...(p.format ? { format: p.format } : {}),
    ...(p.delimiter ? { delimiter: p.delimiter } : {}),
    requiredColumns: [...new Set(p.columns.filter((c) => c.required).map((c) => c.column))],
    columns: p.columns,
    required: p.required,
    relaxed: p.relaxed ?? [],
    map(rec) {
      const vals: unknown[] = new Array(width);
      // What converters may read of the record being built: the currency scales amounts.
      const ctx = { currencyCode: undefined as unknown };
      let errors: FieldError[] | undefined;
      for (let i = 0; i < n; i++) {
        const step = steps[i] as Step;
        try {
          const v = step.run(rec, ctx);
          if (v !== undefined && v !== null) {
            const at = index[i] as number;
            vals[at] = v;
            if (at === CURRENCY_INDEX) ctx.currencyCode = v;
          }
        } catch (err) {
          if (!(err instanceof MapFail)) throw err;
          errors = addError(errors, { field: step.field, message: err.message });
        }
      }
      if (pan !== undefined) {
        const e = applyPan(pan, rec, vals, explicit);
        if (e) errors = addError(errors, e);
      }
      return errors
        ? { ok: false, errors }
        : { ok: true, tx: buildTx(vals) as unknown as TransactionNotification };
    },
    maskRecord(rec) {
      const out = maskDeep(rec) as Record<string, unknown>;
      if (pan !== undefined) {
        // maskDeep already masked a Luhn-valid number; this catches the rest (typos, short numbers).
        setPath(out, pan.from, (v) =>
          (typeof v === 'string' && !v.includes('*')) || typeof v === 'number' ? maskPan(String(v)) : v,
        );
      }
      return out;
    },
  };
}

/** Compile one canonical rule (field read from the same-named column, type conversion only). */
export function canonicalStep(field: TransactionField): Step {
  return compileRule({ source: 'canonical' }, field, { from: field }).step;
}
