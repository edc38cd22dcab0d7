// Validation of one TransactionNotification against the interface's types and our enforced formats.

import { containsCardNumber, FIXED_WIDTHS, holdsCardNumberId } from '../mask/index.ts';
import { isCountryAlpha2, isCurrencyCode } from '../model/codes.ts';
import type { FieldError } from '../model/field-error.ts';
import { quote as show } from '../model/quote.ts';
import { REQUIRED_FIELDS, TRANSACTION_FIELDS, type TransactionField } from '../model/transaction.ts';

/** A format check of one string field: undefined = fine, else the expectation (for the message). */
type StringCheck = (v: string) => string | undefined;

/**
 * A format of ASCII characters: the first from one class, the rest from another, min..max in all. Checked by one
 * loop over a lookup table, ~4× cheaper per value than the regular expression it stands for (each is written
 * beside it; test/validate compares the two on generated strings).
 */
interface Shape {
  first: Uint8Array;
  rest: Uint8Array;
  min: number;
  max: number;
}

/** Characters of a class written as in a regular expression's brackets: single characters and ranges (a-z). */
function charClass(spec: string): Uint8Array {
  const table = new Uint8Array(128);
  for (let i = 0; i < spec.length; i++) {
    const from = spec.charCodeAt(i);
    if (spec[i + 1] === '-' && i + 2 < spec.length) {
      for (let c = from; c <= spec.charCodeAt(i + 2); c++) table[c] = 1;
      i += 2;
    } else table[from] = 1;
  }
  return table;
}

function shape(first: string, rest: string, min: number, max: number): Shape {
  return { first: charClass(first), rest: charClass(rest), min, max };
}

/** Whether a value has a shape (SHAPES). */
export function fits(s: Shape, v: string): boolean {
  const n = v.length;
  if (n < s.min || n > s.max) return false;
  let c = v.charCodeAt(0);
  if (c > 127 || s.first[c] === 0) return false;
  for (let i = 1; i < n; i++) {
    c = v.charCodeAt(i);
    if (c > 127 || s.rest[c] === 0) return false;
  }
  return true;
}

/** The formats, each with the regular expression it implements. */
export const SHAPES = {
  /** /^[1-9][0-9]{0,14}$/ */
  positiveMinor: shape('1-9', '0-9', 1, 15),
  /** /^[0-9]{4}$/ */
  fourDigits: shape('0-9', '0-9', 4, 4),
  /** /^[A-Z]{2,3}$/ */
  state: shape('A-Z', 'A-Z', 2, 3),
  /** /^[0-9]{6,8}$/ */
  iin: shape('0-9', '0-9', 6, 8),
  /** /^[A-Za-z0-9._:-]{1,64}$/ */
  transactionId: shape('A-Za-z0-9._:-', 'A-Za-z0-9._:-', 1, 64),
  /** /^[A-Z][A-Z0-9_]{0,31}$/ */
  codeToken: shape('A-Z', 'A-Z0-9_', 1, 32),
  /** /^[A-Za-z0-9][A-Za-z0-9 -]{1,9}$/ */
  postal: shape('A-Za-z0-9', 'A-Za-z0-9 -', 2, 10),
  /** /^[A-Za-z0-9_]{1,16}$/ */
  shortToken: shape('A-Za-z0-9_', 'A-Za-z0-9_', 1, 16),
  /** /^[0-9]{1,4}$/ */
  sequence: shape('0-9', '0-9', 1, 4),
  /** /^[A-Za-z0-9]{1,32}$/ */
  alnum32: shape('A-Za-z0-9', 'A-Za-z0-9', 1, 32),
} as const;

const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function num2(s: string, i: number): number {
  return (s.charCodeAt(i) - 48) * 10 + (s.charCodeAt(i + 1) - 48);
}

/** Where a timestamp has a digit (`d`) and which character stands elsewhere. */
const TIMESTAMP_FORM = 'dddd-dd-ddTdd:dd:dd.dddZ';

