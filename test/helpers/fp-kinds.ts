// The false-positive corpus of the third pass (issue 30): realistic values that are not card numbers, 100,000
// seeded values a kind. Ids are run through the validator as the field they belong to, undeclared and declared
// (`ownNumericIds` with the kind's shape); free text and error text through the masking every output uses. The
// rates are published in docs/security.md and checked against it by test/mask/fp-kinds.test.ts.

import { type OwnIdShape, ownIdMatcher } from '../../src/map/own-ids.ts';
import { FIELDS } from '../../src/map/rule-kit.ts';
import { maskCardNumbers } from '../../src/mask/index.ts';
import { rulesWithOwnIds, validateValues } from '../../src/validate/validate.ts';
import { rng } from './false-positives.ts';

/**
 * n digits, one draw each, written as codes into a buffer and read out as one string (a string built a digit at a
 * time is a new string at each step; the modulus a literal: a multiplication, not a division).
 */
const out = Buffer.alloc(32);
function digits(next: () => number, n: number): string {
  for (let i = 0; i < n; i++) out[i] = 48 + (next() % 10);
  return out.toString('latin1', 0, n);
}
/** n lowercase hex digits, one draw each. */
function hexDigits(next: () => number, n: number): string {
  for (let i = 0; i < n; i++) out[i] = HEX[next() % 16] as number;
  return out.toString('latin1', 0, n);
}
const HEX = Array.from('0123456789abcdef', (c) => c.charCodeAt(0));
const pad2 = (n: number) => String(n).padStart(2, '0');
const pick = <T>(next: () => number, xs: readonly T[]): T => xs[next() % xs.length] as T;

/** An id kind: the field it is sent in, its declaration (shape), its generator. */
export interface IdKind {
  name: string;
  field: string;
  declare: Omit<OwnIdShape, 'field'>;
  make: (next: () => number) => string;
}

/** The ISO 7064 mod 97 check digits of an IBAN. */
function iban(country: string, bban: string): string {
  // The remainder of `${bban}${country}00`, each letter read as its two digits (A = 10 … Z = 35); the BBANs here
  // are digits.
  let r = 0;
  for (let i = 0; i < bban.length; i++) r = (r * 10 + bban.charCodeAt(i) - 48) % 97;
  for (let i = 0; i < 2; i++) r = (r * 100 + country.charCodeAt(i) - 55) % 97;
  r = (r * 100) % 97;
  return `${country}${pad2(98 - r)}${bban}`;
}
const IBAN_BBAN: Record<string, number> = { HU: 24, PT: 21, PL: 24, DE: 18, FR: 23 };
/** Groups of four characters joined by spaces (the last group may be shorter). */
function grouped4(s: string): string {
  let g = s.slice(0, 4);
  for (let i = 4; i < s.length; i += 4) g += ` ${s.slice(i, i + 4)}`;
  return g;
}

/** The EAN-13 check digit. */
function ean13(body12: string): string {
  let sum = 0;
  for (let i = 0; i < 12; i++) sum += Number(body12[i]) * (i % 2 === 0 ? 1 : 3);
  return body12 + String((10 - (sum % 10)) % 10);
}

