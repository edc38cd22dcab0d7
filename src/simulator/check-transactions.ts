// Strict check of a POST /v2/data/transactions body: shape, the 1..50 limit, and every field of every item.
import currencyCodes from 'currency-codes';
// The package's index, not its node entry, which registers ~80 locales at import (~20 ms of CPU a start).
import * as countries from 'i18n-iso-countries/index.js';
import type { TransactionNotification } from '../client/models.ts';
import { LIMITS, REQUIRED_TRANSACTION_FIELDS, TRANSACTION_FIELDS } from '../client/models.ts';
import { codeProblem, isCodeField, STATE_COUNTRIES } from '../model/code-lists.ts';
import type { FieldProblem } from './http.ts';
import { isObject, typeOf } from './http.ts';

const COUNTRIES: ReadonlySet<string> = new Set(Object.keys(countries.getAlpha2Codes()));
const CURRENCIES: ReadonlySet<string> = new Set(currencyCodes.codes());
const FIELD_TYPES: Readonly<Record<string, string>> = TRANSACTION_FIELDS;
const REQUIRED: readonly string[] = REQUIRED_TRANSACTION_FIELDS;

const MINOR_UNITS = /^(0|[1-9]\d{0,14})$/;
const MCC = /^\d{4}$/;
const STATE = /^[A-Z]{2,3}$/;
const IIN = /^\d{6,8}$/;
const LAST4 = /^\d{4}$/;
const CURRENCY = /^[A-Z]{3}$/;

/** What the check enforces beyond the interface's types (SimulatorOptions strictCodes, stateEverywhere). */
export interface CheckRules {
  strictCodes: boolean;
  stateEverywhere: boolean;
}
const DEFAULT_RULES: CheckRules = { strictCodes: false, stateEverywhere: false };

/**
 * Outcome of checking a transactions body.
 * @example { kind: 'ok', transactions: [...] } | { kind: 'unreadable', detail: 'transactions: expected an array, got string' }
 */
export type TransactionsCheck =
  | { kind: 'ok'; transactions: TransactionNotification[] }
  | { kind: 'unreadable'; detail: string; size?: number }
  | { kind: 'invalid'; problems: FieldProblem[]; title: string; size: number };

/** The `transactions` array of a body when it has the right outer shape (for fault identity), else undefined. */
export function transactionsOf(body: unknown): unknown[] | undefined {
  if (!isObject(body)) return undefined;
  const list = body.transactions;
  return Array.isArray(list) ? list : undefined;
}

/** Check a parsed body. Hand-written loop: nothing is allocated for a valid transaction. */
export function checkTransactionsBody(body: unknown, rules: CheckRules = DEFAULT_RULES): TransactionsCheck {
  if (!isObject(body)) return { kind: 'unreadable', detail: `body: expected an object, got ${typeOf(body)}` };
  const list = body.transactions;
  if (!Array.isArray(list)) {
    return {
      kind: 'unreadable',
      detail: `transactions: expected an array, got ${list === undefined ? 'nothing' : typeOf(list)}`,
    };
  }
  for (const key in body) {
    if (key !== 'transactions') {
      return {
        kind: 'invalid',
        title: 'Unknown field',
        size: list.length,
        problems: [{ field: key, message: 'unknown field' }],
      };
    }
  }
  if (list.length === 0 || list.length > LIMITS.transactionsPerRequestMax) {
    return {
      kind: 'invalid',
      title: `At most ${LIMITS.transactionsPerRequestMax} transactions per request`,
      size: list.length,
      problems: [
        {
          field: 'transactions',
          message: `must hold 1 to ${LIMITS.transactionsPerRequestMax} transactions (limit transactions per request = ${LIMITS.transactionsPerRequestMax}), got ${list.length}`,
        },
      ],
    };
  }
  let problems: FieldProblem[] | undefined;
  let seen: Set<string> | undefined;
  for (let i = 0; i < list.length; i++) {
    const tx: unknown = list[i];
    if (!isObject(tx)) {
      return {
        kind: 'unreadable',
        size: list.length,
        detail: `transactions[${i}]: expected an object, got ${typeOf(tx)}`,
      };
    }
    const found = checkTransaction(tx, i, rules);
    if (found) {
      problems ??= [];
      for (const p of found) problems.push(p);
    }
    const id = tx.transactionId;
    if (typeof id === 'string') {
      seen ??= new Set();
      if (seen.has(id)) {
        problems ??= [];
        problems.push({
          field: `transactions[${i}].transactionId`,
          message: 'duplicate transactionId within the request',
        });
      } else seen.add(id);
    }
  }
  if (problems) return { kind: 'invalid', title: 'Validation failed', size: list.length, problems };
  return { kind: 'ok', transactions: list as TransactionNotification[] };
}

const STATE_FIELD = 'paymentNetworkMerchantState';

/** Whether a merchant's country has states (or is not given): its state is then required. */
function stateCountry(tx: Record<string, unknown>): boolean {
  const c = tx.paymentNetworkMerchantCountryCode;
  return typeof c !== 'string' || STATE_COUNTRIES.includes(c);
}

