// The normalised view of a text the card-number rule matches on (src/mask/rule.ts), with each unit's place in the
// original text, so a mask found in the view is applied to the text as written.
//
// A unit is one character as a person reads it: a character (a surrogate pair is one), or an escape standing for
// one — `%xx` (UTF-8 percent-encoding, several `%xx` for one character), an HTML entity (`&#52;`, `&#x34;`,
// `&nbsp;`, `&#8203;`), a backslash escape (`\u0034`, `\x34`, `\t`, `\n` …). Each is read as the character it
// stands for (src/mask/chars.ts): a digit as that digit, a character a person does not see is left out, a run of
// separators (and any named entity) is one separator unit, a run of letters one letter unit.
import { BMP, classOfCodePoint, DIGIT, IGNORE, LETTER, SEP } from './chars.ts';

/** The view, in module scratch (no allocation per call): its length, and per unit its class, start and end. */
export const view = {
  length: 0,
  cls: new Uint8Array(256),
  from: new Int32Array(256),
  to: new Int32Array(256),
};

/** Named entities a person does not see; any other name is a separator. */
const UNSEEN_ENTITIES = new Set(['shy', 'zwj', 'zwnj', 'lrm', 'rlm', 'nobreak', 'invisibletimes']);

function hex(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  const l = c | 0x20;
  return l >= 97 && l <= 102 ? l - 87 : -1;
}

/** Decoded: the code point an escape at text[i] stands for (-1: none) and its length, set by decodeAt. */
let decodedCp = -1;
let decodedLen = 0;

/** Reads `count` hex digits at text[i] (-1 when one is not). */
function hexAt(text: string, i: number, count: number): number {
  if (i + count > text.length) return -1;
  let v = 0;
  for (let k = 0; k < count; k++) {
    const h = hex(text.charCodeAt(i + k));
    if (h < 0) return -1;
    v = v * 16 + h;
  }
  return v;
}

/**
 * `%xx` (one or more forming a UTF-8 character) at text[i], decoded only where it is a valid escape of a
 * URL-encoded value (a whole UTF-8 character): `%B4` of track data (`%B4111…`) is no escape, and its digit stays a
 * digit. The rule also judges the text with no escape decoded (buildView's `decode`), so an escape that is valid
 * by chance (`%41111…`, `%34` + a card number) cannot eat a card number's digit either.
 */
function percentAt(text: string, i: number): void {
  const b0 = hexAt(text, i + 1, 2);
  if (b0 < 0) return;
  const more = b0 < 0x80 ? 0 : b0 >= 0xf0 ? 3 : b0 >= 0xe0 ? 2 : b0 >= 0xc2 ? 1 : -1;
  if (more < 0 || b0 > 0xf4) return;
  let cp = more === 0 ? b0 : b0 & (0x3f >> more);
  for (let k = 1; k <= more; k++) {
    const at = i + 3 * k;
    const b = text.charCodeAt(at) === 37 ? hexAt(text, at + 1, 2) : -1;
    if (b < 0x80 || b > 0xbf) return;
    cp = cp * 64 + (b & 0x3f);
  }
  if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return;
  setDecoded(cp, 3 * (more + 1));
}

function setDecoded(cp: number, len: number): void {
  decodedCp = cp;
  decodedLen = len;
}

/** A numeric entity without its `;` (`&#52`, `&#x34`), as HTML5 reads one: every digit that follows is its. */
const NUMERIC_OPEN = /&#(?:([0-9]+)|[xX]([0-9a-fA-F]+))/y;

