// The profile's `pan`: a card-number column turned into iin, last4 and cardNetworkIdentifier, and masked in
// the records kept for rejects.
import { luhnValid, maskPan } from '../mask/index.ts';
import type { FieldError } from '../model/field-error.ts';
import { quote } from '../model/quote.ts';
import type { Getter } from './path.ts';
import { bad, type Env, FIELD_INDEX, getterAt, isEmpty, isObject, type Json } from './rule-kit.ts';

const MASKED_PAN = /^(\d{6,8})[*Xx#•]+(\d{4})$/;
const IIN_INDEX = FIELD_INDEX.get('iin') as number;
const LAST4_INDEX = FIELD_INDEX.get('last4') as number;
const NETWORK_INDEX = FIELD_INDEX.get('cardNetworkIdentifier') as number;

/** A card-number column turned into iin, last4 and cardNetworkIdentifier. */
export interface PanRule {
  from: string;
  get: Getter;
  iinLength: number;
}

export function compilePan(env: Env, v: Json): PanRule {
  if (!isObject(v)) bad(env.source, 'pan', 'an object {"from": column, "iinLength": 6 or 8}', v);
  for (const k of Object.keys(v))
    if (k !== 'from' && k !== 'iinLength') bad(env.source, `pan.${k}`, 'from or iinLength', k);
  if (typeof v.from !== 'string' || v.from === '')
    bad(env.source, 'pan.from', 'a column name or dotted path', v.from);
  const iinLength = v.iinLength ?? 6;
  if (iinLength !== 6 && iinLength !== 8) bad(env.source, 'pan.iinLength', '6 or 8', iinLength);
  return { from: v.from, get: getterAt(env, 'pan.from', v.from), iinLength };
}

/**
 * The IIN digits sent of a card number of `n` digits: `iinLength` (8) only for 16 digits or more, as PCI DSS allows
 * first 8 + last 4 only there; first 6 below (8 + 4 of a 12- or 13-digit number is the number, or one Luhn guess).
 */
function iinKept(pan: PanRule, n: number): number {
  return n >= 16 ? pan.iinLength : 6;
}

export function applyPan(
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
    iin = s.slice(0, iinKept(pan, s.length));
    last4 = s.slice(-4);
  } else {
    const m = MASKED_PAN.exec(s);
    if (m === null || (m[1] as string).length < iinKept(pan, s.length)) {
      return {
        field: 'iin',
        message: `expected a card number of 12-19 digits in ${pan.from}, got ${quote(s.length > 4 ? maskPan(s) : s)}`,
      };
    }
    iin = (m[1] as string).slice(0, iinKept(pan, s.length));
    last4 = m[2] as string;
  }
  if (!explicit.has('iin') && vals[IIN_INDEX] === undefined) vals[IIN_INDEX] = iin;
  if (!explicit.has('last4') && vals[LAST4_INDEX] === undefined) vals[LAST4_INDEX] = last4;
  if (!explicit.has('cardNetworkIdentifier') && vals[NETWORK_INDEX] === undefined) {
    vals[NETWORK_INDEX] = iin.charCodeAt(0) - 48;
  }
  return undefined;
}

export function setPath(obj: Record<string, unknown>, path: string, f: (v: unknown) => unknown): void {
  if (Object.hasOwn(obj, path)) {
    obj[path] = f(obj[path]);
    return;
  }
  const parts = path.split('.');
  let o: unknown = obj;
  for (let i = 0; i < parts.length - 1; i++) {
    if (typeof o !== 'object' || o === null || !Object.hasOwn(o, parts[i] as string)) return;
    o = (o as Record<string, unknown>)[parts[i] as string];
  }
  const last = parts[parts.length - 1] as string;
  if (typeof o === 'object' && o !== null && Object.hasOwn(o, last)) {
    (o as Record<string, unknown>)[last] = f((o as Record<string, unknown>)[last]);
  }
}
