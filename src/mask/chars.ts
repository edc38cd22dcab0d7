// Characters as the card-number rule reads them (src/mask/index.ts), the way a person reads them: every character with a
// decimal digit value is that digit, characters a person does not see are not there, letters are letters, and
// everything else (spaces, punctuation, symbols, line breaks, modifier letters, and letters people read as a dash, a
// bar or an apostrophe: src/mask/confusables.ts) separates.
import { readAsSeparator } from './confusables.ts';

/** Character classes; a digit's class is DIGIT + its value. */
const UNKNOWN = 0;
/** Not seen: format characters, default-ignorables, combining marks, controls other than line breaks and tab. */
export const IGNORE = 1;
export const SEP = 2;
export const LETTER = 3;
export const DIGIT = 16;

const ND = /^\p{Nd}$/u;
const NUMBER_OTHER = /^[\p{No}\p{Nl}]$/u;
const LETTER_RE = /^\p{L}$/u;
/**
 * Modifier letters (General_Category Lm): marks that lengthen, join or modify the letter before them and carry no
 * sound of their own — the Arabic tatweel, the prolonged-sound mark, a modifier apostrophe or prime, an iteration
 * mark. Beside digits there is no letter for them to modify: a person reads them as marks between the groups.
 */
const MODIFIER_LETTER = /^\p{Lm}$/u;
const UNSEEN = /^[\p{Default_Ignorable_Code_Point}\p{Cf}\p{M}]$/u;
/** What NFKC makes of a superscript, subscript, circled or parenthesised digit: the digit and its decoration. */
const DECORATED_DIGIT = /^[(]?([0-9])[.,)]?$/;

/**
 * Digits with a decimal value NFKC does not decompose: the dingbat and double-circled digits. [first code point,
 * value of the first, how many].
 */
const DINGBAT_DIGITS: ReadonlyArray<readonly [number, number, number]> = [
  [0x2776, 1, 9],
  [0x2780, 1, 9],
  [0x278a, 1, 9],
  [0x24f5, 1, 9],
  [0x24ff, 0, 1],
  [0x1f10b, 0, 2],
];

/** The class of every BMP code unit, filled as met (ASCII at once). */
export const BMP = new Uint8Array(0x10000);
/** Code points above the BMP, as met. */
const ASTRAL = new Map<number, number>();

/** The class of a code point. */
export function classify(cp: number): number {
  const ch = String.fromCodePoint(cp);
  // Controls: tab and line breaks separate; the rest (NUL of UTF-16 read as bytes, DEL, C1) are not seen.
  if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0))
    return (cp >= 9 && cp <= 13) || (cp >= 0x1c && cp <= 0x1f) || cp === 0x85 ? SEP : IGNORE;
  if (ND.test(ch)) {
    // Decimal digits are encoded in whole runs of 0..9 (a Unicode stability rule): the value is the distance from
    // the start of the block of adjacent digits, modulo 10.
    let k = cp;
    while (k > 0 && ND.test(String.fromCodePoint(k - 1))) k--;
    return DIGIT + ((cp - k) % 10);
  }
  if (UNSEEN.test(ch)) return IGNORE;
  if (NUMBER_OTHER.test(ch)) {
    const m = DECORATED_DIGIT.exec(ch.normalize('NFKC'));
    if (m !== null) return DIGIT + Number(m[1]);
    for (const [first, value, count] of DINGBAT_DIGITS)
      if (cp >= first && cp < first + count) return DIGIT + value + cp - first;
    return SEP;
  }
  if (!LETTER_RE.test(ch)) return SEP;
  return cp >= 128 && (MODIFIER_LETTER.test(ch) || readAsSeparator(ch)) ? SEP : LETTER;
}
for (let c = 0; c < 128; c++) BMP[c] = classify(c);

/** The class of the character at text[i] (a surrogate pair: its code point's; a lone surrogate: a separator). */
export function classAt(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c < 0xd800 || c > 0xdfff) {
    const k = BMP[c] as number;
    if (k !== UNKNOWN) return k;
    const found = classify(c);
    BMP[c] = found;
    return found;
  }
  if (c > 0xdbff || i + 1 >= text.length) return SEP;
  const d = text.charCodeAt(i + 1);
  if (d < 0xdc00 || d > 0xdfff) return SEP;
  return classOfCodePoint((c - 0xd800) * 0x400 + (d - 0xdc00) + 0x10000);
}

/** The class of any code point (cached). */
export function classOfCodePoint(cp: number): number {
  if (cp < 0x10000) {
    const k = BMP[cp] as number;
    if (k !== UNKNOWN) return k;
    const found = classify(cp);
    BMP[cp] = found;
    return found;
  }
  const k = ASTRAL.get(cp);
  if (k !== undefined) return k;
  const found = classify(cp);
  ASTRAL.set(cp, found);
  return found;
}

/** Code units of the character at text[i]: 2 for a surrogate pair. */
export function widthAt(text: string, i: number): number {
  const c = text.charCodeAt(i);
  return c >= 0xd800 && c <= 0xdbff && i + 1 < text.length ? 2 : 1;
}

/** The digits of a text (any script) as ASCII digits, everything else left out. */
export function asciiDigits(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i += widthAt(text, i)) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) out += text[i];
    else if (c > 127) {
      const k = classAt(text, i);
      if (k >= DIGIT) out += String.fromCharCode(48 + k - DIGIT);
    }
  }
  return out;
}
