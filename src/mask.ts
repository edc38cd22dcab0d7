// Card numbers: the one rule for what is a card number, how it is masked, and when an id holds one.
// (src/mask/chars.ts, brands.ts and ids.ts hold its parts: characters, what makes digits a card number, the id reading.)
//
// A card number is 13-19 digits that start with a card brand's IIN at one of that brand's lengths (Visa,
// Mastercard incl. the 2-series, Amex, Discover, JCB, Diners, UnionPay, Maestro, RuPay: src/mask/brands.ts) and pass
// the Luhn check — the test DLP scanners apply (a pattern of the brands' formats, Luhn as the second check). A
// random 13-19-digit number passes it about 1 time in 36 (2.8 %), not 1 in 10 as with Luhn alone.
//
// Digits are every Unicode decimal digit (\p{Nd}: `４５３９` full-width, `٤٥٣٩` Arabic-Indic, `𝟒` …), read as
// their values. Digits count as one written number when only separators stand between them: ASCII space, tab,
// `-`, `.`, `/`, every Unicode space separator (\p{Zs}: no-break, narrow no-break, thin, em, ideographic …),
// every dash (\p{Pd}), zero-width characters (U+200B-U+200D, U+2060-U+2064, U+FEFF, U+00AD soft hyphen) and the
// full-width dot and slash. A "digit run" is a maximal stretch of digits joined by separators; a "digit group"
// a maximal stretch of adjacent digits. Two readings of a run:
// - anything we store or print (free text, messages, keys, logs, paths): every 13-19-digit window of every run
//   that is a card number is masked, so a card number next to other digits (`1234 PAN16`), glued to letters
//   (`x4539…`) or written in any grouping is found;
// - an id, code or amount we send (holdsCardNumberId): the candidates are a whole digit group (leading zeros
//   being padding; glued to letters only as its word's only digits), and groups joined by separators in the
//   groupings cards are printed in (4-4-4-4, 4-6-5, 4-6-4, 4-4-4-4-3 …), none of them glued to a letter. So a
//   UUID (`…e9-8939-4827-8942-8f…`), a hex or base62 id, a 23-digit acquirer reference number, or a phone
//   number after `+` is no card number, while `PAN16-01`, `TXPAN16` and `4539 5787 6362 1486` are.

import { brandAt, MAX, MIN } from './mask/brands.ts';
import { asciiDigits, classAt, DIGIT, SEP, widthAt } from './mask/chars.ts';

export { CARD_BRANDS, isCardNumber, luhnValid } from './mask/brands.ts';
export { FIXED_WIDTHS, holdsCardNumberId } from './mask/ids.ts';

/**
 * Mask a card number: first 6 and last 4 digits kept, the rest as `*` (separators dropped).
 * Shorter inputs keep less: under 13 digits only the last 4 stay, 4 digits or fewer become all `*`.
 * @example maskPan(testPan) // '411111******1111' for the Visa test number 4111 1111 1111 1111
 */
export function maskPan(digits: string): string {
  const d = asciiDigits(digits);
  const n = d.length;
  if (n <= 4) return '*'.repeat(n);
  if (n < 13) return '*'.repeat(n - 4) + d.slice(-4);
  return d.slice(0, 6) + '*'.repeat(n - 10) + d.slice(-4);
}

/** Digits kept at each end of a masked card number. */
const KEEP_HEAD = 6;
const KEEP_TAIL = 4;
/** Digits a masked 16-digit card number hides: a window with as many hidden is as safe as one masked. */
const ENOUGH_HIDDEN = 6;

/**
 * The cheap pre-check every caller starts with: does the text hold 13 digits at all? One pass of charCodeAt,
 * stopping at the 13th digit; most values (names, codes, short ids) end it at once.
 * @example hasThirteenDigits('tx-000123') // false
 */
