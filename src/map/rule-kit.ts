// What the parts of the profile compiler share: the JSON shapes, the compile-time context, the error for a bad
// profile key, the one failure a converter raises (MapFail), and the value helpers every rule uses.
import { SvcIngestError } from '../errors.ts';
import { quote } from '../model/quote.ts';
import { TRANSACTION_FIELDS, type TransactionField } from '../model/transaction.ts';
import { validateTransaction } from '../validate/validate.ts';
import { type Getter, PathError, compileGetter as parseGetter } from './path.ts';

/**
 * Thrown by a converter for a value it cannot convert, caught per field by the compiled profile. Not an Error: no stack is captured, so a
 * bad record costs little; it never escapes the mapping module.
 * @example throw new MapFail('expected a decimal amount, got "abc"')
 */
export class MapFail {
  readonly message: string;
  constructor(message: string) {
    this.message = message;
  }
}

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
/** A conversion: the source value → the output value (tx: what is mapped so far; rec: the source record). */
export type Convert = (v: unknown, tx: Record<string, unknown>, rec: Record<string, unknown>) => unknown;
export interface Step {
  field: TransactionField;
  run: (rec: Record<string, unknown>, tx: Record<string, unknown>) => unknown;
}

export const SOURCES = ['from', 'template', 'const', 'hash'] as const;
/** Text options: they shape a text field's value and have no place beside a conversion. */
export const TEXT_OPTIONS = ['maxLength', 'case', 'zeroPad'] as const;
export const CONVERSIONS = [
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
export const RULE_KEYS = [...SOURCES, 'first', ...OPTIONS, ...CONVERSIONS, 'description'] as const;

export const FIELDS = Object.keys(TRANSACTION_FIELDS) as TransactionField[];
export const FIELD_INDEX = new Map<string, number>(FIELDS.map((f, i) => [f, i]));
if (!FIELDS.every((f) => /^[A-Za-z][A-Za-z0-9]*$/.test(f)))
  throw new Error('TRANSACTION_FIELDS must be identifiers');

/** Throws MAPPING_INVALID with the JSON path of the bad key. */
export function bad(source: string, path: string, expected: string, got: unknown): never {
  const shown = got === undefined ? 'nothing' : JSON.stringify(got);
  throw new SvcIngestError('MAPPING_INVALID', `${path}: expected ${expected}, got ${shown}`, {
    source,
    path,
  });
}

export function isObject(v: unknown): v is Record<string, Json> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function isEmpty(v: unknown): boolean {
  return (
    v === undefined || v === null || (typeof v === 'string' && (v.length === 0 || v.trim().length === 0))
  );
}

export function scalarToString(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && Number.isFinite(v)) {
    // JSON.parse has already rounded it: the text would not be the source's digits.
    if (Number.isInteger(v) && !Number.isSafeInteger(v))
      throw new MapFail('a number this long has lost digits in JSON: write it as a string');
    return String(v);
  }
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  throw new MapFail(`expected a text or number, got ${quote(v)}`);
}

/**
 * What a profile fixes that the records may contradict, for the warnings of `mapping check` and `send`
 * (src/map/silent-errors.ts): local times read in one fixed zone, amounts scaled by a fixed currency or exponent.
 * @example { fixedZones: [{ rule: 'timeZone', zone: 'America/New_York' }], amountScales: [] }
 */
export interface ProfileNotes {
  fixedZones: Array<{ rule: string; zone: string }>;
  /**
   * `"timeZoneScope": "export"`: the profile declares its one zone the export's own (the processor writes every local
   * time in it, wherever the merchant is), so merchants in several zones are no sign of a wrong zone.
   */
  exportZone?: boolean;
  amountScales: Array<{ rule: string; currency?: string; exponent: number }>;
  /** `signConvention`: whose side the export's amount signs are written from (else learnt from its majority). */
  signConvention?: 'account' | 'merchant';
  /** Each timestamp rule's choice for a local time in a DST repeated hour or gap (its JSON path, or ambiguousTime). */
  ambiguous: Array<{ rule: string; choice: 'earlier' | 'later' | 'reject' }>;
}

/** A profile's context while compiling. */
export interface Env {
  source: string;
  /** Collected while compiling (absent: not collected). */
  notes?: ProfileNotes;
  timeZone?: string;
  /** The profile's `ambiguousTime`: what a timestamp rule without its own `ambiguous` does with one. */
  ambiguous?: 'earlier' | 'later' | 'reject';
  /** Fields the profile declares the bank's own ids (`ownNumericIds`): their values of the declared shape. */
  ownIds?: ReadonlyMap<string, (v: string) => boolean>;
}

export function checkOutputValue(env: Env, path: string, field: TransactionField, value: unknown): void {
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
export function getterAt(env: Env, jsonPath: string, path: string): Getter {
  try {
    return parseGetter(path);
  } catch (err) {
    // A PathError's message quotes the path already: said once, not again as "got …".
    if (err instanceof PathError)
      throw new SvcIngestError('MAPPING_INVALID', `${jsonPath}: expected ${err.message}`, {
        source: env.source,
        path: jsonPath,
      });
    throw err;
  }
}

/** What an extraction (split, match) yields for a value it cannot take apart, when the rule has an `else`. */
export const NO_MATCH: unique symbol = Symbol('no match');
