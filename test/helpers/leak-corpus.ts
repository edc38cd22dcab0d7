// The leak corpus of the card-number rule: the brands' public test card numbers, each written the ways an export,
// a spreadsheet or an attacker writes them (test/faults/leak-corpus.test.ts drives them through every path).
import { leakForms } from './leak-forms.ts';
import { withCheckDigit } from './pans.ts';

/** The brands' published test numbers (Stripe, Adyen, Braintree documentation), one or two a brand. */
export const LEAK_PANS: Record<string, string> = {
  visa: '4539578763621486',
  visa2: '4012888888881881',
  visa13: '4222222222222',
  mastercard: '5555555555554444',
  mastercard2series: '2223003122003222',
  amex: '378282246310005',
  discover: '6011000990139424',
  jcb: '3566002020360505',
  diners: '36227206271667',
  unionpay: '6200000000000005',
  unionpay19: '6205500000000000004',
  maestro: '6759649826438453',
  rupay: withCheckDigit('608326000000000'),
  // National schemes (issue 49): numbers built on their IINs, Luhn-valid.
  mir: withCheckDigit('220038174629105'),
  napas: withCheckDigit('970436158207341'),
  uatp: withCheckDigit('13520594817263'),
};

/** How a brand's cards are printed: group lengths. */
function grouping(n: number, pan: string): number[] {
  if (n === 15 && /^3[47]/.test(pan)) return [4, 6, 5];
  if (n === 14) return [4, 6, 4];
  const g: number[] = [];
  for (let left = n; left > 0; left -= 4) g.push(Math.min(4, left));
  return g;
}

/** The number in its printed groups joined by a separator. */
export function grouped(pan: string, sep: string): string {
  const out: string[] = [];
  let at = 0;
  for (const len of grouping(pan.length, pan)) {
    out.push(pan.slice(at, at + len));
    at += len;
  }
  return out.join(sep);
}

/** Every Unicode space separator (\p{Zs}), tab, and the zero-width characters. */
export const UNICODE_SEPARATORS = [
  '\u00a0',
  '\u1680',
  '\u2000',
  '\u2001',
  '\u2002',
  '\u2003',
  '\u2004',
  '\u2005',
  '\u2006',
  '\u2007',
  '\u2008',
  '\u2009',
  '\u200a',
  '\u202f',
  '\u205f',
  '\u3000',
  '\t',
  '\u200b',
  '\u200c',
  '\u200d',
  '\u2060',
  '\ufeff',
];

/** Digits of another script: full-width (U+FF10), Arabic-Indic (U+0660), Devanagari (U+0966), math bold (U+1D7CE). */
export function inScript(text: string, zero: number): string {
  return text.replace(/\d/g, (d) => String.fromCodePoint(zero + Number(d)));
}

/**
 * One card number written at least 15 ways (here 35): plain; in its printed groups with space, `-`, `.`, `/`, each
 * Unicode space separator, tab and zero-width character; in full-width and other digits; inside a word and a
 * sentence. (A maxLength boundary, two columns joined by a template, a JSON key, a file name and keys named like
 * our own ids are contexts the test puts each of these in.)
 */
export function writings(pan: string): string[] {
  return [
    pan,
    ...[' ', '-', '.', '/', ...UNICODE_SEPARATORS].map((sep) => grouped(pan, sep)),
    inScript(pan, 0xff10),
    inScript(grouped(pan, '\u3000'), 0xff10),
    inScript(pan, 0x660),
    inScript(grouped(pan, ' '), 0x966),
    inScript(pan, 0x1d7ce),
    `REF${pan}X`,
    `paid with card ${grouped(pan, ' ')} today`,
    ...leakForms(pan).map(([, text]) => text),
  ];
}

/**
 * The writings the end-to-end corpus takes of the k-th number: every writing of the first two passes, and a third
 * of the third pass's forms, a different third for each k — so across the 13 numbers every form goes through every
 * path, at half the lines (test/mask/mask.test.ts takes every writing of every number).
 */
export function writingsFor(pan: string, k: number): string[] {
  const all = writings(pan);
  const old = all.length - leakForms(pan).length;
  return all.filter((_, i) => i < old || (i - old + k) % 3 === 0);
}
