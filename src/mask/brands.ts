// What makes 13-19 digits a card number (src/mask/index.ts): a card brand's IIN at one of its lengths, and Luhn.

/** Luhn check of a string of ASCII digits (no separators). */
export function luhnValid(digits: string): boolean {
  return digits.length > 0 && luhnAt(digits, 0, digits.length);
}

/** Luhn check of text[a, b), which must be ASCII digits (false when one is not). */
export function luhnAt(text: string, a: number, b: number): boolean {
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

export const MIN = 13;
export const MAX = 19;

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
export function brandAt(digits: string, a: number, n: number): boolean {
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
 * @example isCardNumber('4539' + '5787' + '6362' + '1486') // true (a Visa test number; written in groups so
 *   that no card number stands whole in the sources)
 * @example isCardNumber('9539' + '5787' + '6362' + '1483') // false (no brand starts with 9), though it passes Luhn
 */
export function isCardNumber(digits: string): boolean {
  return (
    /^[0-9]{13,19}$/.test(digits) && brandAt(digits, 0, digits.length) && luhnAt(digits, 0, digits.length)
  );
}
