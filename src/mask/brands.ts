// What makes 12-19 digits a card number (src/mask/index.ts): a card scheme's IIN at one of its lengths, and Luhn.
import creditCardType from 'credit-card-type';

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

/** [first prefix, last prefix, lengths, brand]: prefixes of any length, compared on the number's first 6 digits. */
type Range = [string, string, number, string];

/**
 * The card schemes' IIN ranges, from a maintained source: npm `credit-card-type` (Braintree; its table of Visa,
 * Mastercard, Amex, Diners, Discover, JCB, UnionPay, Maestro 12-19, Elo, Mir, Hiper, Hipercard, Naranja, Verve,
 * Troy), read from the package at load, so an upgrade brings its new ranges. Prefixes longer than 6 digits
 * (Troy's 8-digit ranges) count from their first 6.
 */
function libraryRanges(): Range[] {
  const out: Range[] = [];
  for (const id of Object.values(creditCardType.types)) {
    const t = creditCardType.getTypeInfo(id);
    let bits = 0;
    for (const n of t.lengths) bits |= 1 << n;
    for (const p of t.patterns) {
      const [lo, hi] = Array.isArray(p) ? p : [p, p];
      out.push([String(lo).slice(0, 6), String(hi).slice(0, 6), bits, t.niceType]);
    }
  }
  return out;
}

/**
 * Schemes and lengths the library lacks, each with its source. "IIN table": Wikipedia, "Payment card number",
 * the issuer identification number table (which cites each scheme's own publication).
 */
export const EXTRA_RANGES: readonly Range[] = [
  // Visa 13 and 16-19 (IIN table; the library lists 16, 18, 19), Mastercard, Amex, JCB 16-19 (IIN table), and
  // Maestro's 50 and 56-69 at 13-19 (IIN table; the library splits 50 between Maestro, Elo and Verve at fewer
  // lengths): the rule's earlier table, kept whole so no number it found is missed now.
  ['4', '4', lengths(13) | lengths(16) | lengths(19), 'Visa'],
  ['51', '55', lengths(16), 'Mastercard'],
  ['2221', '2720', lengths(16), 'Mastercard'],
  ['34', '34', lengths(15), 'Amex'],
  ['37', '37', lengths(15), 'Amex'],
  ['3528', '3589', L16_19, 'JCB'],
  ['50', '50', lengths(13, 19), 'Maestro'],
  ['56', '69', lengths(13, 19), 'Maestro'],
  // Diners Club International 14-19 (IIN table), Discover's 17-18 and UnionPay co-branded range (IIN table).
  ['300', '305', lengths(14, 19), 'Diners'],
  ['3095', '3095', lengths(14, 19), 'Diners'],
  ['36', '36', lengths(14, 19), 'Diners'],
  ['38', '39', lengths(14, 19), 'Diners'],
  ['6011', '6011', L16_19, 'Discover'],
  ['622126', '622925', L16_19, 'Discover'],
  ['644', '649', L16_19, 'Discover'],
  ['65', '65', L16_19, 'Discover'],
  ['62', '62', L16_19, 'UnionPay'],
  ['81', '81', L16_19, 'UnionPay'],
  // RuPay (NPCI, India; IIN table): 60, 65, 81, 82, 508, 353, 356, 16 digits.
  ['60', '60', lengths(16), 'RuPay'],
  ['65', '65', lengths(16), 'RuPay'],
  ['81', '82', lengths(16), 'RuPay'],
  ['508', '508', lengths(16), 'RuPay'],
  ['353', '353', lengths(16), 'RuPay'],
  ['356', '356', lengths(16), 'RuPay'],
  // UATP (airlines; IIN table): 1, 15 digits.
  ['1', '1', lengths(15), 'UATP'],
  // BORICA (Bulgaria; IIN table): 2205, 16 digits.
  ['2205', '2205', lengths(16), 'BORICA'],
  // Dankort (Denmark; IIN table): 5019, 16 digits (Visa/Dankort 4571 is Visa's).
  ['5019', '5019', lengths(16), 'Dankort'],
  // Humo (Uzbekistan; IIN table): 9860, 16 digits. Uzcard (Uzbekistan; IIN table): 8600, 5614, 16 digits.
  ['9860', '9860', lengths(16), 'Humo'],
  ['8600', '8600', lengths(16), 'Uzcard'],
  ['5614', '5614', lengths(16), 'Uzcard'],
  // Napas (Vietnam; IIN table): 9704, 16 and 19 digits.
  ['9704', '9704', lengths(16) | lengths(19), 'Napas'],
  // Belkart (Belarus; IIN table): 9112, 16 digits. ArCa (Armenia; IIN table): 9051, 16 digits.
  ['9112', '9112', lengths(16), 'Belkart'],
  ['9051', '9051', lengths(16), 'ArCa'],
  // Prostir (Ukraine; IIN table): 9804, 16 digits.
  ['9804', '9804', lengths(16), 'Prostir'],
  // Troy (Turkey; IIN table, beside the library's 65 ranges): 9792, 16 digits.
  ['9792', '9792', lengths(16), 'Troy'],
  // Carnet (Mexico; IIN table): 286900, 502275, 606333, 627535, 636318, 636379, 639388, 639484, 639559,
  // 50633601-50633606, 58877274, 60462203-60462204, 588772; 16 digits.
  ['286900', '286900', lengths(16), 'Carnet'],
  ['502275', '502275', lengths(16), 'Carnet'],
  ['506336', '506336', lengths(16), 'Carnet'],
  ['588772', '588772', lengths(16), 'Carnet'],
  ['604622', '604622', lengths(16), 'Carnet'],
  ['606333', '606333', lengths(16), 'Carnet'],
  ['627535', '627535', lengths(16), 'Carnet'],
  ['636318', '636318', lengths(16), 'Carnet'],
  ['636379', '636379', lengths(16), 'Carnet'],
  ['639388', '639388', lengths(16), 'Carnet'],
  ['639484', '639484', lengths(16), 'Carnet'],
  ['639559', '639559', lengths(16), 'Carnet'],
  // GPN (Indonesia's national network; IIN table): 1946, 16, 18, 19 digits (its 50, 56, 58, 60-63 are Maestro's).
  ['1946', '1946', lengths(16) | lengths(18, 19), 'GPN'],
  // China T-Union (transit; IIN table): 31, 19 digits.
  ['31', '31', lengths(19), 'T-Union'],
  // InterPayment (IIN table): 636, 16-19; InstaPayment: 637-639, 16.
  ['636', '636', L16_19, 'InterPayment'],
  ['637', '639', lengths(16), 'InstaPayment'],
  // LankaPay (Sri Lanka; IIN table): 357111, 16 digits.
  ['357111', '357111', lengths(16), 'LankaPay'],
];

