// Compiles a checked mapping-profile document into one fast closure per field (no per-record interpretation):
// the profile's top level here, one field's rule in rule.ts (source.ts, extract.ts, convert.ts), the card
// number column in pan.ts.

import { SvcIngestError } from '../errors.ts';
import { maskDeep, maskPan } from '../mask/index.ts';
import type { FieldError } from '../model/field-error.ts';
import type { InputFormat } from '../model/input.ts';
import {
  REQUIRED_FIELDS,
  TRANSACTION_FIELDS,
  type TransactionField,
  type TransactionNotification,
} from '../model/transaction.ts';
import {
  addError,
  OWN_ID_FIELDS,
  requiredPositions,
  rulesWithOwnIds,
  validateValues,
} from '../validate/validate.ts';
import { profileCodeNotes } from './code-notes.ts';
import { type CompiledControl, compileControl } from './control.ts';
import { type CompiledExpand, compileExpand, ELEMENT_INDEX } from './expand.ts';
import { describeOwnId, type OwnIdShape, ownIdMatcher } from './own-ids.ts';
import { applyPan, compilePan, type PanRule, setPath } from './pan.ts';
import { pathText } from './path.ts';
import { recordZonePath } from './record-zone.ts';
import { checkRequiredWhere, type RequiredWhere } from './required-where.ts';
import { compileRule } from './rule.ts';
import {
  bad,
  type Env,
  FIELD_INDEX,
  FIELDS,
  isObject,
  type Json,
  MapFail,
  type ProfileNotes,
  type Step,
} from './rule-kit.ts';
import { checkStateAbroad } from './state-abroad.ts';
import { AMBIGUOUS_CHOICES, type Ambiguous, compileTimestamp } from './timestamp.ts';
import type { ColumnUse, CompiledProfile } from './types.ts';

// A profile nested deeper than any rule needs is refused before anything walks it: the compiler, JSON.stringify of
// an error's value and the checks recurse, and 200,000 levels would end in "Maximum call stack size exceeded".
/** Deepest nesting a profile may have (a rule's options sit at about 5 levels: fields.f.match.pattern). */
export const MAX_PROFILE_DEPTH = 32;

/**
 * Throws MAPPING_INVALID when `doc` nests objects or arrays more than MAX_PROFILE_DEPTH levels deep. Iterative
 * (a stack of its own), so any depth is measured without recursion.
 * @example checkDepth('p.json', { fields: {} }) // fine
 */
export function checkDepth(source: string, doc: unknown): void {
  const stack: Array<[unknown, number]> = [[doc, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop() as [unknown, number];
    if (typeof v !== 'object' || v === null) continue;
    if (depth >= MAX_PROFILE_DEPTH)
      throw new SvcIngestError(
        'MAPPING_INVALID',
        `the profile nests objects or arrays more than ${MAX_PROFILE_DEPTH} levels deep (no rule needs more than a few)`,
        { source },
      );
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1]);
  }
}

const PROFILE_KEYS = [
  '$schema',
  'name',
  'description',
  'format',
  'delimiter',
  'timeZone',
  'timeZoneScope',
  'ambiguousTime',
  'signConvention',
  'pan',
  'ownNumericIds',
  'expand',
  'controlTotals',
  'fields',
];

const CURRENCY_INDEX = FIELD_INDEX.get('currencyCode') as number;
const ID_INDEX = FIELD_INDEX.get('transactionId') as number;
/**
 * values (in TRANSACTION_FIELDS order) → TransactionNotification, leaving out undefined ones. Generated
 * once from the fixed field names (never from profile text) because named stores keep V8's fast
 * object shape, while ~30 keyed stores (`tx[field] = v`) push each object into slow dictionary mode.
 */
const buildTx = new Function(
  'v',
  `const o = {};\n${FIELDS.map((f, i) => `if (v[${i}] !== undefined) o.${f} = v[${i}];`).join('\n')}\nreturn o;`,
) as (values: unknown[]) => Record<string, unknown>;
/**
 * values → TransactionNotification holding every field, an absent one as undefined (which JSON.stringify leaves
 * out, so the JSON is buildTx's): one object literal, allocated in one piece with its final shape, where buildTx's
 * ~30 conditional stores grow the object's property store a few slots at a time. Generated like buildTx.
 */
