// The false-positive corpus of the card-number rule: generated (seeded) values of the kinds real exports carry in
// the fields we send, each run through the validator as the field it belongs to. Shared by the suite
// (test/mask/false-positives.test.ts, 1,000,000 values a kind) and `make bench BENCH_ARGS="--only pan"` (10,000,000).
import { FIELDS } from '../../src/map/rule-kit.ts';
import { rulesWithOwnIds, validateValues } from '../../src/validate/validate.ts';

/**
 * xorshift32: fast, seeded, the same sequence on every machine. The state is kept as a signed 32-bit integer (the
 * same bits): held unsigned it exceeds V8's small integers half the time and is boxed at every step.
 */
export function rng(seed: number): () => number {
  let x = (seed >>> 0 || 1) | 0;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return x >>> 0;
  };
}

const HEX = '0123456789abcdef';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const ALNUM = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ';

function chars(next: () => number, set: string, n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += set[next() % set.length];
  return s;
}
function digits(next: () => number, n: number): string {
  return chars(next, '0123456789', n);
}

/** One kind of value: the field it is sent in, and its generator. */
export interface Kind {
  name: string;
  field: string;
  /** Declared the bank's own numeric ids by the profile (`ownNumericIds`). */
  own?: boolean;
  make: (next: () => number) => string;
}

const pad2 = (n: number) => String(n).padStart(2, '0');

export const KINDS: readonly Kind[] = [
  {
    // Marqeta and Lithic tokens: transaction, card and account ids.
    name: 'UUIDv4',
    field: 'sourceAccountId',
    make: (next) =>
      `${chars(next, HEX, 8)}-${chars(next, HEX, 4)}-4${chars(next, HEX, 3)}-${'89ab'[next() % 4]}${chars(next, HEX, 3)}-${chars(next, HEX, 12)}`,
  },
  {
    name: 'Stripe-style id (ipi_ + 24 base62)',
    field: 'transactionId',
    make: (next) => `ipi_${chars(next, BASE62, 24)}`,
  },
  // A hash or token in hex without hyphens: about 1 in 2,300 holds 13+ digits in a row, glued to letters.
  { name: '32-character hex id', field: 'transactionId', make: (next) => chars(next, HEX, 32) },
  {
    // 23 digits, a third of them with 1-3 leading zeros. (A real ARN starts with its format digit, never 0; four
    // zeros or more then a card number is a card number padded to the width, refused.)
    name: 'ARN (23 digits, leading zeros)',
    field: 'acquirerReferenceNumber',
    make: (next) => {
      const zeros = next() % 3 === 0 ? 1 + (next() % 3) : 0;
      return '0'.repeat(zeros) + String(1 + (next() % 9)) + digits(next, 22 - zeros);
    },
  },
  {
    // Card acceptor ids: half all digits, half letters and digits.
    name: '15-character merchant id',
    field: 'paymentNetworkMerchantId',
    make: (next) => (next() % 2 === 0 ? digits(next, 15) : chars(next, ALNUM, 15)),
  },
  { name: '6-digit approval code', field: 'authorizationApprovalCode', make: (next) => digits(next, 6) },
  {
    name: 'ISO timestamp',
    field: 'transactionTimestamp',
    make: (next) =>
      `${2000 + (next() % 30)}-${pad2(1 + (next() % 12))}-${pad2(1 + (next() % 28))}T${pad2(next() % 24)}:${pad2(next() % 60)}:${pad2(next() % 60)}.${String(next() % 1000).padStart(3, '0')}Z`,
  },
  {
    // E.164 (+ and 11-15 digits), North American and international written forms.
    name: 'phone number',
    field: 'sourceCustomerId',
    make: (next) => {
      const form = next() % 4;
      if (form === 0) return `+${1 + (next() % 9)}${digits(next, 10 + (next() % 5))}`;
      if (form === 1) return `+1 ${digits(next, 3)} ${digits(next, 3)} ${digits(next, 4)}`;
      if (form === 2) return `(${digits(next, 3)}) ${digits(next, 3)}-${digits(next, 4)}`;
      return `+${10 + (next() % 89)} ${digits(next, 2 + (next() % 2))} ${digits(next, 4)} ${digits(next, 4)}`;
    },
  },
  {
    name: 'postal code',
    field: 'paymentNetworkMerchantPostalCode',
    make: (next) => {
      const form = next() % 3;
      if (form === 0) return digits(next, 5);
      if (form === 1) return `${digits(next, 5)}-${digits(next, 4)}`;
      return `${chars(next, 'ABCDEFGHJKLMNPRSTUWYZ', 2)}${1 + (next() % 9)} ${1 + (next() % 9)}${chars(next, 'ABDEFGHJLNPQRSTUWXYZ', 2)}`;
    },
  },
  {
    // A core system numbering its transactions with 16 digits, declared in the profile.
    name: '16-digit id declared the bank’s own',
    field: 'transactionId',
    own: true,
    make: (next) => `${1 + (next() % 9)}${digits(next, 15)}`,
  },
];

/** Random undeclared 13-19-digit numbers (first digit 1-9): their refusal rate is reported, not zero. */
export const RANDOM_NUMBER: Kind = {
  name: 'random 13-19-digit number (undeclared)',
  field: 'transactionId',
  make: (next) => `${1 + (next() % 9)}${digits(next, 12 + (next() % 7))}`,
};

/** How many of `n` generated values of a kind the validator refuses (seeded: the same every run). */
export function refusals(kind: Kind, n: number, seed = 19): { refused: number; examples: string[] } {
  const next = rng(seed);
  const at = FIELDS.indexOf(kind.field as (typeof FIELDS)[number]);
  if (at < 0) throw new Error(`no field ${kind.field}`);
  const values: unknown[] = new Array(FIELDS.length).fill(undefined);
  const rules = rulesWithOwnIds(kind.own ? [kind.field] : []);
  let refused = 0;
  const examples: string[] = [];
  for (let i = 0; i < n; i++) {
    const v = kind.make(next);
    values[at] = v;
    if (validateValues(values, [], false, rules).length > 0) {
      refused++;
      if (examples.length < 5) examples.push(v);
    }
  }
  return { refused, examples };
}