/** Every problem of one transaction, or undefined when it is valid. */
export function checkTransaction(
  tx: Record<string, unknown>,
  index: number,
  rules: CheckRules = DEFAULT_RULES,
): FieldProblem[] | undefined {
  let out: FieldProblem[] | undefined;
  const add = (field: string, message: string): void => {
    out ??= [];
    out.push({ field: `transactions[${index}].${field}`, message });
  };
  for (const key in tx) {
    const want = FIELD_TYPES[key];
    const v = tx[key];
    if (want === undefined) {
      add(key, 'unknown field');
      continue;
    }
    if (want === 'string') {
      if (typeof v !== 'string') add(key, `expected a string, got ${typeOf(v)}`);
      else checkFormat(key, v, add);
    } else if (want === 'boolean') {
      if (typeof v !== 'boolean') add(key, `expected a boolean, got ${typeOf(v)}`);
    } else if (!Number.isInteger(v)) {
      add(key, `expected an integer, got ${typeOf(v)}`);
    } else if (key === 'cardNetworkIdentifier' && ((v as number) < 0 || (v as number) > 9)) {
      add(key, `expected a single digit 0..9 (first digit of the card number), got ${v}`);
    }
  }
  for (let r = 0; r < REQUIRED.length; r++) {
    const key = REQUIRED[r] as string;
    if (tx[key] === undefined && (key !== STATE_FIELD || rules.stateEverywhere || stateCountry(tx)))
      add(key, 'required field is missing');
  }
  if (rules.strictCodes) {
    for (const key in tx) {
      if (!isCodeField(key)) continue;
      const problem = codeProblem(key, tx[key]);
      if (problem !== undefined) add(key, problem);
    }
  }
  return out;
}

function checkFormat(key: string, v: string, add: (field: string, message: string) => void): void {
  switch (key) {
    case 'transactionTimestamp':
    case 'transactionPostingTimestamp':
      if (!isUtcMillis(v))
        add(key, `expected ISO 8601 UTC with milliseconds (YYYY-MM-DDTHH:mm:ss.sssZ), got "${clip(v)}"`);
      return;
    case 'authorizationAmount':
    case 'postedAmount':
      if (!MINOR_UNITS.test(v) || v === '0')
        add(key, `expected a positive integer of minor units as a string, got "${clip(v)}"`);
      return;
    case 'cashBackAtPointOfSaleAmount':
      if (!MINOR_UNITS.test(v))
        add(key, `expected an integer of minor units as a string ("0" allowed), got "${clip(v)}"`);
      return;
    case 'paymentNetworkMCC':
      if (!MCC.test(v)) add(key, `expected 4 digits, got "${clip(v)}"`);
      return;
    case 'paymentNetworkMerchantCountryCode':
      if (!COUNTRIES.has(v)) add(key, `expected an ISO 3166-1 alpha-2 country code, got "${clip(v)}"`);
      return;
    case 'paymentNetworkMerchantState':
      if (!STATE.test(v)) add(key, `expected an abbreviated state (2-3 capital letters), got "${clip(v)}"`);
      return;
    case 'currencyCode':
      if (!CURRENCY.test(v) || !CURRENCIES.has(v))
        add(key, `expected an ISO 4217 alpha-3 currency code, got "${clip(v)}"`);
      return;
    case 'iin':
      if (!IIN.test(v)) add(key, 'expected 6 to 8 digits');
      return;
    case 'last4':
      if (!LAST4.test(v)) add(key, 'expected 4 digits');
      return;
    default:
      if (v.length === 0 && REQUIRED.includes(key)) add(key, 'required field is empty');
  }
}

/** The number written by `n` ASCII digits of `v` from `at`, or -1 when one of them is not a digit 0-9. */
function digitsAt(v: string, at: number, n: number): number {
  let x = 0;
  for (let k = at; k < at + n; k++) {
    const d = v.charCodeAt(k) - 48;
    if (d < 0 || d > 9) return -1;
    x = x * 10 + d;
  }
  return x;
}

/** True for `YYYY-MM-DDTHH:mm:ss.sssZ` naming a real instant (no 2025-02-30, no 24:00). */
export function isUtcMillis(v: string): boolean {
  // Character by character (two timestamps a transaction: a regular expression with captures was the hottest
  // check of a batch, and Date.parse + toISOString before it).
  if (
    v.length !== 24 ||
    v.charCodeAt(4) !== 45 || // -
    v.charCodeAt(7) !== 45 ||
    v.charCodeAt(10) !== 84 || // T
    v.charCodeAt(13) !== 58 || // :
    v.charCodeAt(16) !== 58 ||
    v.charCodeAt(19) !== 46 || // .
    v.charCodeAt(23) !== 90 || // Z
    digitsAt(v, 20, 3) < 0
  )
    return false;
  const year = digitsAt(v, 0, 4);
  const month = digitsAt(v, 5, 2);
  const day = digitsAt(v, 8, 2);
  const hour = digitsAt(v, 11, 2);
  const minute = digitsAt(v, 14, 2);
  const second = digitsAt(v, 17, 2);
  if (year < 0 || month < 1 || month > 12 || day < 1) return false;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const days =
    month === 2 ? (leap ? 29 : 28) : month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
  return day <= days && hour >= 0 && hour < 24 && minute >= 0 && minute < 60 && second >= 0 && second < 60;
}

// Values are echoed in messages: shortened so a huge value cannot bloat the answer, and any long digit run
// hidden so a card number put in the wrong column is never sent back (and then logged by a client).
function clip(v: string): string {
  const short = v.length > 40 ? `${v.slice(0, 40)}…` : v;
  return short.replace(/\d{12,}/g, (d) => `${'#'.repeat(d.length)}`);
}
