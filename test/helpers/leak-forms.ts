// The third pass's leak forms (issue 30): card numbers written with characters a person does not see, digits that
// are not decimal digits, separators of every kind and escapes; and a reader of text the way a person reads it,
// written apart from src/mask/ (regular expressions and String.normalize), so the two can disagree.

/** Characters a person does not see, each put between the printed groups (bidi marks and embeddings, …). */
export const UNSEEN_JOINERS: Record<string, string> = {
  LRM: '\u200e',
  RLM: '\u200f',
  ALM: '\u061c',
  LRE: '\u202a',
  RLE: '\u202b',
  PDF: '\u202c',
  LRO: '\u202d',
  RLO: '\u202e',
  LRI: '\u2066',
  RLI: '\u2067',
  FSI: '\u2068',
  PDI: '\u2069',
  'Mongolian FVS1': '\u180b',
  CGJ: '\u034f',
  VS16: '\ufe0f',
  'tag space': '\u{e0020}',
  'Hangul filler': '\u3164',
  'combining acute': '\u0301',
  NUL: '\u0000',
};

/** Separators that are not spaces or dashes: line breaks, escapes, the middle dot, U+FFFD of a Latin-1 0xA0. */
export const OTHER_SEPARATORS: Record<string, string> = {
  LS: '\u2028',
  PS: '\u2029',
  NEL: '\u0085',
  'line feed': '\n',
  '%20': '%20',
  '&nbsp;': '&nbsp;',
  '&#8203;': '&#8203;',
  'middle dot': '\u00b7',
  'U+FFFD': '\ufffd',
  '\\t escape': '\\t',
  comma: ',',
};

const SUPERSCRIPT = [
  '\u2070',
  '\u00b9',
  '\u00b2',
  '\u00b3',
  '\u2074',
  '\u2075',
  '\u2076',
  '\u2077',
  '\u2078',
  '\u2079',
];
/** Digits that are not decimal digits (\p{No}), each as a function of the digit. */
export const OTHER_DIGITS: Record<string, (d: number) => string> = {
  superscript: (d) => SUPERSCRIPT[d] as string,
  subscript: (d) => String.fromCodePoint(0x2080 + d),
  circled: (d) => (d === 0 ? '\u24ea' : String.fromCodePoint(0x2460 + d - 1)),
  dingbat: (d) => (d === 0 ? '\u24ff' : String.fromCodePoint(0x2776 + d - 1)),
  'sans-serif dingbat': (d) => (d === 0 ? '\u{1f10b}' : String.fromCodePoint(0x2780 + d - 1)),
  keycap: (d) => `${d}\ufe0f\u20e3`,
  'HTML entity': (d) => `&#${48 + d};`,
  'hex entity': (d) => `&#x${(48 + d).toString(16)};`,
  '\\u escape': (d) => `\\u00${(48 + d).toString(16)}`,
  'percent-encoded': (d) => `%${(48 + d).toString(16)}`,
  'UTF-16LE read as bytes': (d) => `${d}\u0000`,
};

/** The number in its printed groups (4-4-4-4, Amex 4-6-5, 14 digits 4-6-4) joined by `sep`. */
function groupedBy(pan: string, sep: string, digit: (d: number) => string = String): string {
  const lens = pan.length === 15 ? [4, 6, 5] : pan.length === 14 ? [4, 6, 4] : [];
  if (lens.length === 0) for (let left = pan.length; left > 0; left -= 4) lens.push(Math.min(4, left));
  const out: string[] = [];
  let at = 0;
  for (const len of lens) {
    out.push([...pan.slice(at, at + len)].map((c) => digit(Number(c))).join(''));
    at += len;
  }
  return out.join(sep);
}