export function hasThirteenDigits(text: string): boolean {
  const n = text.length;
  if (n < MIN) return false;
  let count = 0;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c <= 57) {
      if (c >= 48 && ++count === MIN) return true;
    } else if (c > 127 && classAt(text, i) >= DIGIT && ++count === MIN) return true;
  }
  return false;
}

// ---------------------------------------------------------------------------------------------------------
// Text: every window of every run

/**
 * One digit run of a text: its digits (as ASCII, separators left out), where each sits in the text, and where
 * each digit group starts, as an index into the digits. `end` is the index in the text after it.
 */
interface Run {
  digits: string;
  at: number[];
  groups: number[];
  end: number;
}

/** The digit run starting at text[start] (a digit). */
function readRun(text: string, start: number): Run {
  let digits = '';
  const at: number[] = [];
  const groups: number[] = [0];
  const n = text.length;
  let i = start;
  for (;;) {
    for (let k = classAt(text, i); i < n && k >= DIGIT; ) {
      digits += String.fromCharCode(48 + k - DIGIT);
      at.push(i);
      i += widthAt(text, i);
      if (i < n) k = classAt(text, i);
    }
    let j = i;
    while (j < n && classAt(text, j) === SEP) j++;
    if (j === i || j >= n || classAt(text, j) < DIGIT) break;
    groups.push(digits.length);
    i = j;
  }
  return { digits, at, groups, end: i };
}

/**
 * Every 13-19-digit window of a run that is a card number, as [start, end) pairs into its digits. Prefix sums
 * by parity make each window's Luhn sum O(1), so a hostile megabyte of digits costs a few passes.
 */
function cardWindows(digits: string): number[] {
  const m = digits.length;
  const out: number[] = [];
  if (m < MIN) return out;
  // plain[p][i]: sum of digits k < i with k % 2 === p; doubled[p][i]: the same of the doubled digits.
  const plain0 = new Int32Array(m + 1);
  const plain1 = new Int32Array(m + 1);
  const dbl0 = new Int32Array(m + 1);
  const dbl1 = new Int32Array(m + 1);
  for (let k = 0; k < m; k++) {
    const d = digits.charCodeAt(k) - 48;
    const dd = d * 2 > 9 ? d * 2 - 9 : d * 2;
    const odd = k & 1;
    plain0[k + 1] = (plain0[k] as number) + (odd ? 0 : d);
    plain1[k + 1] = (plain1[k] as number) + (odd ? d : 0);
    dbl0[k + 1] = (dbl0[k] as number) + (odd ? 0 : dd);
    dbl1[k + 1] = (dbl1[k] as number) + (odd ? dd : 0);
  }
  for (let b = MIN; b <= m; b++) {
    // The last digit (b - 1) is not doubled; every other one going left is.
    const lastOdd = (b - 1) & 1;
    const plain = lastOdd ? plain1 : plain0;
    const dbl = lastOdd ? dbl0 : dbl1;
    const lo = Math.max(0, b - MAX);
    for (let a = b - MIN; a >= lo; a--) {
      const sum = (plain[b] as number) - (plain[a] as number) + (dbl[b] as number) - (dbl[a] as number);
      if (sum % 10 === 0 && brandAt(digits, a, b - a)) out.push(a, b);
    }
  }
  return out;
}