/** An HTML entity at text[i]: numeric (the character), named (a separator or unseen: -2 / -3). */
function entityAt(text: string, i: number): void {
  if (text.charCodeAt(i + 1) === 35 /* # */) {
    NUMERIC_OPEN.lastIndex = i;
    const m = NUMERIC_OPEN.exec(text);
    if (m !== null && text.charCodeAt(i + m[0].length) !== 59 /* ; */) {
      const digits = (m[1] ?? m[2]) as string;
      const cp = digits.length > 8 ? -1 : Number.parseInt(digits, m[1] === undefined ? 16 : 10);
      setDecoded(cp < 0 || cp > 0x10ffff ? 0xfffd : cp, m[0].length);
      return;
    }
  }
  // The `;` within 12 characters (looked for there only: a text of many `&` stays linear).
  let end = -1;
  for (let k = i + 2; k <= i + 12 && k < text.length; k++)
    if (text.charCodeAt(k) === 59) {
      end = k;
      break;
    }
  if (end < 0) return;
  const body = text.slice(i + 1, end);
  let cp = -1;
  if (/^#[0-9]{1,7}$/.test(body)) cp = Number(body.slice(1));
  else if (/^#[xX][0-9a-fA-F]{1,6}$/.test(body)) cp = Number.parseInt(body.slice(2), 16);
  else if (/^[A-Za-z][A-Za-z0-9]{1,10}$/.test(body)) {
    setDecoded(UNSEEN_ENTITIES.has(body.toLowerCase()) ? -3 : -2, end - i + 1);
    return;
  } else return;
  setDecoded(cp > 0x10ffff ? 0xfffd : cp, end - i + 1);
}

/** A backslash escape at text[i]. */
function backslashAt(text: string, i: number): void {
  const c = text.charCodeAt(i + 1);
  if (c === 117 /* u */) {
    if (text.charCodeAt(i + 2) === 123 /* { */) {
      // The `}` within 10 characters (looked for there only: linear in a text of many `\u{`).
      const end = text.slice(i + 3, i + 11).indexOf('}') + i + 3;
      const cp = end >= i + 3 ? hexAt(text, i + 3, end - i - 3) : -1;
      if (cp >= 0) setDecoded(cp > 0x10ffff ? 0xfffd : cp, end - i + 1);
      return;
    }
    const hi = hexAt(text, i + 2, 4);
    if (hi < 0) return;
    // A surrogate pair written as two escapes.
    if (hi >= 0xd800 && hi <= 0xdbff && text.charCodeAt(i + 6) === 92 && text.charCodeAt(i + 7) === 117) {
      const lo = hexAt(text, i + 8, 4);
      if (lo >= 0xdc00 && lo <= 0xdfff) {
        setDecoded((hi - 0xd800) * 0x400 + (lo - 0xdc00) + 0x10000, 12);
        return;
      }
    }
    setDecoded(hi, 6);
    return;
  }
  if (c === 120 /* x */) {
    const v = hexAt(text, i + 2, 2);
    if (v >= 0) setDecoded(v, 4);
    return;
  }
  // \t \n \r \f \v \b \0 \/ \\ …: a separator (\0 unseen).
  if (c === 48) {
    setDecoded(0, 2);
    return;
  }
  if (c === 116 || c === 110 || c === 114 || c === 102 || c === 118 || c === 98) {
    setDecoded(32, 2);
    return;
  }
}

function grow(need: number): void {
  if (need <= view.cls.length) return;
  const size = Math.max(need, view.cls.length * 2);
  view.cls = new Uint8Array(size);
  view.from = new Int32Array(size);
  view.to = new Int32Array(size);
}

/**
 * Builds the view of `text` into the module scratch `view`: unseen characters
 * left out, runs of separators and runs of letters one unit each, every digit one unit. `decode`: escapes decoded
 * (else `%`, `&` and `\\` are separators like any other and what follows them is read as written: the rule judges
 * both views, so no escape read either way eats a card number's digit).
 */
export function buildView(text: string, decode = true): void {
  const n = text.length;
  grow(n + 1);
  const { cls, from, to } = view;
  let len = 0;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    let k: number;
    let w = 1;
    if (c < 128 && c !== 37 && c !== 38 && c !== 92) k = BMP[c] as number;
    else if (c < 128) {
      decodedCp = -1;
      // Not decoded: the text as written, an escape's characters what they are.
      if (decode && c === 37) percentAt(text, i);
      else if (decode && c === 38) entityAt(text, i);
      else if (decode) backslashAt(text, i);
      if (decodedCp === -1) k = SEP;
      else {
        w = decodedLen;
        k = decodedCp === -2 ? SEP : decodedCp === -3 ? IGNORE : classOfCodePoint(decodedCp);
      }
    } else if (c >= 0xd800 && c <= 0xdbff && i + 1 < n) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        k = classOfCodePoint((c - 0xd800) * 0x400 + (d - 0xdc00) + 0x10000);
        w = 2;
      } else k = SEP;
    } else k = c >= 0xd800 && c <= 0xdfff ? SEP : classOfCodePoint(c);
    if (k === IGNORE) {
      i += w;
      continue;
    }
    // Runs of separators, and runs of letters, are one unit each.
    if (k < DIGIT && len > 0 && cls[len - 1] === k && (k === SEP || k === LETTER)) {
      to[len - 1] = i + w;
    } else {
      cls[len] = k;
      from[len] = i;
      to[len] = i + w;
      len++;
    }
    i += w;
  }
  view.length = len;
}

/** Named entities of a track's punctuation, decoded by decodeEscapes (any other name is left as written). */
const TRACK_ENTITIES = new Map([
  ['hat', 0x5e],
  ['equals', 0x3d],
  ['quest', 0x3f],
  ['percnt', 0x25],
  ['semi', 0x3b],
]);

/**
 * The text with its escapes decoded as buildView reads them (`%xx` of a URL-encoded value, numeric entities with or
 * without `;`, backslash escapes; of the named entities, those of a track's punctuation), and `at`: for each code
 * unit of the result, where it starts in the text (one more entry: the text's length), so a span found in the
 * decoded text is the span `at[start]`…`at[end]` of the text as written.
 */
export function decodeEscapes(text: string): { decoded: string; at: number[] } {
  let decoded = '';
  const at: number[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    decodedCp = -1;
    if (c === 37) percentAt(text, i);
    else if (c === 38) entityAt(text, i);
    else if (c === 92) backslashAt(text, i);
    if (decodedCp === -2 || decodedCp === -3) {
      const name = text.slice(i + 1, i + decodedLen - 1).toLowerCase();
      decodedCp = TRACK_ENTITIES.get(name) ?? -1;
    }
    const ch = decodedCp >= 0 ? String.fromCodePoint(decodedCp) : (text[i] as string);
    const w = decodedCp >= 0 ? decodedLen : 1;
    for (let k = 0; k < ch.length; k++) at.push(i);
    decoded += ch;
    i += w;
  }
  at.push(text.length);
  return { decoded, at };
}
