// The one card-number rule (src/mask/index.ts), on the normalised view of a text (src/mask/view.ts): which digits are a
// card number, for everything we send, store or print alike. The mask found here is applied to the text as written.
//
// A "digit group" is a maximal stretch of adjacent digits (characters a person does not see left out); a "digit run"
// a maximal stretch of groups joined by separators. A run holds a card number (brand IIN and length, Luhn:
// src/mask/brands.ts) where the digits stand as a card is written:
// - a whole group, its leading zeros being padding, glued to letters only as its word's only digits (`TX4111…` is
//   one; a group inside a hex id, where the word has other digits, is chance), and not 15 digits or fewer right
//   after `+` (a phone number);
// - consecutive groups in a grouping cards are printed in (4-4-4-4, 4-6-5, 4-6-4, 4-4-4-4-3 …), the run's edge
//   groups not glued to letters.
// A window inside a group (a card number's digits inside a 23-digit reference number) and groups joined in other
// shapes (a store number then a phone number: `#6512 355-1870472`) are not a card number.

import { displayOrder, hideRtlDigits } from './bidi.ts';
import { brandAt, luhnAt, MAX, MIN } from './brands.ts';
import { BMP, classAt, DIGIT, LETTER, SEP } from './chars.ts';
import { ibanSpans } from './iban.ts';
import { KEEP_HEAD, KEEP_TAIL, maskDigits } from './masked.ts';
import { holdsTrack, maskTracks } from './track.ts';
import { buildView, view } from './view.ts';

/**
 * The groupings card numbers are printed in, as group lengths: fours with a shorter last group (4-4-4-4,
 * 4-4-4-4-3, 4-4-4-1 …), Amex 4-6-5, Diners 4-6-4, and 4-4-5 / 4-3-3-3 for 13 digits.
 */
const PRINTED = new Set<string>(['4,6,5', '4,6,4', '4,4,5', '4,3,3,3']);
for (let n = MIN; n <= MAX; n++) {
  const g: number[] = [];
  for (let left = n; left > 0; left -= 4) g.push(Math.min(4, left));
  PRINTED.add(g.join(','));
}

/** Is one of `%`, `&`, `\\` (an escape's first character) in the text from unit `from` on? */
function escapeFrom(text: string, from: number): boolean {
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 37 || c === 38 || c === 92) return true;
  }
  return false;
}

/**
 * Do 13 digits stand in the text (an escape's hex digits counting as digits)? With `letterEnds`, only in one run:
 * a letter starts the count again (a separator or an unseen character does not), and an escape's first character
 * (`%`, `&`, `\\`) leaves the answer to the count without it. One pass of charCodeAt, ASCII through the class table;
 * with `letterEnds` it stops at a letter with fewer than 13 characters after it and no escape among them (a UUID or
 * a hex id is mostly that).
 */
function thirteenDigits(text: string, letterEnds: boolean): boolean {
  const n = text.length;
  if (n < MIN) return false;
  let count = 0;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    const k = c < 128 ? (BMP[c] as number) : classAt(text, i);
    if (k >= DIGIT) {
      if (++count === MIN) return true;
    } else if (!letterEnds) continue;
    else if (k === LETTER) {
      if (n - i - 1 < MIN) return escapeFrom(text, i + 1) && thirteenDigits(text, false);
      count = 0;
    } else if (c === 37 || c === 38 || c === 92) return thirteenDigits(text, false);
  }
  return false;
}

/**
 * The cheap pre-check: does the text hold 13 digits at all? Stops at the 13th digit.
 * @example hasThirteenDigits('tx-000123') // false
 */
export function hasThirteenDigits(text: string): boolean {
  return thirteenDigits(text, false);
}

/**
 * The pre-check of maskText and holdsCard: may a digit run of the text reach 13 digits? Most values (names, codes,
 * UUIDs, hex ids) end it at once.
 */
export function mayHoldCard(text: string): boolean {
  return thirteenDigits(text, true);
}