/** The run's text with its card numbers masked, or undefined when it holds none. */
function maskRun(text: string, start: number, run: Run): string | undefined {
  const { digits, at, groups } = run;
  const m = digits.length;
  const windows = cardWindows(digits);
  if (windows.length === 0) return undefined;
  // The whole run is one card number: the usual masked form, separators dropped.
  for (let w = 0; w < windows.length; w += 2) {
    if (windows[w] === 0 && windows[w + 1] === m) return maskPan(digits);
  }
  // Otherwise every card-number window ends with as many digits hidden as the usual masking would hide of it
  // (all but its first 6 and last 4, at most 6 needed: what a masked 16-digit card number hides), so what is
  // left holds no card number and none can be guessed back from its check digit. Windows along digit groups
  // come first (a number as written: `1234 PAN16`), so each keeps its first 6 and last 4 digits in place; a
  // window another one's masking already hides enough of is left as it is.
  const boundary = new Uint8Array(m + 1);
  for (let g = 0; g < groups.length; g++) boundary[groups[g] as number] = 1;
  boundary[m] = 1;
  const first: number[] = [];
  const rest: number[] = [];
  for (let w = 0; w < windows.length; w += 2) {
    const aligned = boundary[windows[w] as number] === 1 && boundary[windows[w + 1] as number] === 1;
    (aligned ? first : rest).push(w);
  }
  // Along groups: by start, then shortest (`4111 1111 1111 1111 123` hides the 16-digit card's middle).
  first.sort(
    (x, y) =>
      (windows[x] as number) - (windows[y] as number) ||
      (windows[x + 1] as number) - (windows[y + 1] as number),
  );
  const hidden = new Uint8Array(m);
  for (const w of first.concat(rest)) {
    const a = windows[w] as number;
    const b = windows[w + 1] as number;
    let count = 0;
    for (let k = a; k < b; k++) count += hidden[k] as number;
    if (count >= Math.min(b - a - KEEP_HEAD - KEEP_TAIL, ENOUGH_HIDDEN)) continue;
    for (let k = a + KEEP_HEAD; k < b - KEEP_TAIL; k++) hidden[k] = 1;
  }
  const chars = text.slice(start, run.end).split('');
  for (let k = 0; k < m; k++) {
    if (hidden[k] !== 1) continue;
    const p = (at[k] as number) - start;
    chars[p] = '*';
    if (widthAt(text, at[k] as number) === 2) chars[p + 1] = '';
  }
  return chars.join('');
}

/**
 * Mask every card number inside a text: every 13-19-digit window of every digit run that is a card number (a
 * brand's IIN and length, Luhn). A run that is exactly one card number becomes `411111******1111`; a card
 * number inside a longer run keeps its first 6 and last 4 digits in place (`7-ELEVEN 1234 411111******1111`,
 * `4111 11** **** 1111 123`). The result holds no card number and no 12 digits of one.
 * @example maskCardNumbers('card 4111.1111.1111.1111 declined') // 'card 411111******1111 declined'
 */
export function maskCardNumbers(text: string): string {
  if (!hasThirteenDigits(text)) return text;
  let out = '';
  let last = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    if (classAt(text, i) < DIGIT) continue;
    const run = readRun(text, i);
    if (run.digits.length >= MIN) {
      const masked = maskRun(text, i, run);
      if (masked !== undefined) {
        out += text.slice(last, i) + masked;
        last = run.end;
      }
    }
    i = run.end - 1;
  }
  return last === 0 ? text : out + text.slice(last);
}

/**
 * True when the text holds a card number as maskCardNumbers finds them (every window).
 * @example containsCardNumber('id 5500 0055 5555 5559') // true
 */
export function containsCardNumber(text: string): boolean {
  if (!hasThirteenDigits(text)) return false;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    if (classAt(text, i) < DIGIT) continue;
    const run = readRun(text, i);
    if (run.digits.length >= MIN && cardWindows(run.digits).length > 0) return true;
    i = run.end - 1;
  }
  return false;
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
export function maskExcerpt(text: string, max: number): string {
  let end = Math.min(text.length, 2 * max);
  // Never between the two halves of a surrogate pair (a digit such as 𝟒 is one).
  if (end > 0 && end < text.length && widthAt(text, end - 1) === 2) end++;
  while (end < text.length) {
    const k = classAt(text, end);
    if (k < DIGIT && k !== SEP) break;
    end += widthAt(text, end);
  }
  const masked = maskCardNumbers(end < text.length ? text.slice(0, end) : text);
  return masked.length > max ? `${masked.slice(0, max)}…` : masked;
}
