// Magnetic-stripe track data (ISO/IEC 7813) in a text (src/mask/rule.ts): card data whole — the card number, the
// cardholder's name, the expiry, the service code and the discretionary data — which PCI DSS forbids keeping after
// authorisation. Found with or without its sentinels, in any field or free text, and masked whole (the card number
// as everywhere, every other character of the track as `*`) or refused whole in an id.
//
// - Track 1: `%B` + card number (12-19 digits, spaces allowed between them) + `^` + name (up to 26 characters) +
//   `^` + expiry, service code, discretionary data + `?`. The start sentinel `%` and the format code are optional.
// - Track 2: `;` + card number (12-19 digits) + `=` + expiry, service code, discretionary data (digits) + `?`.
//   Without either sentinel, `=` must be followed by an expiry and a service code (7 digits or more).
// The card number must pass Luhn; its brand is not required (the track's layout is the evidence).
// A track whose punctuation is itself escaped (`%5E`, `&#94;`, `%3D`, `\u003d` …) is found in the text with its
// escapes decoded (src/mask/view.ts) and masked whole at the same place in the text as written.
import { luhnValid } from './brands.ts';
import { maskDigits } from './masked.ts';
import { decodeEscapes } from './view.ts';

const TRACK1 =
  /(?<![0-9])(%?[A-Za-z]?)([0-9](?: ?[0-9]){11,18})\^([^^\r\n?]{0,26})\^([^?\s"'<>,;|]{0,79})(\??)/g;
const TRACK2 = /(?<![0-9])(;?)([0-9]{12,19})=([0-9=]{0,40})(\??)/g;
const SEVEN_DIGITS = /^[0-9]{7}/;

/** An escaped `^` or `=`: percent-encoded, a numeric or named entity, a backslash escape. */
const ESCAPED_MARK =
  /%(?:5e|3d)|&#(?:0*(?:94|61)(?![0-9])|x0*(?:5e|3d)(?![0-9a-f]))|\\(?:u00|x|u\{0*)(?:5e|3d)|&(?:hat|equals);/i;

/** Might the text hold an escaped track (an escape's first character, then an escaped `^` or `=`)? */
function mayHoldEscapedTrack(text: string): boolean {
  return (
    (text.indexOf('%') >= 0 || text.indexOf('&') >= 0 || text.indexOf('\\') >= 0) && ESCAPED_MARK.test(text)
  );
}

/** The cheap pre-check: a track needs `^` (track 1) or `=` (track 2), as written or escaped. */
function mayHoldTrack(text: string): boolean {
  return text.length >= 14 && (text.indexOf('^') >= 0 || text.indexOf('=') >= 0 || mayHoldEscapedTrack(text));
}

function track1(m: RegExpExecArray): string | null {
  const pan = (m[2] as string).replace(/ /g, '');
  if (!luhnValid(pan)) return null;
  return `${m[1]}${maskDigits(pan)}^${'*'.repeat((m[3] as string).length)}^${'*'.repeat((m[4] as string).length)}${m[5]}`;
}

function track2(m: RegExpExecArray): string | null {
  const pan = m[2] as string;
  const rest = m[3] as string;
  if (m[1] === '' && m[4] === '' && !SEVEN_DIGITS.test(rest)) return null;
  if (!luhnValid(pan)) return null;
  return `${m[1]}${maskDigits(pan)}=${'*'.repeat(rest.length)}${m[4]}`;
}

/** A track found: where it starts and ends in the text it was found in, and its masked form. */
type Found = { start: number; end: number; mask: string };

function findTracks(
  text: string,
  re: RegExp,
  masked: (m: RegExpExecArray) => string | null,
  found: Found[],
): void {
  re.lastIndex = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    const mask = masked(m);
    if (mask === null) {
      // Not a track: look again from the next character (a later start may be one).
      re.lastIndex = m.index + 1;
      continue;
    }
    found.push({ start: m.index, end: m.index + m[0].length, mask });
  }
}

/** The text with each span `at[start]`…`at[end]` (in order, not overlapping) replaced by its mask. */
function replaceFound(text: string, found: Found[], at?: number[]): string {
  let out = '';
  let last = 0;
  for (const f of found) {
    const start = at === undefined ? f.start : (at[f.start] as number);
    if (start < last) continue;
    out += text.slice(last, start) + f.mask;
    last = at === undefined ? f.end : (at[f.end] as number);
  }
  return last === 0 ? text : out + text.slice(last);
}

/** The tracks of a text as written, masked. */
function maskWritten(text: string): string {
  const found: Found[] = [];
  if (text.indexOf('^') >= 0) findTracks(text, TRACK1, track1, found);
  let out = replaceFound(text, found);
  if (out.indexOf('=') >= 0) {
    found.length = 0;
    findTracks(out, TRACK2, track2, found);
    out = replaceFound(out, found);
  }
  return out;
}

/** The tracks found in the text with its escapes decoded, masked whole where they stand in the text as written. */
function maskEscaped(text: string): string {
  const { decoded, at } = decodeEscapes(text);
  const found: Found[] = [];
  findTracks(decoded, TRACK1, track1, found);
  findTracks(decoded, TRACK2, track2, found);
  found.sort((a, b) => a.start - b.start);
  return replaceFound(text, found, at);
}

/**
 * Every track of a text masked whole; the text itself when it holds none.
 * @example maskTracks('swipe ;' + '4111' + '1111' + '1111' + '1111=2712101000?') // 'swipe ;411111******1111=**********?'
 */
export function maskTracks(text: string): string {
  if (!mayHoldTrack(text)) return text;
  const out = maskWritten(text);
  return mayHoldEscapedTrack(out) ? maskEscaped(out) : out;
}

/** Does the text hold track data? */
export function holdsTrack(text: string): boolean {
  return mayHoldTrack(text) && maskTracks(text) !== text;
}