const buildFullTx = new Function(
  'v',
  `return {\n${FIELDS.map((f, i) => `${f}: v[${i}],`).join('\n')}\n};`,
) as (values: unknown[]) => Record<string, unknown>;

/**
 * Compile a parsed profile document. `source` names the file in error messages.
 * @example compileProfile({ fields: { transactionId: 'TXN_ID' } }, 'x.json', 'x') // throws MAPPING_INVALID: required fields have no rule
 */
export function compileProfile(doc: unknown, source: string, defaultName: string): CompiledProfile {
  const env: Env = { source, notes: { fixedZones: [], amountScales: [], ambiguous: [] } };
  checkDepth(source, doc);
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
  compileTopLevel(source, doc, env);
  const pan = doc.pan === undefined ? undefined : compilePan(env, doc.pan);
  const ownIds = compileOwnIds(source, doc.ownNumericIds);
  const expand = doc.expand === undefined ? undefined : compileExpand(env, doc.expand);
  env.ownIds = new Map(ownIds.map((d) => [d.field, ownIdMatcher(d)]));
  const fields = doc.fields;
  if (!isObject(fields)) bad(source, 'fields', 'an object of TransactionNotification field → rule', fields);
  const steps: Step[] = [];
  const columns: ColumnUse[] = [];
  const explicit = new Set<string>();
  const required = new Set<TransactionField>(REQUIRED_FIELDS);
  const relaxed: TransactionField[] = [];
  const requiredWhere: RequiredWhere[] = [];
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
    else if (compiled.requiredIn !== undefined) {
      required.delete(f);
      requiredWhere.push({
        at: FIELD_INDEX.get(f) as number,
        field: f,
        countries: new Set(compiled.requiredIn),
      });
    }
    // A column is needed when its field is required and has no default to fall back on.
    const needed = required.has(f) && !compiled.hasDefault && compiled.anyOf !== true;
    for (const c of compiled.columns) columns.push({ ...c, field: f, required: needed });
  }
  if (pan !== undefined) {
    // The card-number column is read by pan only: another rule on it (slice, match …) would send its digits.
    const card = pathText(pan.from);
    const reread = columns.find((c) => c.column === card);
    if (reread !== undefined)
      bad(source, reread.rule, `a column other than ${card}, the card-number column (pan.from)`, card);
    columns.push({ column: card, rule: 'pan.from', field: 'iin', required: false });
  }
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
    requiredWhere,
    codeNotes: profileCodeNotes(fields),
    steps,
    pan,
    explicit,
    ownIds,
    expand,
    notes: env.notes,
    control: compileControl(source, doc.controlTotals, columns),
  });
}

/**
 * The top-level keys that set the context of every rule: `timeZone` (and `timeZoneScope`), `ambiguousTime`,
 * `signConvention`, into `env` (and its notes).
 */
function compileTopLevel(source: string, doc: Record<string, Json>, env: Env): void {
  if (doc.timeZone !== undefined) {
    if (typeof doc.timeZone !== 'string')
      bad(source, 'timeZone', 'an IANA zone name such as "America/Chicago"', doc.timeZone);
    try {
      // "{tz}": each record names its zone (record-zone.ts), checked per record.
      if (recordZonePath(doc.timeZone) === undefined)
        compileTimestamp({ format: 'auto', zone: doc.timeZone });
    } catch (err) {
      bad(source, 'timeZone', 'an IANA zone name such as "America/Chicago"', (err as Error).message);
    }
    env.timeZone = doc.timeZone;
  }
  if (doc.timeZoneScope !== undefined) {
    if (doc.timeZoneScope !== 'export' && doc.timeZoneScope !== 'merchant')
      bad(
        source,
        'timeZoneScope',
        '"export" (the zone is the export\'s own) or "merchant"',
        doc.timeZoneScope,
      );
    if (doc.timeZone === undefined)
      bad(
        source,
        'timeZoneScope',
        'a timeZone beside it (it says whose zone timeZone is)',
        doc.timeZoneScope,
      );
    if (doc.timeZoneScope === 'export' && env.notes) env.notes.exportZone = true;
  }
  if (doc.ambiguousTime !== undefined) {
    if (!AMBIGUOUS_CHOICES.includes(doc.ambiguousTime as Ambiguous))
      bad(source, 'ambiguousTime', '"earlier", "later" or "reject"', doc.ambiguousTime);
    env.ambiguous = doc.ambiguousTime as Ambiguous;
  }
  if (doc.signConvention !== undefined) {
    if (doc.signConvention !== 'account' && doc.signConvention !== 'merchant')
      bad(
        source,
        'signConvention',
        '"account" (a purchase negative) or "merchant" (a purchase positive)',
        doc.signConvention,
      );
    if (env.notes) env.notes.signConvention = doc.signConvention;
  }
}

