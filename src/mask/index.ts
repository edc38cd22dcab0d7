// Card numbers: the one rule for what is a card number, how it is masked, and when an id holds one.
// (src/mask/: chars.ts and view.ts read the text, brands.ts says what digits are a card number, rule.ts where they
// stand as one, ids.ts what a field's declared shape adds.)
//
// A card number is 13-19 digits that start with a card brand's IIN at one of that brand's lengths (Visa,
// Mastercard, Amex, Discover, JCB, Diners, UnionPay, Maestro, RuPay, Mir, Troy, Elo, Verve, UATP, the national
// schemes …: src/mask/brands.ts, npm credit-card-type's table and the schemes it lacks) and pass
// the Luhn check — the test DLP scanners apply (a pattern of the brands' formats, Luhn as the second check). A
// random 13-19-digit number passes it about 1 time in 32 (3.15 %), not 1 in 10 as with Luhn alone.
//
// Text is read the way a person reads it (src/mask/chars.ts, view.ts): every character with a decimal digit value
// is that digit (`４` full-width, `٤` Arabic-Indic, `𝟒`, `¹`, `①`, `❶` …), characters a person does not see
// (format and default-ignorable characters, combining marks, controls) are not there, escapes (`%20`, `&nbsp;`,
// `&#52;`, `\u0034`, `\t`) are the characters they stand for, and any other character that is neither a letter
// nor a digit separates. The rule (src/mask/rule.ts) then finds card numbers where the digits stand as a card is
// written: a whole digit group (leading zeros being padding; glued to letters only as its word's only digits; not
// 15 digits or fewer after `+`), or groups joined by separators in a grouping cards are printed in (4-4-4-4, 4-6-5,
// 4-6-4, 4-4-4-4-3 …). The same rule for what we send, store and print: a UUID, a hex id, a 23-digit reference
// number, a path of OIDs or a store number next to a phone number is no card number; `PAN16-01`, `TXPAN16` and
// `4539 5787 6362 1486` are.

import { MAX, MIN } from './brands.ts';
import { asciiDigits, classAt, DIGIT, IGNORE, SEP, widthAt } from './chars.ts';
import { maskDigits } from './masked.ts';
import { holdsCard, maskText } from './rule.ts';

export { CARD_BRANDS, isCardNumber, luhnValid } from './brands.ts';
export { FIXED_WIDTHS, holdsCardNumberId } from './ids.ts';
export { hasThirteenDigits } from './rule.ts';

/**
 * Mask a card number: first 6 and last 4 digits kept, the rest as `*` (separators dropped).
 * Shorter inputs keep less: under 13 digits only the last 4 stay, 4 digits or fewer become all `*`.
 * @example maskPan(testPan) // '411111******1111' for the Visa test number 4111 1111 1111 1111
 */
export function maskPan(digits: string): string {
  return maskDigits(asciiDigits(digits));
}

/**
 * Mask every card number inside a text, as the rule reads them (src/mask/rule.ts). A run that is exactly one
 * card number becomes `411111******1111`; a card number inside a longer run keeps its first 6 and last 4 digits
 * in place (`7-ELEVEN 1234 411111******1111`, `4111 11** **** 1111 123`). The result holds no card number and
 * no 12 digits of one.
 * @example maskCardNumbers('card 4111.1111.1111.1111 declined') // 'card 411111******1111 declined'
 */
export function maskCardNumbers(text: string): string {
  return maskText(text);
}

/**
 * True when the text holds a card number as maskCardNumbers finds them.
 * @example containsCardNumber('id 5500 0055 5555 5559') // true
 */
export function containsCardNumber(text: string): boolean {
  return holdsCard(text);
}

// ---------------------------------------------------------------------------------------------------------
// Values, records, excerpts

/** A number with its card number masked (as a string), or the number itself. */
function maskNumber(value: number): unknown {
  if (!Number.isFinite(value) || Math.abs(value) < 1e12) return value;
  const s = String(value);
  // An unsafe integer has lost digits already: mask it rather than guess which ones were a card number.
  if (Number.isInteger(value) && !Number.isSafeInteger(value) && !s.includes('e')) {
    const digits = s.replace('-', '');
    if (digits.length >= MIN && digits.length <= MAX) return maskPan(digits);
  }
  const masked = maskCardNumbers(s);
  return masked === s ? value : masked;
}