const BRAND_RANGES: Range[] = [...libraryRanges(), ...EXTRA_RANGES];

/**
 * The ranges as disjoint intervals over the first 6 digits, each with the lengths of every range covering it:
 * starts (ascending) and lengths, searched by bisection. One sweep over the ranges' ends, counting for each length
 * the ranges open there (a start at every load: comparing each point with each range cost ~15 ms of a start).
 */
function disjoint(ranges: readonly Range[]): { starts: Int32Array; bits: Int32Array } {
  // [position, lengths, +1 opens / -1 closes], in position order.
  const ends: [number, number, number][] = [];
  for (const [lo, hi, bits] of ranges) {
    ends.push([Number(lo.padEnd(6, '0')), bits, 1]);
    ends.push([Number(hi.padEnd(6, '9')) + 1, bits, -1]);
  }
  ends.sort((x, y) => x[0] - y[0]);
  const open = new Int32Array(MAX + 1);
  const starts: number[] = [];
  const bits: number[] = [];
  const mark = (at: number): void => {
    let b = 0;
    for (let n = 0; n <= MAX; n++) if ((open[n] as number) > 0) b |= 1 << n;
    if (bits.length > 0 && bits[bits.length - 1] === b) return;
    starts.push(at);
    bits.push(b);
  };
  mark(0);
  for (let i = 0; i < ends.length; ) {
    const at = (ends[i] as [number, number, number])[0];
    for (; i < ends.length && (ends[i] as [number, number, number])[0] === at; i++) {
      const [, l, step] = ends[i] as [number, number, number];
      for (let n = 0; n <= MAX; n++) if (l & (1 << n)) open[n] = (open[n] as number) + step;
    }
    if (at < 1_000_000) mark(at);
  }
  return { starts: Int32Array.from(starts), bits: Int32Array.from(bits) };
}

let TABLE = disjoint(BRAND_RANGES);

/**
 * For measuring what each scheme costs (test/bench/brand-cost.ts): the table without the named brands' ranges
 * (none: the whole table back).
 */
export function withoutBrands(names: ReadonlySet<string>): void {
  TABLE = disjoint(BRAND_RANGES.filter((r) => !names.has(r[3])));
}

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
  const { starts, bits } = TABLE;
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((starts[mid] as number) <= p6) lo = mid;
    else hi = mid - 1;
  }
  return ((bits[lo] as number) & (1 << n)) !== 0;
}

/**
 * Is a string of 12-19 ASCII digits a card number: a scheme's IIN at one of its lengths, and Luhn?
 * @example isCardNumber('4539' + '5787' + '6362' + '1486') // true (a Visa test number; written in groups so
 *   that no card number stands whole in the sources)
 * @example isCardNumber('9539' + '5787' + '6362' + '1483') // false (no scheme issues 9539), though it passes Luhn
 */
export function isCardNumber(digits: string): boolean {
  return (
    /^[0-9]{13,19}$/.test(digits) && brandAt(digits, 0, digits.length) && luhnAt(digits, 0, digits.length)
  );
}