export const ID_KINDS: readonly IdKind[] = [
  {
    name: 'ORD- + 16 digits',
    field: 'transactionId',
    declare: { prefix: 'ORD-' },
    make: (next) => `ORD-${1 + (next() % 9)}${digits(next, 15)}`,
  },
  {
    name: 'branch-account16',
    field: 'sourceAccountId',
    declare: { pattern: '[0-9]{4}-[0-9]{16}' },
    make: (next) => `${digits(next, 4)}-${1 + (next() % 9)}${digits(next, 15)}`,
  },
  {
    name: '16 digits zero-padded to 20',
    field: 'sourceAccountId',
    declare: { width: 20 },
    make: (next) => `0000${1 + (next() % 9)}${digits(next, 15)}`,
  },
  {
    name: 'Visa-TID-shaped 15 digits',
    field: 'transactionId',
    declare: {},
    make: (next) => `${pick(next, ['3', '5', '6'])}${digits(next, 14)}`,
  },
  {
    name: 'YYMMDDhhmmss + 4-digit sequence',
    field: 'transactionId',
    declare: {},
    make: (next) =>
      `26${pad2(1 + (next() % 12))}${pad2(1 + (next() % 28))}${pad2(next() % 24)}${pad2(next() % 60)}${pad2(next() % 60)}${digits(next, 4)}`,
  },
  {
    name: 'EAN-13 400-440',
    field: 'transactionId',
    declare: {},
    make: (next) => ean13(`${400 + (next() % 41)}${digits(next, 9)}`),
  },
  {
    name: 'IBAN printed in groups of four (HU, PT, PL, DE, FR)',
    field: 'sourceAccountId',
    declare: { pattern: '[A-Z]{2}[0-9]{2}( ?[0-9A-Z]{1,4})+' },
    make: (next) => {
      const c = pick(next, Object.keys(IBAN_BBAN));
      return grouped4(iban(c, digits(next, IBAN_BBAN[c] as number)));
    },
  },
  {
    name: 'IBAN electronic (HU, PT, PL, DE, FR)',
    field: 'sourceAccountId',
    declare: { pattern: '[A-Z]{2}[0-9]{2}[0-9A-Z]{11,30}' },
    make: (next) => {
      const c = pick(next, Object.keys(IBAN_BBAN));
      return iban(c, digits(next, IBAN_BBAN[c] as number));
    },
  },
  {
    name: 'USPS 22 digits printed in fours',
    field: 'sourceAccountId',
    declare: { pattern: '9[0-9]{3}( [0-9]{4}){4} [0-9]{2}' },
    make: (next) => grouped4(`9${pick(next, ['200', '205', '274', '300', '400'])}${digits(next, 18)}`),
  },
  {
    name: 'RRN + STAN (12 + 6 digits)',
    field: 'transactionId',
    declare: {},
    make: (next) => `${pick(next, ['5', '6'])}${digits(next, 3)}${digits(next, 8)}${digits(next, 6)}`,
  },
  {
    name: 'phone number without +',
    field: 'sourceCustomerId',
    declare: { pattern: '[0-9 ]{10,17}' },
    make: (next) =>
      next() % 2 === 0
        ? `${pick(next, ['44', '49', '33', '61', '65'])}${digits(next, 11)}`
        : `${pick(next, ['44', '49', '33'])} ${digits(next, 2)} ${digits(next, 4)} ${digits(next, 4)}`,
  },
];

/** How many of `n` values of an id kind the validator refuses, undeclared and declared (each value checked both ways). */
export function idRefusals(
  kind: IdKind,
  n: number,
  seed = 30,
): { undeclared: number; declared: number; examples: string[] } {
  const next = rng(seed);
  const at = FIELDS.indexOf(kind.field as (typeof FIELDS)[number]);
  if (at < 0) throw new Error(`no field ${kind.field}`);
  const values: unknown[] = new Array(FIELDS.length).fill(undefined);
  const plain = rulesWithOwnIds([]);
  const declared = rulesWithOwnIds([
    { field: kind.field, matches: ownIdMatcher({ field: kind.field, ...kind.declare }) },
  ]);
  const out = { undeclared: 0, declared: 0, examples: [] as string[] };
  for (let i = 0; i < n; i++) {
    const v = kind.make(next);
    values[at] = v;
    if (validateValues(values, [], false, plain).length > 0) out.undeclared++;
    if (validateValues(values, [], false, declared).length > 0) {
      out.declared++;
      if (out.examples.length < 3) out.examples.push(v);
    }
  }
  return out;
}

