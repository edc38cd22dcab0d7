// A rule's conversion (amount, timestamp, boolean, integer, currency, country, state, enum) or the string
// options (trim, case, zeroPad, maxLength) of a text field.
import { FIXED_WIDTHS, holdsCardNumberId, maskCardNumbers } from '../mask/index.ts';
import { currencyExponent, toCountryAlpha2, toCurrencyAlpha3, toStateCode } from '../model/codes.ts';
import { quote } from '../model/quote.ts';
import { TRANSACTION_FIELDS, type TransactionField } from '../model/transaction.ts';
import { toMinorUnits } from './amount.ts';
import { compileLocationZone } from './location-zone.ts';
import { pathText } from './path.ts';
import { recordZoneOffset, recordZonePath } from './record-zone.ts';
import {
  bad,
  CONVERSIONS,
  type ColumnRef,
  type Convert,
  checkOutputValue,
  type Env,
  getterAt,
  isEmpty,
  isObject,
  type Json,
  MapFail,
  scalarToString,
} from './rule-kit.ts';
import {
  AMBIGUOUS_CHOICES,
  type Ambiguous,
  compileTimestamp,
  isNamedZone,
  TIME_READS,
  type TimestampConverter,
} from './timestamp.ts';

const FREE_TEXT = new Set<string>([
  'paymentNetworkMerchant',
  'paymentNetworkMerchantAddress1',
  'paymentNetworkMerchantAddress2',
  'paymentNetworkMerchantCity',
]);
const TRUE_WORDS = new Set(['y', 'yes', 'true', 't', '1']);
const FALSE_WORDS = new Set(['n', 'no', 'false', 'f', '0']);
/** Each word of TRUE_WORDS and FALSE_WORDS as written, in upper case and capitalised, to its value. */
const BOOLEAN_SPELLINGS = new Map<string, boolean>(
  [
    ...[...TRUE_WORDS].map((w) => [w, true] as const),
    ...[...FALSE_WORDS].map((w) => [w, false] as const),
  ].flatMap(([w, b]) =>
    [w, w.toUpperCase(), w.charAt(0).toUpperCase() + w.slice(1)].map((s) => [s, b] as const),
  ),
);
const INTEGER = /^[+-]?\d{1,15}$/;

/** The options object of a conversion key, checked against the keys it allows (`true` or absent: none). */
function optionsOf(env: Env, p: string, opt: Json | undefined, allowed: string[]): Record<string, Json> {
  // Implied by the field's type (no conversion key given): no options.
  if (opt === true || opt === undefined) return {};
  if (!isObject(opt)) bad(env.source, p, 'true or an options object', opt);
  for (const k of Object.keys(opt))
    if (!allowed.includes(k))
      bad(env.source, `${p}.${k}`, `one of ${allowed.join(', ') || '(no options)'}`, k);
  return opt;
}

export function compileConversion(
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
  switch (kind) {
    case 'string':
      return compileString(env, path, field, rule);
    case 'amount':
      return compileAmount(env, p, optionsOf(env, p, opt, ['units', 'abs', 'currency', 'exponent']));
    case 'timestamp': {
      const conv = compileTimestampRule(env, p, optionsOf(env, p, opt, ['format', 'zone', 'ambiguous']));
      // Which field read a local time in a DST repeated hour or gap (mapping check counts them per field).
      return (v, tx, rec) => {
        const before = TIME_READS.repeatedHour + TIME_READS.gap;
        try {
          return conv(v, tx, rec);
        } finally {
          if (TIME_READS.repeatedHour + TIME_READS.gap !== before)
            TIME_READS.repeatedByField[field] = (TIME_READS.repeatedByField[field] ?? 0) + 1;
        }
      };
    }
    case 'boolean':
      optionsOf(env, p, opt, []);
      return toBoolean;
    case 'integer':
      optionsOf(env, p, opt, []);
      return toInteger;
    case 'currency':
    case 'country':
    case 'state':
      optionsOf(env, p, opt, []);
      return compileCode(kind);
    case 'enum':
      return compileEnum(env, path, field, rule, opt);
  }
  return bad(env.source, path, 'a conversion', kind);
}