/** /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/ */
export function timestampShape(s: string): boolean {
  if (s.length !== TIMESTAMP_FORM.length) return false;
  for (let i = 0; i < TIMESTAMP_FORM.length; i++) {
    const c = s.charCodeAt(i);
    const want = TIMESTAMP_FORM.charCodeAt(i);
    if (want === 100 /* d */ ? c < 48 || c > 57 : c !== want) return false;
  }
  return true;
}

/**
 * A real UTC time in the one form sent, `YYYY-MM-DDTHH:mm:ss.sssZ` from 1970 on: what an ISO timestamp converter
 * writes, so map/timestamp.ts hands such a value on as it is.
 * @example isUtcTimestamp('2025-10-01T05:00:00.214Z') // true; '2025-02-30T00:00:00.000Z' // false
 */
export function isUtcTimestamp(s: string): boolean {
  return timestampShape(s) && realTimestamp(s);
}

/** A calendar-valid `YYYY-MM-DDTHH:mm:ss.sssZ` (shape already checked by timestampShape). */
function realTimestamp(s: string): boolean {
  const year = num2(s, 0) * 100 + num2(s, 2);
  const month = num2(s, 5);
  const day = num2(s, 8);
  if (year < 1970 || month < 1 || month > 12 || day < 1) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const max = month === 2 && !leap ? 28 : (DAYS_IN_MONTH[month - 1] as number);
  return day <= max && num2(s, 11) <= 23 && num2(s, 14) <= 59 && num2(s, 17) <= 59;
}

function pattern(form: Shape, expected: string): StringCheck {
  return (v) => (fits(form, v) ? undefined : expected);
}

/**
 * NUL and the other control characters (but tab and line breaks, which quoted CSV fields may hold):
 * /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(v)
 */
export function hasControl(v: string): boolean {
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c < 32 ? c !== 9 && c !== 10 && c !== 13 : c === 127) return true;
  }
  return false;
}

function text(max: number): StringCheck {
  const expected = `expected 1..${max} characters`;
  return (v) =>
    v.length > max ? expected : hasControl(v) ? 'expected no control characters (NUL, …)' : undefined;
}

const timestamp: StringCheck = (v) =>
  isUtcTimestamp(v) ? undefined : 'expected a real UTC time as YYYY-MM-DDTHH:mm:ss.sssZ';

/**
 * ISO 4217 codes that are no transaction's currency: "no currency", the testing code, precious metals (the codes
 * exist, so the code lists know them; an amount in them is no card payment).
 */
const NOT_A_TRANSACTION_CURRENCY: Readonly<Record<string, string>> = {
  XXX: 'XXX (999) is ISO 4217\'s "no currency": not a transaction\'s currency',
  XTS: "XTS (963) is ISO 4217's code for testing: not a transaction's currency",
  XAU: "XAU (959) is gold, a precious metal: not a transaction's currency",
  XAG: "XAG (961) is silver, a precious metal: not a transaction's currency",
  XPT: "XPT (962) is platinum, a precious metal: not a transaction's currency",
  XPD: "XPD (964) is palladium, a precious metal: not a transaction's currency",
};