const CHAINS = [
  'WAL-MART SC',
  'TARGET T-',
  'SHELL OIL',
  'CVS/PHARMACY',
  'KROGER',
  "MCDONALD'S F",
  'HOME DEPOT',
  'SAFEWAY',
  '7-ELEVEN',
  'CHEVRON',
  'WALGREENS',
  'COSTCO WHSE',
  'SQ *BLUE BOTTLE',
  'TST* JOES PIZZA',
];
const CITIES = ['BENTONVILLE AR', 'AUSTIN TX', 'SAN FRANCISCO CA', 'NEW YORK NY', 'CHICAGO IL', 'SEATTLE WA'];

/** A free-text or error-text kind: a generator; mangled = masking changed it. */
export interface TextKind {
  name: string;
  make: (next: () => number) => string;
}

export const TEXT_KINDS: readonly TextKind[] = [
  {
    // The merchant names processors send: a chain, a store number, a phone number, a city — in the shapes seen.
    name: 'merchant name with store and phone number',
    make: (next) => {
      const store = digits(next, 3 + (next() % 3));
      const area = `${2 + (next() % 8)}${digits(next, 2)}`;
      const phone = pick(next, [
        `${area}-${digits(next, 7)}`,
        `${area}-${digits(next, 3)}-${digits(next, 4)}`,
        `(${area}) ${digits(next, 3)}-${digits(next, 4)}`,
        `${area} ${digits(next, 3)} ${digits(next, 4)}`,
        `1-800-${digits(next, 3)}-${digits(next, 4)}`,
        `${area}${digits(next, 7)}`,
      ]);
      return pick(next, [
        `${pick(next, CHAINS)} #${store} ${phone}`,
        `${pick(next, CHAINS)} ${store} ${phone} ${pick(next, CITIES)}`,
        `${pick(next, CHAINS)} STORE ${store.padStart(5, '0')} ${phone}`,
        `${pick(next, CHAINS)} ${phone}`,
      ]);
    },
  },
  {
    name: 'merchant city with postal code and phone',
    make: (next) =>
      `${pick(next, CITIES)} ${digits(next, 5)}-${digits(next, 4)} ${digits(next, 3)}-${digits(next, 3)}-${digits(next, 4)}`,
  },
  {
    // Error text from PostgreSQL and the operating system (issue 35): paths of OIDs, a disk-full message.
    name: 'PostgreSQL path of OIDs in an error',
    make: (next) =>
      `could not extend file "pg_tblspc/${digits(next, 5)}/PG_18_2025${digits(next, 5)}/${digits(next, 5)}/${digits(next, 5)}${next() % 2 ? `.${1 + (next() % 9)}` : ''}": No space left on device`,
  },
  {
    // reconcile's text output (issue 29): the service's requestIds.
    name: 'requestId UUID in text',
    make: (next) => {
      return `HTTP 500 [requestId ${digits(next, 8)}-${digits(next, 4)}-4${digits(next, 3)}-8${digits(next, 3)}-${hexDigits(next, 12)}]`;
    },
  },
  {
    // A payment reference naming the account (issue 49): an IBAN in fours or electronic inside free text.
    name: 'IBAN in a payment description',
    make: (next) => {
      const c = pick(next, Object.keys(IBAN_BBAN));
      const account = iban(c, digits(next, IBAN_BBAN[c] as number));
      return next() % 2 === 0
        ? `SEPA transfer to ${grouped4(account)} ref ${digits(next, 6)}`
        : `IBAN:${account} ${pick(next, CITIES)}`;
    },
  },
  {
    // What `map` shows of an ARN (issue 33): the same as `send` sends.
    name: 'ARN of 23 digits in text',
    make: (next) => `arn ${pick(next, ['2', '7', '8'])}${digits(next, 22)}`,
  },
];

/** How many of `n` values of a text kind masking changes. */
export function mangled(kind: TextKind, n: number, seed = 30): { count: number; examples: string[] } {
  const next = rng(seed);
  let count = 0;
  const examples: string[] = [];
  for (let i = 0; i < n; i++) {
    const v = kind.make(next);
    if (maskCardNumbers(v) !== v) {
      count++;
      if (examples.length < 3) examples.push(v);
    }
  }
  return { count, examples };
}