/** The run under way: its digits as ASCII, each digit's unit, each group's first digit and digit count. */
let digits = '';
const digitUnit: number[] = [];
const groupAt: number[] = [];
const groupCount: number[] = [];
let groups = 0;
/** Card numbers found in the run: [start, end) pairs into its digits. */
const spans: number[] = [];

/** Reads the run starting at view unit u (a digit); returns the unit after it. */
function readRun(u: number): number {
  const { cls, length } = view;
  digits = '';
  groups = 0;
  let m = 0;
  for (;;) {
    groupAt[groups] = m;
    let count = 0;
    while (u < length && (cls[u] as number) >= DIGIT) {
      digits += String.fromCharCode(48 + (cls[u] as number) - DIGIT);
      digitUnit[m++] = u++;
      count++;
    }
    groupCount[groups++] = count;
    if (u + 1 < length && cls[u] === SEP && (cls[u + 1] as number) >= DIGIT) u++;
    else return u;
  }
}

/**
 * The card numbers of the run [first, end) of the view into `spans`; with `any`, stops at the first.
 * Returns whether one was found.
 */
function findCards(text: string, first: number, end: number, any: boolean): boolean {
  const { cls, length } = view;
  spans.length = 0;
  if (digits.length < MIN) return false;
  const gluedLeft = first > 0 && cls[first - 1] === LETTER;
  const gluedRight = end < length && cls[end] === LETTER;
  // Glued to letters that lead on to other digits: part of a hex or base62 id.
  const mixedLeft = gluedLeft && first > 1 && (cls[first - 2] as number) >= DIGIT;
  const mixedRight = gluedRight && end + 1 < length && (cls[end + 1] as number) >= DIGIT;
  for (let g = 0; g < groups; g++) {
    const count = groupCount[g] as number;
    if (count < MIN) continue;
    const a = groupAt[g] as number;
    let sig = 0;
    while (sig < count && digits.charCodeAt(a + sig) === 48) sig++;
    const len = count - sig;
    if (len < MIN || len > MAX) continue;
    if (g === 0 && len <= 15 && sig === 0 && text.charCodeAt((view.from[first] as number) - 1) === 43)
      continue;
    if ((g === 0 && mixedLeft) || (g === groups - 1 && mixedRight)) continue;
    if (brandAt(digits, a + sig, len) && luhnAt(digits, a + sig, a + count)) {
      spans.push(a + sig, a + count);
      if (any) return true;
    }
  }
  for (let g = gluedLeft ? 1 : 0; g < groups - 1; g++) {
    let len = groupCount[g] as number;
    let shape = String(len);
    for (let h = g + 1; h < groups; h++) {
      len += groupCount[h] as number;
      if (len > MAX) break;
      shape += `,${groupCount[h]}`;
      if (len < MIN || (h === groups - 1 && gluedRight) || !PRINTED.has(shape)) continue;
      const a = groupAt[g] as number;
      if (brandAt(digits, a, len) && luhnAt(digits, a, a + len)) {
        spans.push(a, a + len);
        if (any) return true;
      }
    }
  }
  return spans.length > 0;
}

/** The run [first, end) of the view as written, with its card numbers (`spans`) masked. */
function maskedRun(text: string, first: number, end: number): string {
  const m = digits.length;
  for (let s = 0; s < spans.length; s += 2)
    if (spans[s] === 0 && spans[s + 1] === m) return maskDigits(digits);
  // Each card number hides its own middle, whatever the others hide: none is left readable in part.
  const hidden = new Uint8Array(m);
  for (let s = 0; s < spans.length; s += 2)
    for (let k = (spans[s] as number) + KEEP_HEAD; k < (spans[s + 1] as number) - KEEP_TAIL; k++)
      hidden[k] = 1;
  const { cls, from, to } = view;
  let out = '';
  let pos = from[first] as number;
  let k = 0;
  for (let u = first; u < end; u++) {
    const a = from[u] as number;
    out += text.slice(pos, a);
    out += (cls[u] as number) >= DIGIT && hidden[k++] === 1 ? '*' : text.slice(a, to[u]);
    pos = to[u] as number;
  }
  return out;
}

