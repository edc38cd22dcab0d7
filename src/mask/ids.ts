// The id reading of the card-number rule (src/mask.ts): in an id, code or amount we send, only whole digit groups
// and groups written in the groupings cards are printed in are candidates.
import { brandAt, luhnAt, MAX, MIN } from './brands.ts';
import { asciiDigits, BMP, classAt, classBefore, DIGIT, LETTER, SEP, widthAt } from './chars.ts';

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

/** Known fixed widths: a value of exactly this many ASCII digits in the field is that number, not a card number. */
export const FIXED_WIDTHS: Readonly<Record<string, number>> = {
  /** An acquirer reference number is 23 digits by definition. */
  acquirerReferenceNumber: 23,
  /** A card acceptor id (ISO 8583 field 42) is 15 characters. */
  paymentNetworkMerchantId: 15,
};

/** Every ASCII digit? */
function allAsciiDigits(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return text.length > 0;
}

/** Scratch of the run under way in holdsCardNumberId: each group's start, end (text indexes) and digit count. */
const groupStart: number[] = [];
const groupEnd: number[] = [];
const groupCount: number[] = [];

/**
 * Does an id or code value hold a card number? Candidates are each whole digit group (of 13-19 digits after any
 * leading zeros: `000000PAN16` holds one, a zero-padded `00000000000` + `12345` does not; a group right after
 * `+` of 15 digits or fewer is a phone number), and groups joined by separators in a printed grouping (4-4-4-4,
 * 4-6-5 …) where no group is glued to a letter. `width`: the field's fixed width (FIXED_WIDTHS); a value of
 * exactly that many ASCII digits is that number. A window inside a group is not a candidate: a 23-digit
 * reference number is one number, not a card number with extra digits.
 * @example holdsCardNumberId('PAN16-01') // true
 * @example holdsCardNumberId('de6a90e9-8939-4827-8942-8fda87f2ec1f') // false
 */
export function holdsCardNumberId(text: string, width?: number): boolean {
  const n = text.length;
  if (n < MIN) return false;
  if (width !== undefined && n === width && allAsciiDigits(text)) return false;
  let i = 0;
  while (i < n) {
    // ASCII read from the table in place; anything else through classAt (and a surrogate pair is one character).
    const c = text.charCodeAt(i);
    if ((c < 128 ? (BMP[c] as number) : classAt(text, i)) < DIGIT) {
      i += c >= 0xd800 && c <= 0xdbff ? widthAt(text, i) : 1;
      continue;
    }
    const start = i;
    let groups = 0;
    let total = 0;
    for (;;) {
      const from = i;
      let count = 0;
      for (;;) {
        if (i >= n) break;
        const d = text.charCodeAt(i);
        if (d >= 48 && d <= 57) i++;
        else if (d > 127 && classAt(text, i) >= DIGIT) i += widthAt(text, i);
        else break;
        count++;
      }
      groupStart[groups] = from;
      groupEnd[groups] = i;
      groupCount[groups] = count;
      groups++;
      total += count;
      let j = i;
      while (j < n && classAt(text, j) === SEP) j++;
      if (j === i || j >= n || classAt(text, j) < DIGIT) break;
      i = j;
    }
    if (total >= MIN && runHoldsCardId(text, groups, start, i)) return true;
  }
  return false;
}

/** Letters glued before text[i] lead back to a digit (the same word holds other digits)? */
function otherDigitsBefore(text: string, i: number): boolean {
  let k = classBefore(text, i);
  while (k === LETTER) {
    i -= text.charCodeAt(i - 1) >= 0xdc00 && text.charCodeAt(i - 1) <= 0xdfff ? 2 : 1;
    k = classBefore(text, i);
  }
  return k >= DIGIT && i < text.length && classAt(text, i) === LETTER;
}

/** Letters glued after text[i] lead on to a digit? */
function otherDigitsAfter(text: string, i: number): boolean {
  const n = text.length;
  let seen = false;
  while (i < n) {
    const k = classAt(text, i);
    if (k !== LETTER) return seen && k >= DIGIT;
    seen = true;
    i += widthAt(text, i);
  }
  return false;
}

function runHoldsCardId(text: string, groups: number, start: number, end: number): boolean {
  // Whole groups alone, leading zeros being padding.
  for (let g = 0; g < groups; g++) {
    const count = groupCount[g] as number;
    if (count < MIN) continue;
    // Leading zeros first (a zero of any script): most long groups (ARNs, references) end here, unread.
    let sig = 0;
    for (
      let at = groupStart[g] as number;
      sig < count && classAt(text, at) === DIGIT;
      at += widthAt(text, at)
    )
      sig++;
    const len = count - sig;
    if (len < MIN || len > MAX) continue;
    if (g === 0 && len <= 15 && sig === 0 && text.charCodeAt(start - 1) === 43 /* + */) continue;
    // Glued to letters, a group is a card number only as the word's only digits (`TX4111…`, `REF4111…X`): in a
    // hex or base62 id digits are scattered among the letters, and a long group of them is chance.
    if ((g === 0 && otherDigitsBefore(text, start)) || (g === groups - 1 && otherDigitsAfter(text, end)))
      continue;
    const digits = asciiDigits(text.slice(groupStart[g], groupEnd[g]));
    if (brandAt(digits, sig, len) && luhnAt(digits, sig, count)) return true;
  }
  // Groups joined by separators, in a printed grouping, none glued to a letter (only the run's ends can be).
  const gluedLeft = classBefore(text, start) === LETTER;
  const gluedRight = end < text.length && classAt(text, end) === LETTER;
  for (let g = gluedLeft ? 1 : 0; g < groups - 1; g++) {
    let len = groupCount[g] as number;
    let shape = String(len);
    for (let h = g + 1; h < groups; h++) {
      len += groupCount[h] as number;
      if (len > MAX) break;
      shape += `,${groupCount[h]}`;
      if (len < MIN || (h === groups - 1 && gluedRight) || !PRINTED.has(shape)) continue;
      let digits = '';
      for (let x = g; x <= h; x++) digits += asciiDigits(text.slice(groupStart[x], groupEnd[x]));
      if (brandAt(digits, 0, len) && luhnAt(digits, 0, len)) return true;
    }
  }
  return false;
}