function compileAmount(env: Env, p: string, o: Record<string, Json>): Convert {
  const units = o.units ?? 'major';
  if (units !== 'major' && units !== 'minor') bad(env.source, `${p}.units`, '"major" or "minor"', units);
  const abs = o.abs ?? false;
  if (typeof abs !== 'boolean') bad(env.source, `${p}.abs`, 'true or false', abs);
  let fixed: number | undefined;
  // Minor units are not scaled: a currency or exponent for the scaling would do nothing.
  for (const k of ['currency', 'exponent'] as const)
    if (units === 'minor' && o[k] !== undefined)
      bad(env.source, `${p}.${k}`, `no ${k} with "units": "minor" (minor units are not scaled)`, o[k]);
  if (o.exponent !== undefined && o.currency !== undefined)
    bad(env.source, `${p}.currency`, 'currency or exponent, not both (the exponent would win)', o.currency);
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
  if (fixed !== undefined && units !== 'minor')
    env.notes?.amountScales.push({
      rule: o.exponent !== undefined ? `${p}.exponent` : `${p}.currency`,
      ...(o.exponent === undefined ? { currency: toCurrencyAlpha3(o.currency as string) as string } : {}),
      exponent: fixed,
    });
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

function compileTimestampRule(env: Env, p: string, o: Record<string, Json>): Convert {
  const format = o.format ?? 'auto';
  if (typeof format !== 'string' || format === '')
    bad(env.source, `${p}.format`, '"auto", "iso", "unix-s", "unix-ms" or a pattern', format);
  // A Unix time is an instant: a zone beside it would do nothing.
  if ((format === 'unix-s' || format === 'unix-ms') && o.zone !== undefined)
    bad(env.source, `${p}.zone`, `no zone with "format": "${format}" (a Unix time is already UTC)`, o.zone);
  const ambiguous = ambiguousChoice(env, p, o, format);
  if (isObject(o.zone)) {
    // The merchant's location decides; a value with its own offset keeps it (the zone is looked up lazily).
    const conv = compileTimestamp({ format, ambiguous });
    const { zoneOf } = compileLocationZone(env, `${p}.zone`, o.zone);
    return (v, _tx, rec) => conv(v, (utc) => zoneOf(rec)(utc));
  }
  const zone = o.zone ?? env.timeZone;
  if (zone !== undefined && typeof zone !== 'string')
    bad(
      env.source,
      `${p}.zone`,
      'an IANA zone name, an offset, "{column}", or {"country": …, "state": …}',
      zone,
    );
  // "{tz}": each record names its zone; the profile's timeZone (if any) stands in when that column is empty.
  const fromRecord = zone === undefined ? undefined : recordZonePath(zone);
  const fallback =
    env.timeZone === undefined || recordZonePath(env.timeZone) !== undefined ? undefined : env.timeZone;
  let conv: TimestampConverter;
  try {
    conv = compileTimestamp({ format, zone: fromRecord === undefined ? zone : fallback, ambiguous });
  } catch (err) {
    return bad(
      env.source,
      o.zone === undefined && zone !== undefined ? 'timeZone' : p,
      'a valid format and zone',
      `${(err as Error).message}`,
    );
  }
  if (fromRecord === undefined) {
    // A fixed offset is the export's own zone (docs/mapping.md): no merchant can contradict it.
    if (zone !== undefined && isNamedZone(zone))
      env.notes?.fixedZones.push({ rule: o.zone === undefined ? 'timeZone' : `${p}.zone`, zone });
    return (v) => conv(v);
  }
  const get = getterAt(env, `${p}.zone`, fromRecord);
  return (v, _tx, rec) => {
    const z = get(rec);
    return conv(v, isEmpty(z) ? undefined : recordZoneOffset(scalarToString(z).trim()));
  };
}

/**
 * The rule's `ambiguous` (else the profile's `ambiguousTime`, else `reject`), noted for the run's counts (a Unix
 * time is never ambiguous: an `ambiguous` beside it would do nothing).
 */
function ambiguousChoice(env: Env, p: string, o: Record<string, Json>, format: string): Ambiguous {
  const own = o.ambiguous;
  if (own !== undefined && !AMBIGUOUS_CHOICES.includes(own as Ambiguous))
    bad(env.source, `${p}.ambiguous`, '"earlier", "later" or "reject"', own);
  if (own !== undefined && (format === 'unix-s' || format === 'unix-ms'))
    bad(
      env.source,
      `${p}.ambiguous`,
      `no ambiguous with "format": "${format}" (a Unix time is already UTC)`,
      own,
    );
  const choice = (own as Ambiguous | undefined) ?? env.ambiguous ?? 'reject';
  env.notes?.ambiguous.push({
    rule: own === undefined ? (env.ambiguous ? 'ambiguousTime' : p) : `${p}.ambiguous`,
    choice,
  });
  return choice;
}

/**
 * The columns a conversion reads besides the rule's source: a timestamp's zone `{column}` (the rule's own, or the
 * profile's timeZone).
 */
export function conversionColumns(env: Env, path: string, rule: Record<string, Json>): ColumnRef[] {
  if (rule.timestamp === undefined) return [];
  const own = isObject(rule.timestamp) ? rule.timestamp.zone : undefined;
  if (isObject(own)) return compileLocationZone(env, `${path}.timestamp.zone`, own).columns;
  const zone = own ?? env.timeZone;
  const at = typeof zone === 'string' ? recordZonePath(zone) : undefined;
  if (at === undefined) return [];
  return [{ column: pathText(at), rule: own === undefined ? 'timeZone' : `${path}.timestamp.zone` }];
}

const toBoolean: Convert = (v) => {
  if (typeof v === 'boolean') return v;
  if (v === 1 || v === 0) return v === 1;
  if (typeof v === 'string') {
    // The usual spellings (Y, N, true, Yes …) are looked up as they are: no trimmed, lower-cased copy per record.
    const exact = BOOLEAN_SPELLINGS.get(v);
    if (exact !== undefined) return exact;
    const w = v.trim().toLowerCase();
    if (TRUE_WORDS.has(w)) return true;
    if (FALSE_WORDS.has(w)) return false;
  }
  throw new MapFail(`expected Y/N, yes/no, true/false, T/F or 1/0, got ${quote(v)}`);
};

const toInteger: Convert = (v) => {
  if (typeof v === 'number' && Number.isSafeInteger(v)) return v;
  if (typeof v === 'string' && INTEGER.test(v.trim())) return Number(v.trim());
  throw new MapFail(`expected an integer, got ${quote(v)}`);
};

function compileCode(kind: 'currency' | 'country' | 'state'): Convert {
  const convert = kind === 'currency' ? toCurrencyAlpha3 : kind === 'country' ? toCountryAlpha2 : toStateCode;
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

function compileEnum(
  env: Env,
  path: string,
  field: TransactionField,
  rule: Record<string, Json>,
  opt: Json | undefined,
): Convert {
  const p = `${path}.enum`;
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

const CUT_CARD = (max: number, s: string): string =>
  `holds a card number (before maxLength ${max} would cut it); it is never sent, got ${quote(s)}`;

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
  const own = env.ownIds?.get(field);
  const width = FIXED_WIDTHS[field];
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
    // The whole value is masked (free text) or checked (ids) before maxLength cuts it: a cut card number is
    // not recognisable as one any more, yet 15 of its 16 digits give it back.
    if (mask) s = maskCardNumbers(s);
    if (maxLength !== undefined && s.length > maxLength) {
      if (!mask && own?.(s) !== true && holdsCardNumberId(s, width))
        throw new MapFail(CUT_CARD(maxLength, s));
      s = trim ? s.slice(0, maxLength).trimEnd() : s.slice(0, maxLength);
    }
    return s;
  };
}