/**
 * Deep copy of a JSON-like value with every card number masked: string values and object keys by
 * maskCardNumbers, numbers holding one turned into masked strings. The one pass for records and log
 * objects; cheap when nothing holds 13 digits. No key exempts its value: input data names its keys itself.
 * @example maskDeep({ note: 'pan 4111-1111-1111-1111' }) // { note: 'pan 411111******1111' }
 */
export function maskDeep(value: unknown): unknown {
  if (typeof value === 'string') return maskCardNumbers(value);
  if (typeof value === 'number') return maskNumber(value);
  if (typeof value === 'bigint') return maskDeep(value.toString());
  if (Array.isArray(value)) return value.map(maskDeep);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const masked = maskDeep(v);
      // A key `__proto__` (a CSV column, an NDJSON key) stays a key: an assignment would set the prototype.
      if (k === '__proto__')
        Object.defineProperty(out, k, {
          value: masked,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      else out[maskCardNumbers(k)] = masked;
    }
    return out;
  }
  return value;
}

/**
 * Identifiers we make, in their own shape: kept whole by maskOwnRecord, since support searches for them. The
 * request ids are UUIDs (a few with an all-digit head would lose digits to the rule); a batch id is the run id
 * (8 hex digits), its counters and its halving path (`2d000640-17.1.2`, `…-p3-12`, `…-w1-4`), no counter longer
 * than 9 digits, so no card number fits in one.
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const OWN_IDS = new Map<string, RegExp>([
  ['requestId', UUID],
  ['clientRequestId', UUID],
  ['batchId', /^[0-9a-f]{8}(?:-[pw]?\d{1,9}){1,4}(?:\.[12]){0,16}$/],
]);

/**
 * maskDeep of a record the tool itself wrote (a ledger line, a ledger query's answer): its own ids at the top
 * level (batchId, requestId, clientRequestId, in their own shape) are kept whole; everything else, and every
 * nested value, is masked. Never for data from outside (input records, webhook bodies, service answers).
 * @example maskOwnRecord({ batchId: '2d000640-1.1.1.2.1.1.2', error: 'x' }) // batchId whole
 */
export function maskOwnRecord(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return maskDeep(value);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const own = typeof v === 'string' && OWN_IDS.get(k)?.test(v) === true;
    out[maskCardNumbers(k)] = own ? v : maskDeep(v);
  }
  return out;
}

/**
 * At most `max` characters of a text for a message or a reject line, masked before it is cut (the cut
 * never halves a digit run, so no card number survives in part as an unrecognised shorter number).
 * @example maskExcerpt('x'.repeat(500), 200) // 'xxx…' (200 characters and an ellipsis)
 */
const WHOLE = 65536;
/** Letters an escape is written with (`\\u0034`, `&#x34;`, `&nbsp;`): a cut never stops at one. */
const ESCAPE_LETTER = /[uUxXa-fA-F]/;

export function maskExcerpt(text: string, max: number): string {
  // Up to 64 KiB is masked whole (an escaped card number cut in two would not be recognised); a longer text is cut
  // first at twice the length, never inside a run of digits, separators, unseen characters or escapes.
  let end = Math.min(text.length, Math.max(2 * max, WHOLE));
  // Never between the two halves of a surrogate pair (a digit such as 𝟒 is one).
  if (end > 0 && end < text.length && widthAt(text, end - 1) === 2) end++;
  while (end < text.length) {
    const k = classAt(text, end);
    if (k < DIGIT && k !== SEP && k !== IGNORE && !ESCAPE_LETTER.test(text[end] as string)) break;
    end += widthAt(text, end);
  }
  const masked = maskCardNumbers(end < text.length ? text.slice(0, end) : text);
  return masked.length > max ? `${masked.slice(0, max)}…` : masked;
}
