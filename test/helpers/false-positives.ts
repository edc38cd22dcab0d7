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

/**
 * A value is written as ASCII codes into one buffer and read out as one string, the same characters from the same
 * draws in the same order as `s += set[next() % set.length]` would give. Two costs avoided, each more than the
 * validator's check of the value: a string built a character at a time (a new string at each step, then a chain of
 * pieces the validator's first search copies flat), and a draw modulo a variable (a hardware division each, ~4×
 * a draw): each set has its own function, its size a literal (a multiplication, or a mask for 16).
 */
const out = Buffer.alloc(64);
/** Where the next character goes (a field of a constant: a module's `let` costs a check at every use). */
const w = { len: 0 };

/** The codes of a set of characters: a draw picks one. */
const codes = (set: string): number[] => Array.from(set, (c) => c.charCodeAt(0));
const HEX = codes('0123456789abcdef');
const BASE62 = codes('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz');
const ALNUM = codes('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ');
/** The letters of UK postcodes: the first part's, and the second part's last two. */
const POSTAL_FIRST = codes('ABCDEFGHJKLMNPRSTUWYZ');
const POSTAL_LAST = codes('ABDEFGHJLNPQRSTUWXYZ');

// One writer an alphabet, written out on purpose: closures of one factory share their code and its type feedback, and
// drew the corpora ~20 % slower (generating the ten kinds' 1M values each: 2.1 s against 2.5 s, runs alternated).
/** n characters, one draw each: hex digits. */
function hex(next: () => number, n: number): void {
  let at = w.len;
  for (let i = 0; i < n; i++) out[at++] = HEX[next() % 16] as number;
  w.len = at;
}
function base62(next: () => number, n: number): void {
  let at = w.len;
  for (let i = 0; i < n; i++) out[at++] = BASE62[next() % 62] as number;
  w.len = at;
}
function alnum(next: () => number, n: number): void {
  let at = w.len;
  for (let i = 0; i < n; i++) out[at++] = ALNUM[next() % 36] as number;
  w.len = at;
}
function digits(next: () => number, n: number): void {
  let at = w.len;
  for (let i = 0; i < n; i++) out[at++] = 48 + (next() % 10);
  w.len = at;
}
function postalFirst(next: () => number, n: number): void {
  let at = w.len;
  for (let i = 0; i < n; i++) out[at++] = POSTAL_FIRST[next() % 21] as number;
  w.len = at;
}
function postalLast(next: () => number, n: number): void {
  let at = w.len;
  for (let i = 0; i < n; i++) out[at++] = POSTAL_LAST[next() % 20] as number;
  w.len = at;
}
/** Characters as written. */
function put(text: string): void {
  for (let i = 0; i < text.length; i++) out[w.len++] = text.charCodeAt(i);
}
/** A number 0-9. */
function digit(d: number): void {
  out[w.len++] = 48 + d;
}
/** A number written in at least `width` digits, zero-padded (String(n).padStart(width, '0')). */
function num(n: number, width = 1): void {
  let size = 1;
  for (let p = 10; p <= n; p *= 10) size++;
  for (let k = size; k < width; k++) out[w.len++] = 48;
  for (let k = size - 1; k >= 0; k--) {
    out[w.len + k] = 48 + (n % 10);
    n = Math.floor(n / 10);
  }
  w.len += size;
}
/** The value written: one string. */
function value(): string {
  const s = out.toString('latin1', 0, w.len);
  w.len = 0;
  return s;
}

/** One kind of value: the field it is sent in, and its generator. */
export interface Kind {
  name: string;
  field: string;
  /** Declared the bank's own numeric ids by the profile (`ownNumericIds`). */
  own?: boolean;
  make: (next: () => number) => string;
}