/**
 * `ownNumericIds`: id fields whose values are the bank's own identifiers, sent unchanged even where the card-number
 * rule would see a card number in them (src/mask/index.ts): a field name (its all-digit values), or
 * `{"field", "prefix", "pattern", "width"}` (its values of that shape, src/mask/declared.ts).
 */
function compileOwnIds(source: string, v: Json | undefined): OwnIdShape[] {
  if (v === undefined) return [];
  const expected = `a list of id fields (${OWN_ID_FIELDS.join(', ')}), each a name or {"field", "prefix", "pattern", "width"}`;
  if (!Array.isArray(v)) bad(source, 'ownNumericIds', expected, v);
  const out = new Map<string, OwnIdShape>();
  for (const f of v) {
    const d = typeof f === 'string' ? { field: f } : isObject(f) ? ownShape(source, f) : undefined;
    if (d === undefined || !OWN_ID_FIELDS.includes(d.field)) bad(source, 'ownNumericIds', expected, f);
    out.set(d.field, d);
  }
  return [...out.values()];
}

function ownShape(source: string, f: Record<string, Json>): OwnIdShape {
  const at = 'ownNumericIds[]';
  for (const k of Object.keys(f))
    if (!['field', 'prefix', 'pattern', 'width'].includes(k))
      bad(source, `${at}.${k}`, 'field, prefix, pattern or width', k);
  const { field, prefix, pattern, width } = f;
  if (typeof field !== 'string') bad(source, `${at}.field`, 'an id field name', field);
  if (prefix !== undefined && (typeof prefix !== 'string' || prefix === ''))
    bad(source, `${at}.prefix`, 'a non-empty string', prefix);
  if (
    width !== undefined &&
    (typeof width !== 'number' || !Number.isInteger(width) || width < 1 || width > 256)
  )
    bad(source, `${at}.width`, 'an integer 1..256', width);
  if (pattern !== undefined) {
    if (typeof pattern !== 'string') bad(source, `${at}.pattern`, 'a regular expression (RE2)', pattern);
    try {
      ownIdMatcher({ field, pattern });
    } catch (err) {
      bad(source, `${at}.pattern`, 'a regular expression (RE2)', (err as Error).message);
    }
  }
  return {
    field,
    ...(prefix !== undefined ? { prefix: prefix as string } : {}),
    ...(pattern !== undefined ? { pattern: pattern as string } : {}),
    ...(width !== undefined ? { width: width as number } : {}),
  };
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
  requiredWhere?: readonly RequiredWhere[];
  codeNotes?: readonly string[];
  steps: Step[];
  pan?: PanRule;
  explicit: Set<string>;
  ownIds?: readonly OwnIdShape[];
  expand?: CompiledExpand;
  notes?: ProfileNotes;
  control?: CompiledControl;
}): CompiledProfile {
  const { steps, pan, explicit } = p;
  const ownIds = (p.ownIds ?? []).map(describeOwnId);
  const rules = rulesWithOwnIds((p.ownIds ?? []).map((d) => ({ field: d.field, matches: ownIdMatcher(d) })));
  const n = steps.length;
  const index = steps.map((s) => FIELD_INDEX.get(s.field) as number);
  const width = FIELDS.length;
  const requiredAt = requiredPositions(p.required);
  const requiredWhere = p.requiredWhere ?? [];
  // One record is mapped at a time (map is synchronous and no step maps another record), and its values are
  // copied into the transaction before map returns: the array and the converters' context are reused, not
  // allocated per record.
  const vals: unknown[] = new Array(width).fill(undefined);
  // What converters may read of the record being built: the currency scales amounts.
  const ctx = { currencyCode: undefined as unknown };
  const suffixIds = p.expand !== undefined && p.expand.id !== 'rule';
  /**
   * The record's values in TRANSACTION_FIELDS order (absent: undefined), or the conversion errors of every field.
   * The array is reused by the next call: read it before mapping another record.
   */
  const mapValues = (rec: Record<string, unknown>): unknown[] | { errors: FieldError[] } => {
    vals.fill(undefined);
    ctx.currencyCode = undefined;
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
    // An element of an expanded record: its id is the record's, suffixed with the element's position.
    if (suffixIds) {
      const at = (rec as Record<symbol, unknown>)[ELEMENT_INDEX];
      if (at !== undefined && typeof vals[ID_INDEX] === 'string') vals[ID_INDEX] = `${vals[ID_INDEX]}:${at}`;
    }
    return errors ? { errors } : vals;
  };
  /** Conversion errors, then the validation errors of the fields that did convert (vals still holds them). */
  const withValidation = (failed: FieldError[], invalidUtf8: boolean): FieldError[] => {
    const named = new Set(failed.map((e) => e.field));
    let checked = validateValues(vals, requiredAt, invalidUtf8, rules);
    if (requiredWhere.length > 0) checked = checkRequiredWhere(requiredWhere, vals, checked);
    checked = checkStateAbroad(vals, checked);
    const more = checked.filter((e) => !named.has(e.field));
    return more.length > 0 ? [...failed, ...more] : failed;
  };
  return {
    name: p.name,
    ...(p.description ? { description: p.description } : {}),
    ...(p.format ? { format: p.format } : {}),
    ...(p.delimiter ? { delimiter: p.delimiter } : {}),
    requiredColumns: [...new Set(p.columns.filter((c) => c.required).map((c) => c.column))],
    columns: p.columns,
    required: p.required,
    relaxed: p.relaxed ?? [],
    ownIds,
    codeNotes: p.codeNotes ?? [],
    requiredWhere: requiredWhere.map((r) => ({ field: r.field, countries: [...r.countries] })),
    ...(p.expand ? { expand: p.expand } : {}),
    ...(p.control ? { control: p.control } : {}),
    notes: p.notes ?? { fixedZones: [], amountScales: [], ambiguous: [] },
    map(rec) {
      const vals = mapValues(rec);
      return Array.isArray(vals)
        ? { ok: true, tx: buildTx(vals) as unknown as TransactionNotification }
        : { ok: false, errors: vals.errors };
    },
    mapValid(rec, invalidUtf8) {
      const mapped = mapValues(rec);
      // A record whose conversions failed is checked whole all the same: its reject lists every problem it has.
      if (!Array.isArray(mapped)) return { ok: false, errors: withValidation(mapped.errors, invalidUtf8) };
      const vals = mapped;
      let errors = validateValues(vals, requiredAt, invalidUtf8, rules);
      if (requiredWhere.length > 0) errors = checkRequiredWhere(requiredWhere, vals, errors);
      errors = checkStateAbroad(vals, errors);
      return errors.length > 0
        ? { ok: false, errors }
        : { ok: true, tx: buildFullTx(vals) as unknown as TransactionNotification };
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

/** The canonical profile's timestamp fields: any RFC 3339 instant (`T` or a space, `Z` or an offset such as `+02`). */
const CANONICAL_TIMES: readonly string[] = ['transactionTimestamp', 'transactionPostingTimestamp'];

/**
 * Compile one canonical rule (field read from the same-named column, type conversion only). A timestamp is read
 * as an instant: `2025-10-01 02:01:37.007+02` (psql's output) is `2025-10-01T00:01:37.007Z`; one without an
 * offset is a reject (it names no instant).
 */
export function canonicalStep(field: TransactionField): Step {
  const rule: Record<string, Json> = { from: field };
  if (CANONICAL_TIMES.includes(field)) rule.timestamp = { format: 'iso' };
  return compileRule({ source: 'canonical' }, field, rule).step;
}