/** maskText on one view of the text (`decode`: with its escapes decoded). */
function maskView(text: string, decode: boolean): string {
  buildView(text, decode);
  const { cls, from, to, length } = view;
  let out = '';
  let last = 0;
  for (let u = 0; u < length; u++) {
    if ((cls[u] as number) < DIGIT) continue;
    const end = readRun(u);
    if (findCards(text, u, end, false)) {
      out += text.slice(last, from[u]) + maskedRun(text, u, end);
      last = to[end - 1] as number;
    }
    u = end - 1;
  }
  return last === 0 ? text : out + text.slice(last);
}

/**
 * Every card number of a text masked in place (the text as written: separators, unseen characters and escapes
 * kept around what is hidden); a run that is exactly one card number becomes `411111******1111`; track data
 * (src/mask/track.ts) masked whole. A text with `%` is judged in both views, its `%xx` escapes decoded and not.
 */
export function maskText(text: string): string {
  const out = maskTracks(text);
  if (!mayHoldCard(out)) return out;
  const masked = maskAround(out);
  // Valid IBANs stay as written (looked for only where something was masked): the text around each is judged alone.
  const ibans = masked === out ? NONE : ibanSpans(out);
  if (ibans.length === 0) return masked;
  let joined = '';
  let last = 0;
  for (let k = 0; k < ibans.length; k += 2) {
    joined += maskAround(out.slice(last, ibans[k])) + out.slice(ibans[k], ibans[k + 1]);
    last = ibans[k + 1] as number;
  }
  return joined + maskAround(out.slice(last));
}

const NONE: number[] = [];

/** maskText of a text with no track in it, IBANs not looked for. */
function maskAround(out: string): string {
  if (!mayHoldCard(out)) return out;
  const decoded = maskView(out, true);
  const masked = escapes(decoded) ? maskView(decoded, false) : decoded;
  // Digits a right-to-left control shows in another order: hidden where that order shows a card number.
  return RTL.test(masked) && holdsCard(displayOrder(masked)) ? hideRtlDigits(masked) : masked;
}

/** A right-to-left override, embedding or isolate (src/mask/bidi.ts). */
const RTL = /[\u202b\u202e\u2067]/;

/** Does the text hold an escape, read one way decoded and another as written (`%41`, `&#52`, `\\x41`)? */
function escapes(text: string): boolean {
  return text.indexOf('%') >= 0 || text.indexOf('&#') >= 0 || text.indexOf('\\') >= 0;
}

/** Does a view of the text hold a card number by the rule? */
function viewHolds(text: string, decode: boolean): boolean {
  buildView(text, decode);
  const { cls, length } = view;
  for (let u = 0; u < length; u++) {
    if ((cls[u] as number) < DIGIT) continue;
    const end = readRun(u);
    if (findCards(text, u, end, true)) return true;
    u = end - 1;
  }
  return false;
}

/** Does the text hold a card number by the rule? */
export function holdsCard(text: string): boolean {
  if (holdsTrack(text)) return true;
  if (!mayHoldCard(text)) return false;
  // One group of ASCII digits (most numeric ids): the whole-group reading, without the view.
  const n = text.length;
  let zeros = 0;
  while (zeros < n && text.charCodeAt(zeros) === 48) zeros++;
  let i = zeros;
  for (; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) break;
  }
  if (i === n)
    return n - zeros >= MIN && n - zeros <= MAX && brandAt(text, zeros, n - zeros) && luhnAt(text, zeros, n);
  const found =
    viewHolds(text, true) ||
    (escapes(text) && viewHolds(text, false)) ||
    (RTL.test(text) && holdsCard(displayOrder(text)));
  if (!found) return false;
  // Found: unless only inside valid IBANs (looked for only now), which are judged apart from the text around.
  const ibans = ibanSpans(text);
  if (ibans.length === 0) return true;
  let rest = '';
  let last = 0;
  for (let k = 0; k < ibans.length; k += 2) {
    rest += `${text.slice(last, ibans[k])} `;
    last = ibans[k + 1] as number;
  }
  return holdsCard(rest + text.slice(last));
}