export const KINDS: readonly Kind[] = [
  {
    // Marqeta and Lithic tokens: transaction, card and account ids.
    // `${hex 8}-${hex 4}-4${hex 3}-${'89ab'[n % 4]}${hex 3}-${hex 12}`
    name: 'UUIDv4',
    field: 'sourceAccountId',
    make: (next) => {
      hex(next, 8);
      put('-');
      hex(next, 4);
      put('-4');
      hex(next, 3);
      put('-');
      put('89ab'[next() % 4] as string);
      hex(next, 3);
      put('-');
      hex(next, 12);
      return value();
    },
  },
  {
    name: 'Stripe-style id (ipi_ + 24 base62)',
    field: 'transactionId',
    make: (next) => {
      put('ipi_');
      base62(next, 24);
      return value();
    },
  },
  // A hash or token in hex without hyphens: about 1 in 2,300 holds 13+ digits in a row, glued to letters.
  {
    name: '32-character hex id',
    field: 'transactionId',
    make: (next) => {
      hex(next, 32);
      return value();
    },
  },
  {
    // 23 digits, a third of them with 1-3 leading zeros. (A real ARN starts with its format digit, never 0; four
    // zeros or more then a card number is a card number padded to the width, refused.)
    name: 'ARN (23 digits, leading zeros)',
    field: 'acquirerReferenceNumber',
    make: (next) => {
      const zeros = next() % 3 === 0 ? 1 + (next() % 3) : 0;
      put('0'.repeat(zeros));
      digit(1 + (next() % 9));
      digits(next, 22 - zeros);
      return value();
    },
  },
  {
    // Card acceptor ids: half all digits, half letters and digits.
    name: '15-character merchant id',
    field: 'paymentNetworkMerchantId',
    make: (next) => {
      if (next() % 2 === 0) digits(next, 15);
      else alnum(next, 15);
      return value();
    },
  },
  {
    name: '6-digit approval code',
    field: 'authorizationApprovalCode',
    make: (next) => {
      digits(next, 6);
      return value();
    },
  },
  {
    // `${2000 + n % 30}-${MM}-${DD}T${hh}:${mm}:${ss}.${ms 3 digits}Z`
    name: 'ISO timestamp',
    field: 'transactionTimestamp',
    make: (next) => {
      num(2000 + (next() % 30));
      put('-');
      num(1 + (next() % 12), 2);
      put('-');
      num(1 + (next() % 28), 2);
      put('T');
      num(next() % 24, 2);
      put(':');
      num(next() % 60, 2);
      put(':');
      num(next() % 60, 2);
      put('.');
      num(next() % 1000, 3);
      put('Z');
      return value();
    },
  },
  {
    // E.164 (+ and 11-15 digits), North American and international written forms.
    name: 'phone number',
    field: 'sourceCustomerId',
    make: (next) => {
      const form = next() % 4;
      if (form === 0) {
        put('+');
        digit(1 + (next() % 9));
        digits(next, 10 + (next() % 5));
      } else if (form === 1) {
        put('+1 ');
        digits(next, 3);
        put(' ');
        digits(next, 3);
        put(' ');
        digits(next, 4);
      } else if (form === 2) {
        put('(');
        digits(next, 3);
        put(') ');
        digits(next, 3);
        put('-');
        digits(next, 4);
      } else {
        put('+');
        num(10 + (next() % 89));
        put(' ');
        digits(next, 2 + (next() % 2));
        put(' ');
        digits(next, 4);
        put(' ');
        digits(next, 4);
      }
      return value();
    },
  },
  {
    name: 'postal code',
    field: 'paymentNetworkMerchantPostalCode',
    make: (next) => {
      const form = next() % 3;
      if (form === 0) digits(next, 5);
      else if (form === 1) {
        digits(next, 5);
        put('-');
        digits(next, 4);
      } else {
        postalFirst(next, 2);
        digit(1 + (next() % 9));
        put(' ');
        digit(1 + (next() % 9));
        postalLast(next, 2);
      }
      return value();
    },
  },
  {
    // A core system numbering its transactions with 16 digits, declared in the profile.
    name: '16-digit id declared the bank’s own',
    field: 'transactionId',
    own: true,
    make: (next) => {
      digit(1 + (next() % 9));
      digits(next, 15);
      return value();
    },
  },
];

/** Random undeclared 13-19-digit numbers (first digit 1-9): their refusal rate is reported, not zero. */
export const RANDOM_NUMBER: Kind = {
  name: 'random 13-19-digit number (undeclared)',
  field: 'transactionId',
  make: (next) => {
    digit(1 + (next() % 9));
    digits(next, 12 + (next() % 7));
    return value();
  },
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