/** Every new form of one card number, named: [form, text]. */
export function leakForms(pan: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const [name, j] of Object.entries(UNSEEN_JOINERS)) {
    out.push([`groups joined by ${name}`, groupedBy(pan, j)]);
  }
  out.push(['LRM between every digit', [...pan].join('\u200e')]);
  out.push(['bidi isolate around groups', groupedBy(pan, '\u2069 \u2066')]);
  for (const [name, sep] of Object.entries(OTHER_SEPARATORS))
    out.push([`groups joined by ${name}`, groupedBy(pan, sep)]);
  for (const [name, digit] of Object.entries(OTHER_DIGITS))
    out.push([`${name} digits`, groupedBy(pan, ' ', digit)]);
  // The fourth pass (issue 49): track data, separators people read as dashes, entities without `;`, an override.
  out.push(['track 1', `%B${pan}^DOE/JANE^27121010000000000000?`]);
  out.push(['track 2 without sentinels', `${pan}=27121010000000000`]);
  out.push(['track 1, its carets escaped', `%B${pan}%5EDOE%2FJANE%5E27121010000000000000?`]);
  out.push(['track 2, its = an entity', `;${pan}&#61;27121010000000000?`]);
  for (const [name, sep] of Object.entries({
    'prolonged-sound mark': '\u30fc',
    'half-width prolonged-sound mark': '\uff70',
    'modifier apostrophe': '\u02bc',
    'Hangul eu': '\u3161',
    'Latin click': '\u01c0',
    'Arabic tatweel': '\u0640',
    'Latin lateral click': '\u01c1',
  }))
    out.push([`groups joined by ${name}`, groupedBy(pan, sep)]);
  out.push(['entities without ;', [...pan].map((c) => `&#${48 + Number(c)}`).join('')]);
  out.push(['reversed behind RLO', `\u202e${[...pan].reverse().join('')}\u202c`]);
  out.push([
    'UTF-16LE line read as bytes',
    [...`card ${groupedBy(pan, ' ')}`].map((c) => `${c}\u0000`).join(''),
  ]);
  return out;
}

const DINGBAT_ZEROS: Array<[number, number, number]> = [
  [0x2776, 1, 9],
  [0x2780, 1, 9],
  [0x278a, 1, 9],
  [0x24f5, 1, 9],
  [0x24ff, 0, 1],
  [0x1f10b, 0, 2],
];

/** A character of DINGBAT_ZEROS' ranges. */
const DINGBAT_DIGIT = new RegExp(
  `[${DINGBAT_ZEROS.map(([first, , count]) => `\\u{${first.toString(16)}}-\\u{${(first + count - 1).toString(16)}}`).join('')}]`,
  'gu',
);

/**
 * A text as a person reads it: escapes decoded (`%xx`, HTML entities, `\uXXXX`, `\t`), NFKC, dingbat digits as
 * digits, unseen characters (format, default-ignorable, combining marks, controls) removed, and every run of what is
 * neither a letter, a digit nor the mask `*` left out — so the digits of a written number stand in a row.
 */
export function readAsPerson(text: string): string {
  let t = text
    .replace(/\\u([0-9a-fA-F]{4})/g, (_m, h: string) => String.fromCharCode(Number.parseInt(h, 16)))
    .replace(/\\[tnrfvb]/g, ' ')
    .replace(/&#x([0-9a-fA-F]{1,6});/g, (_m, h: string) => String.fromCodePoint(Number.parseInt(h, 16)))
    .replace(/&#([0-9]{1,7});/g, (_m, d: string) => String.fromCodePoint(Number(d)))
    .replace(/&[A-Za-z]+;/g, ' ')
    .replace(/%([0-9a-fA-F]{2})/g, (_m, h: string) => String.fromCharCode(Number.parseInt(h, 16)));
  t = t.replace(DINGBAT_DIGIT, (ch) => {
    const cp = ch.codePointAt(0) as number;
    const z = DINGBAT_ZEROS.find(([first, , count]) => cp >= first && cp < first + count) as number[];
    return String((z[1] as number) + cp - (z[0] as number));
  });
  t = t
    .normalize('NFKC')
    .replace(
      /[\p{Default_Ignorable_Code_Point}\p{Cf}\p{M}\u0000-\u0008\u000e-\u001b\u007f-\u0084\u0086-\u009f]/gu,
      '',
    );
  // Decimal digits of any script as ASCII.
  // (ASCII digits are themselves: not matched, so not walked back to their zero one regular expression at a time.)
  t = t.replace(/[^\P{Nd}0-9]/gu, (d) => {
    let cp = d.codePointAt(0) as number;
    let k = cp;
    while (/\p{Nd}/u.test(String.fromCodePoint(k - 1))) k--;
    cp = (cp - k) % 10;
    return String(cp);
  });
  // A mask character stays: digits on either side of a hidden stretch are not in a row. A single non-ASCII letter
  // between two digits (a tatweel, a click letter, a prolonged-sound mark) is read past, as a person reads the digits.
  return t
    .replace(/[^\p{L}0-9*]+/gu, '')
    .replace(/(?<=[0-9])[^\p{ASCII}](?=[0-9])/gu, (ch) => (/\p{L}/u.test(ch) ? '' : ch));
}