const CHECKS: Partial<Record<TransactionField, StringCheck>> = {
  transactionId: pattern(SHAPES.transactionId, 'expected 1..64 characters of A-Z a-z 0-9 . _ : -'),
  transactionType: pattern(SHAPES.codeToken, 'expected an uppercase code such as AUTHORIZED'),
  sourceCustomerId: text(64),
  sourceAccountId: text(64),
  paymentType: pattern(SHAPES.codeToken, 'expected an uppercase code such as DEBIT'),
  paymentMethodEntryType: pattern(SHAPES.codeToken, 'expected an uppercase code such as APPLE_PAY'),
  transactionTimestamp: timestamp,
  transactionPostingTimestamp: timestamp,
  paymentNetworkMCC: pattern(SHAPES.fourDigits, 'expected a 4-digit merchant category code'),
  paymentNetworkMerchantIdType: pattern(SHAPES.codeToken, 'expected an uppercase code such as MID'),
  paymentNetworkMerchant: text(100),
  paymentNetworkMerchantAddress1: text(100),
  paymentNetworkMerchantAddress2: text(100),
  paymentNetworkMerchantCity: text(50),
  paymentNetworkMerchantState: pattern(SHAPES.state, 'expected an abbreviated state: 2-3 uppercase letters'),
  paymentNetworkMerchantPostalCode: pattern(
    SHAPES.postal,
    'expected a postal code: 2-10 letters, digits, spaces or dashes',
  ),
  paymentNetworkMerchantCountryCode: (v) =>
    v.length === 2 && isCountryAlpha2(v) ? undefined : 'expected an ISO 3166-1 alpha-2 country code',
  paymentNetworkMerchantId: text(64),
  walletDescription: text(64),
  iin: pattern(SHAPES.iin, 'expected 6-8 digits'),
  last4: pattern(SHAPES.fourDigits, 'expected 4 digits'),
  cardPresentIndicator: pattern(SHAPES.shortToken, 'expected 1..16 letters, digits or _'),
  authorizationAmount: pattern(
    SHAPES.positiveMinor,
    'expected positive minor units: digits, no leading zero, at most 15',
  ),
  // /^(?:0|[1-9][0-9]{0,14})$/
  cashBackAtPointOfSaleAmount: (v) =>
    v === '0' || fits(SHAPES.positiveMinor, v)
      ? undefined
      : 'expected minor units: digits, no leading zero, at most 15',
  postedAmount: pattern(
    SHAPES.positiveMinor,
    'expected positive minor units: digits, no leading zero, at most 15',
  ),
  currencyCode: (v) =>
    v.length === 3 && isCurrencyCode(v)
      ? NOT_A_TRANSACTION_CURRENCY[v]
      : 'expected an ISO 4217 alpha-3 currency code',
  onlineIndicator: pattern(SHAPES.codeToken, 'expected an uppercase code such as NOT_ONLINE'),
  multipleClearingSequenceNumber: pattern(SHAPES.sequence, 'expected 1-4 digits'),
  multipleClearingSequenceCount: pattern(SHAPES.sequence, 'expected 1-4 digits'),
  authorizationApprovalCode: pattern(SHAPES.shortToken, 'expected 1..16 letters, digits or _'),
  acquirerReferenceNumber: pattern(SHAPES.alnum32, 'expected 1..32 letters or digits'),
};

/**
 * Where a card number could ride along to the service, and which reading of the card-number rule
 * applies (src/mask/index.ts). `text`: free text, masked when mapped, so one found here came from a constant or
 * a default of the profile. `id`: ids, codes and amounts, whose formats allow 13 digits or more; whole
 * digit groups and sequences of them are candidates, never a window inside a longer number. The other
 * string fields (timestamps, MCC, state, postal and country codes, iin, last4, sequence numbers) cannot
 * hold 13 digits in a row by their formats.
 */
const CARD_CHECK: Partial<Record<TransactionField, 'text' | 'id'>> = {
  paymentNetworkMerchant: 'text',
  paymentNetworkMerchantAddress1: 'text',
  paymentNetworkMerchantAddress2: 'text',
  paymentNetworkMerchantCity: 'text',
  transactionId: 'id',
  sourceCustomerId: 'id',
  sourceAccountId: 'id',
  paymentNetworkMerchantId: 'id',
  walletDescription: 'id',
  authorizationApprovalCode: 'id',
  acquirerReferenceNumber: 'id',
  cardPresentIndicator: 'id',
  transactionType: 'id',
  paymentType: 'id',
  paymentMethodEntryType: 'id',
  paymentNetworkMerchantIdType: 'id',
  onlineIndicator: 'id',
  authorizationAmount: 'id',
  cashBackAtPointOfSaleAmount: 'id',
  postedAmount: 'id',
};

/** Longest value the card check reads; longer ones fail their format check (every such field is ≤ 100). */
const CARD_CHECK_MAX = 256;

