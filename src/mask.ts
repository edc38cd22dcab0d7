// Card numbers: the one rule for what is a card number, how it is masked, and when an id holds one.
//
// A card number is 13-19 digits that start with a card brand's IIN at one of that brand's lengths (Visa,
// Mastercard incl. the 2-series, Amex, Discover, JCB, Diners, UnionPay, Maestro, RuPay: BRANDS below) and pass
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

// ---------------------------------------------------------------------------------------------------------
// Characters

/** Character classes; a digit's class is DIGIT + its value. */
const UNKNOWN = 0;
const OTHER = 1;
const SEP = 2;
const LETTER = 3;
const DIGIT = 16;

const ND = /^\p{Nd}$/u;
const LETTER_RE = /^\p{L}$/u;
const SEP_RE =
  /^[\p{Zs}\p{Pd}\t./\u00ad\u180e\u200b-\u200d\u2060-\u2064\ufeff\u2212\uff0e\uff0f\u2215\u2044\u2024\u3002\uff61]$/u;

/** The class of every BMP code unit, filled as met (ASCII at once). */
const BMP = new Uint8Array(0x10000);
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
function classAt(text: string, i: number): number {
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
function widthAt(text: string, i: number): number {
  const c = text.charCodeAt(i);
  return c >= 0xd800 && c <= 0xdbff && i + 1 < text.length ? 2 : 1;
}

/** The class of the character ending just before text[i]. */
function classBefore(text: string, i: number): number {
  if (i <= 0) return OTHER;
  const c = text.charCodeAt(i - 1);
  return c >= 0xdc00 && c <= 0xdfff && i >= 2 ? classAt(text, i - 2) : classAt(text, i - 1);
}

// ---------------------------------------------------------------------------------------------------------
// The rule: brands, Luhn

/** Luhn check of a string of ASCII digits (no separators). */
export function luhnValid(digits: string): boolean {
  return digits.length > 0 && luhnAt(digits, 0, digits.length);
}

/** Luhn check of text[a, b), which must be ASCII digits (false when one is not). */
function luhnAt(text: string, a: number, b: number): boolean {
  let sum = 0;
  let double = false;
  for (let i = b - 1; i >= a; i--) {
    let d = text.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return false;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

const MIN = 13;
const MAX = 19;

/** Lengths as a bit set. */
function lengths(from: number, to = from): number {
  let bits = 0;
  for (let n = from; n <= to; n++) bits |= 1 << n;
  return bits;
}
const L16_19 = lengths(16, 19);
/**
 * The brands' IIN ranges with their lengths: [first prefix, last prefix, lengths]; prefixes of any length up to 6,
 * compared on the number's first digits. Maestro's 12-digit cards are below what the rule looks at (13).
 */
const BRAND_RANGES: Array<[string, string, number, string]> = [
  ['4', '4', lengths(13) | lengths(16) | lengths(19), 'Visa'],
  ['51', '55', lengths(16), 'Mastercard'],
  ['2221', '2720', lengths(16), 'Mastercard'],
  ['34', '34', lengths(15), 'Amex'],
  ['37', '37', lengths(15), 'Amex'],
  ['6011', '6011', L16_19, 'Discover'],
  ['622126', '622925', L16_19, 'Discover'],
  ['644', '649', L16_19, 'Discover'],
  ['65', '65', L16_19, 'Discover'],
  ['3528', '3589', L16_19, 'JCB'],
  ['300', '305', lengths(14, 19), 'Diners'],
  ['3095', '3095', lengths(14, 19), 'Diners'],
  ['36', '36', lengths(14, 19), 'Diners'],
  ['38', '39', lengths(14, 19), 'Diners'],
  ['62', '62', L16_19, 'UnionPay'],
  ['81', '81', L16_19, 'UnionPay'],
  ['50', '50', lengths(13, 19), 'Maestro'],
  ['56', '69', lengths(13, 19), 'Maestro'],
  ['60', '60', lengths(16), 'RuPay'],
  ['65', '65', lengths(16), 'RuPay'],
  ['81', '82', lengths(16), 'RuPay'],
  ['508', '508', lengths(16), 'RuPay'],
  ['353', '353', lengths(16), 'RuPay'],
  ['356', '356', lengths(16), 'RuPay'],
];
/** The same as [low, high] over the first 6 digits, and the lengths. */
const BRANDS: Int32Array = (() => {
  const out = new Int32Array(BRAND_RANGES.length * 3);
  BRAND_RANGES.forEach(([lo, hi, bits], i) => {
    out[3 * i] = Number(lo.padEnd(6, '0'));
    out[3 * i + 1] = Number(hi.padEnd(6, '9'));
    out[3 * i + 2] = bits;
  });
  return out;
})();

/** The brands the rule knows, for the docs and the tests: name, prefixes, lengths. */
export const CARD_BRANDS: ReadonlyArray<{ brand: string; from: string; to: string; lengths: number[] }> =
  BRAND_RANGES.map(([from, to, bits, brand]) => ({
    brand,
    from,
    to,
    lengths: [...Array(20).keys()].filter((n) => (bits & (1 << n)) !== 0),
  }));

/** Does digits[a, a + n) (ASCII digits) start with a brand's IIN at one of its lengths? */
function brandAt(digits: string, a: number, n: number): boolean {
  if (n < MIN || n > MAX) return false;
  let p6 = 0;
  for (let k = a; k < a + 6; k++) p6 = p6 * 10 + (digits.charCodeAt(k) - 48);
  const bit = 1 << n;
  for (let r = 0; r < BRANDS.length; r += 3) {
    if (
      p6 >= (BRANDS[r] as number) &&
      p6 <= (BRANDS[r + 1] as number) &&
      ((BRANDS[r + 2] as number) & bit) !== 0
    )
      return true;
  }
  return false;
}

/**
 * Is a string of 13-19 ASCII digits a card number: a brand's IIN at one of its lengths, and Luhn?
 * @example isCardNumber('4539578763621486') // true
 * @example isCardNumber('9539578763621483') // false (no brand starts with 9), though it passes Luhn
 */
export function isCardNumber(digits: string): boolean {
  return (
    /^[0-9]{13,19}$/.test(digits) && brandAt(digits, 0, digits.length) && luhnAt(digits, 0, digits.length)
  );
}

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

/** The digits of a text (any script) as ASCII digits, everything else left out. */
function asciiDigits(text: string): string {
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
// Ids: whole groups, printed groupings

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
    for (const [k, v] of Object.entries(value)) out[maskCardNumbers(k)] = maskDeep(v);
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
