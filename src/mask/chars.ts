// Characters as the card-number rule reads them (src/mask.ts): every Unicode decimal digit with its value, the
// separators that may stand between a written number's digit groups, letters (for ids glued to them), the rest.

/** Character classes; a digit's class is DIGIT + its value. */
const UNKNOWN = 0;
export const OTHER = 1;
export const SEP = 2;
export const LETTER = 3;
export const DIGIT = 16;

const ND = /^\p{Nd}$/u;
const LETTER_RE = /^\p{L}$/u;
const SEP_RE =
  /^[\p{Zs}\p{Pd}\t./\u00ad\u180e\u200b-\u200d\u2060-\u2064\ufeff\u2212\uff0e\uff0f\u2215\u2044\u2024\u3002\uff61]$/u;

/** The class of every BMP code unit, filled as met (ASCII at once). */
export const BMP = new Uint8Array(0x10000);
/** Code points above the BMP, as met. */
const ASTRAL = new Map<number, number>();

function classify(cp: number): number {
  const ch = String.fromCodePoint(cp);
  if (ND.test(ch)) {
    // Decimal digits are encoded in whole runs of 0..9 (a Unicode stability rule): the value is the distance from
    // the start of the block of adjacent digits, modulo 10.
    let k = cp;
    while (k > 0 && ND.test(String.fromCodePoint(k - 1))) k--;
    return DIGIT + ((cp - k) % 10);
  }
  if (SEP_RE.test(ch)) return SEP;
  return LETTER_RE.test(ch) ? LETTER : OTHER;
}
for (let c = 0; c < 128; c++) BMP[c] = classify(c);

/** The class of the character at text[i] (a surrogate pair: its code point's; a lone surrogate: OTHER). */
export function classAt(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c < 0xd800 || c > 0xdfff) {
    const k = BMP[c] as number;
    if (k !== UNKNOWN) return k;
    const found = classify(c);
    BMP[c] = found;
    return found;
  }
  if (c > 0xdbff || i + 1 >= text.length) return OTHER;
  const d = text.charCodeAt(i + 1);
  if (d < 0xdc00 || d > 0xdfff) return OTHER;
  const cp = (c - 0xd800) * 0x400 + (d - 0xdc00) + 0x10000;
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

/** The class of the character ending just before text[i]. */
export function classBefore(text: string, i: number): number {
  if (i <= 0) return OTHER;
  const c = text.charCodeAt(i - 1);
  return c >= 0xdc00 && c <= 0xdfff && i >= 2 ? classAt(text, i - 2) : classAt(text, i - 1);
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