const HOLDS_CARD_NUMBER =
  "holds a card number (a card brand's number: its IIN and length, passing the Luhn check); it is never sent. " +
  'The bank\'s own numeric ids can be declared in the profile ("ownNumericIds")';
const TEXT_HOLDS_CARD_NUMBER =
  "holds a card number (a card brand's number: its IIN and length, passing the Luhn check); it is never sent";
const INVALID_UTF8 =
  'invalid UTF-8: the source has bytes here that are not text (they would have been sent as U+FFFD)';

/** How a string field is checked for card numbers: free text, an id, or a declared own numeric id. */
type CardCheck = 'text' | 'id' | 'own';

export interface Rule {
  type: 'string' | 'boolean' | 'integer';
  check: StringCheck | undefined;
  card: CardCheck | undefined;
  /** A fixed width the field's numbers have (FIXED_WIDTHS): a value of that many digits is no card number. */
  width: number | undefined;
  /** A declared own id: does a value have the declared shape (sent without the check)? */
  own?: (v: string) => boolean;
}

/** Every field in TRANSACTION_FIELDS order: its JSON type, its format check and its card-number check. */
const FIELD_NAMES = Object.keys(TRANSACTION_FIELDS) as TransactionField[];
const RULE_AT: readonly Rule[] = FIELD_NAMES.map((f) => ({
  type: TRANSACTION_FIELDS[f],
  check: CHECKS[f],
  card: CARD_CHECK[f],
  width: FIXED_WIDTHS[f],
}));

/** The fields whose values may be declared the bank's own numeric ids (the id fields). */
export const OWN_ID_FIELDS: readonly string[] = FIELD_NAMES.filter((f) => CARD_CHECK[f] === 'id');

/**
 * The rules (validateValues' `rules`) of a profile declaring some id fields the bank's own ids: a value of those
 * fields that is all ASCII digits (a name alone) or that `matches` the declared shape (src/map/own-ids.ts) is sent
 * as it is, whatever the card-number rule says of it.
 * @example validateValues(values, requiredAt, false, rulesWithOwnIds(['transactionId']))
 */
export function rulesWithOwnIds(
  declared: ReadonlyArray<string | { field: string; matches: (v: string) => boolean }>,
): readonly Rule[] {
  if (declared.length === 0) return RULE_AT;
  const own = new Map(
    declared.map((d) =>
      typeof d === 'string' ? [d, (v: string) => ASCII_DIGITS.test(v)] : [d.field, d.matches],
    ),
  );
  return RULE_AT.map((r, i) => {
    const matches = own.get(FIELD_NAMES[i] as string);
    return matches === undefined ? r : { ...r, card: 'own' as const, own: matches };
  });
}

const ASCII_DIGITS = /^[0-9]+$/;

/** One lookup per field name. */
const RULES = new Map<string, Rule>(FIELD_NAMES.map((f, i) => [f, RULE_AT[i] as Rule]));

/** The card-number problem of a string field, if any. The pre-check makes the common case one short loop. */
function cardProblem(rule: Rule, v: string): string | undefined {
  const card = rule.card;
  // Both checks start with the pre-check (13 digits at all?); values shorter than that skip even it.
  if (card === undefined || v.length < 13 || v.length > CARD_CHECK_MAX) return undefined;
  if (card === 'own' && rule.own?.(v) === true) return undefined;
  if (card !== 'text')
    return holdsCardNumberId(v, rule.width) ? `${HOLDS_CARD_NUMBER}, got ${show(v)}` : undefined;
  return containsCardNumber(v) ? `${TEXT_HOLDS_CARD_NUMBER}, got ${show(v)}` : undefined;
}

/** Append to a list created on first use, so the valid path allocates nothing. */
export function addError(list: FieldError[] | undefined, error: FieldError): FieldError[] {
  if (list === undefined) return [error];
  list.push(error);
  return list;
}

