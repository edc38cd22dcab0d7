// Test card numbers and a scanner for them written apart from src/mask/index.ts, so the two can disagree.
import { readAsPerson } from './leak-forms.ts';

/** Append the Luhn check digit to a string of digits. */
export function withCheckDigit(body: string): string {
  for (let c = 0; c <= 9; c++) if (luhn(body + c)) return body + c;
  throw new Error('unreachable');
}

/** Luhn, written again here on purpose (not imported from src/mask/index.ts). */
export function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return digits.length > 0 && sum % 10 === 0;
}

/** The check digit that makes `body` + it pass Luhn (the only one of 0-9 that does). */
export function luhnDigit(body: string): number {
  let sum = 0;
  for (let i = 0; i < body.length; i++) {
    let d = body.charCodeAt(body.length - 1 - i) - 48;
    if (i % 2 === 0) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return (10 - (sum % 10)) % 10;
}

/** The networks' published test numbers, 13 to 19 digits. */
export const TEST_PANS = {
  visa: '4111111111111111',
  visa2: '4012888888881881',
  visa13: '4222222222222',
  mastercard: '5500005555555559',
  mastercard2: '5105105105105100',
  amex: '378282246310005',
  discover: '6011111111111117',
  jcb: '3530111333300000',
  diners: '30569309025904',
  unionpay19: withCheckDigit('621234567890123456'),
  visa19: withCheckDigit('411111111111111111'),
} as const;

/**
 * Every Luhn-valid 13-19-digit window of every digit run (digits joined by spaces, dashes, dots or
 * slashes) in a text, as the red team's capture server reads traffic. Returns the windows found.
 */
export function luhnWindows(text: string): string[] {
  return windowsOf(text.replace(/[ ./-]+/g, ' '), luhn);
}

/** Every 13-19-digit window of every run of ASCII digits joined by single spaces that passes `test`. */
function windowsOf(plain: string, test: (digits: string) => boolean): string[] {
  const found: string[] = [];
  for (const m of plain.matchAll(/\d(?: *\d)*/g)) {
    const d = m[0].replace(/\D/g, '');
    for (let a = 0; a + 13 <= d.length; a++)
      for (let len = 13; len <= 19 && a + len <= d.length; len++) {
        const w = d.slice(a, a + len);
        if (test(w)) found.push(w);
      }
  }
  return found;
}

/** The test card numbers whose digits appear in a text once separators are taken out. */
export function pansIn(text: string, pans: Iterable<string> = Object.values(TEST_PANS)): string[] {
  const digits = text.replace(/[ ./-]/g, '');
  return [...pans].filter((p) => digits.includes(p));
}

/** The brands' IIN ranges and lengths, written again here as patterns (not imported from src/mask/index.ts). */
const BRAND_PATTERNS: Array<[RegExp, number[]]> = [
  [/^4/, [13, 16, 19]],
  [/^5[1-5]/, [16]],
  [/^2(?:22[1-9]|2[3-9]\d|[3-6]\d\d|7[01]\d|720)/, [16]],
  [/^3[47]/, [15]],
  [/^(?:6011|64[4-9]|65)/, [16, 17, 18, 19]],
  [/^622(?:12[6-9]|1[3-9]\d|[2-8]\d\d|9[01]\d|92[0-5])/, [16, 17, 18, 19]],
  [/^35(?:2[89]|[3-8]\d)/, [16, 17, 18, 19]],
  [/^(?:30[0-5]|3095|36|3[89])/, [14, 15, 16, 17, 18, 19]],
  [/^(?:62|81)/, [16, 17, 18, 19]],
  [/^(?:50|5[6-9]|6)/, [13, 14, 15, 16, 17, 18, 19]],
  [/^(?:60|65|8[12]|508|35[36])/, [16]],
  // The fourth pass's schemes and lengths (issue 49): Visa 18, Maestro 493698, JCB 2131/1800, Mir, UnionPay 81
  // at 14-15, UATP, BORICA, Humo, Uzcard, Belkart, ArCa, Prostir, Troy 9792, Carnet 286900, Napas, GPN, T-Union.
  [/^4/, [18]],
  [/^493698/, [14, 15, 17]],
  [/^(?:2131|1800|220[0-4])/, [16, 17, 18, 19]],
  [/^81(?:0|[1-6]\d|7[01])/, [14, 15]],
  [/^1/, [15]],
  [/^(?:2205|9860|8600|9112|9051|9804|9792|286900)/, [16]],
  [/^9704/, [16, 19]],
  [/^1946/, [16, 18, 19]],
  [/^31/, [19]],
];

/** A card number by the brands' formats and Luhn: what a DLP scanner (and src/mask/index.ts) calls one. */
export function isBrandCard(digits: string): boolean {
  return luhn(digits) && BRAND_PATTERNS.some(([re, lens]) => re.test(digits) && lens.includes(digits.length));
}

/** Decimal digits of other scripts as ASCII (the zero of each block used by the corpora). */
const BEYOND_ZERO = /[^\u0000-\u065f]/;
const ZEROS = [0x660, 0x6f0, 0x966, 0x9e6, 0xe50, 0xff10, 0x1d7ce, 0x1d7d8, 0x1d7e2, 0x1d7ec, 0x1d7f6];
export function asciiDigits(text: string): string {
  // Nothing from the first zero (U+0660) on: the text as it is.
  if (!BEYOND_ZERO.test(text)) return text;
  // One pass by code point, the text below the first zero copied as it is (a log or ledger of megabytes with one
  // non-ASCII name in it is mostly that).
  let out = '';
  let copied = 0;
  for (let i = 0; i < text.length; i++) {
    const cp = text.codePointAt(i) as number;
    if (cp < 0x660) continue;
    const zero = ZEROS.find((z) => cp >= z && cp <= z + 9);
    const wide = cp > 0xffff;
    if (zero !== undefined) {
      out += text.slice(copied, i) + String(cp - zero);
      copied = i + (wide ? 2 : 1);
    }
    if (wide) i++;
  }
  return out + text.slice(copied);
}

/** Every separator a written number may have between its digit groups (any Unicode space, tab, dashes, zero-width). */
const SEPARATORS = /[\p{Zs}\p{Pd}\t./\u00ad\u180e\u200b-\u200d\u2060-\u2064\ufeff\u2212\uff0e\uff0f]/gu;

/**
 * Every card-number window (brand format + Luhn) of every digit run of a text, digits of any script joined by any
 * separator: what a DLP scanner finds in traffic.
 */
export function cardWindows(text: string): string[] {
  return windowsOf(asciiDigits(text).replace(UUID, ' uuid ').replace(SEPARATORS, ' '), isBrandCard);
}

/**
 * A UUID (the service's and our request ids): its groups are joined by dashes, and when three or four of them happen
 * to be all digits (about one UUID in 200) the joined run holds a brand + Luhn window by chance — a random id, not a
 * card number, which the masking rightly leaves alone (a request id must stay whole to be looked up). A window
 * scan that kept them failed, now and then, a test whose debug log holds a dozen request ids (0.45 % of 20,000
 * random UUIDs hold a Luhn window of 13–19 digits starting 3–6).
 */
const UUID = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi;

/**
 * The card numbers of which 12 or more digits in a row appear in a text, separators (any) taken out and digits of
 * any script read as ASCII: a leak even when the rest was cut off. (Twelve of one repeated digit do not count.)
 */
export function panPiecesIn(text: string, pans: Iterable<string> = Object.values(TEST_PANS)): string[] {
  // Read as a person reads it (test/helpers/leak-forms.ts): escapes, unseen characters and other digits too.
  const digits = readAsPerson(text);
  const out: string[] = [];
  for (const p of pans) {
    for (let a = 0; a + 12 <= p.length; a++) {
      const piece = p.slice(a, a + 12);
      // One digit repeated (the zeros of 6200000000000005) says nothing about which number it came from.
      if (/^(\d)\1+$/.test(piece)) continue;
      if (digits.includes(piece)) {
        out.push(p);
        break;
      }
    }
  }
  return out;
}