/** What is wrong with one present value of a field (undefined: nothing). */
function problem(rule: Rule, v: unknown, invalidUtf8: boolean): string | undefined {
  if (rule.type === 'string') {
    if (typeof v !== 'string') return `expected a string, got ${show(v)}`;
    if (v.length === 0) return 'expected a non-empty string (leave an absent field out)';
    if (invalidUtf8 && v.indexOf('\ufffd') !== -1) return INVALID_UTF8;
    if (rule.card !== undefined && v.length >= 13) {
      const card = cardProblem(rule, v);
      if (card !== undefined) return card;
    }
    const expected = rule.check === undefined ? undefined : rule.check(v);
    return expected === undefined ? undefined : `${expected}, got ${show(v)}`;
  }
  if (rule.type === 'boolean')
    return typeof v === 'boolean' ? undefined : `expected true or false, got ${show(v)}`;
  // The only integer field is cardNetworkIdentifier: the card number's first digit.
  return typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 9
    ? undefined
    : `expected an integer 1..9, got ${show(v)}`;
}

/**
 * Check one TransactionNotification; [] = valid. Every problem of every field is reported at once.
 * `required` is the list of fields a record must have: REQUIRED_FIELDS unless a mapping profile
 * changed it (its `required`); formats are checked whatever the list.
 * Pure and allocation-free on the valid path: the [] returned for a valid record is shared and
 * frozen, so copy it before adding errors of your own. A card number in an id, code or amount is an
 * error (the value shown masked). `invalidUtf8`: the source record's bytes were not all valid UTF-8
 * (the reader says so), so a string field holding U+FFFD got it from bytes that are not text.
 * @example validateTransaction({ transactionId: 't 1' }) // [{ field: 'transactionId', ... }, { field: 'transactionType', message: 'required' }, ...]
 */
export function validateTransaction(
  tx: Record<string, unknown>,
  required: readonly string[] = REQUIRED_FIELDS,
  invalidUtf8 = false,
): FieldError[] {
  let errors: FieldError[] | undefined;
  for (const field in tx) {
    const v = tx[field];
    const rule = RULES.get(field);
    if (v === undefined && rule !== undefined) continue;
    const message = rule === undefined ? 'unknown field' : problem(rule, v, invalidUtf8);
    if (message !== undefined) errors = addError(errors, { field, message });
  }
  for (let i = 0; i < required.length; i++) {
    const field = required[i] as string;
    if (tx[field] === undefined) errors = addError(errors, { field, message: 'required' });
  }
  return errors ?? NO_ERRORS;
}

/**
 * validateTransaction of a transaction held as its values in TRANSACTION_FIELDS order (undefined = absent), as a
 * profile's map builds it: the same errors in the same order, without a lookup by name per field. `requiredAt`:
 * the positions of the required fields, in the order their "required" errors are reported.
 * @example validateValues(values, requiredPositions(REQUIRED_FIELDS))
 */
export function validateValues(
  values: readonly unknown[],
  requiredAt: readonly number[],
  invalidUtf8 = false,
  rules: readonly Rule[] = RULE_AT,
): FieldError[] {
  let errors: FieldError[] | undefined;
  for (let i = 0; i < rules.length; i++) {
    const v = values[i];
    if (v === undefined) continue;
    const message = problem(rules[i] as Rule, v, invalidUtf8);
    if (message !== undefined) errors = addError(errors, { field: FIELD_NAMES[i] as string, message });
  }
  for (let i = 0; i < requiredAt.length; i++) {
    const at = requiredAt[i] as number;
    if (values[at] === undefined)
      errors = addError(errors, { field: FIELD_NAMES[at] as string, message: 'required' });
  }
  return errors ?? NO_ERRORS;
}

/** Positions in TRANSACTION_FIELDS order of a list of required fields (validateValues' `requiredAt`). */
export function requiredPositions(required: readonly string[]): number[] {
  return required.map((f) => {
    const at = FIELD_NAMES.indexOf(f as TransactionField);
    if (at === -1) throw new Error(`not a TransactionNotification field: ${f}`);
    return at;
  });
}

// Shared empty answer; callers only read it.
const NO_ERRORS: FieldError[] = [];
Object.freeze(NO_ERRORS);
