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
import { luhnValid } from './brands.ts';
import { maskDigits } from './masked.ts';

const TRACK1 =
  /(?<![0-9])(%?[A-Za-z]?)([0-9](?: ?[0-9]){11,18})\^([^^\r\n?]{0,26})\^([^?\s"'<>,;|]{0,79})(\??)/g;
const TRACK2 = /(?<![0-9])(;?)([0-9]{12,19})=([0-9=]{0,40})(\??)/g;
const SEVEN_DIGITS = /^[0-9]{7}/;

/** The cheap pre-check: a track needs `^` (track 1) or `=` (track 2). */
function mayHoldTrack(text: string): boolean {
  return text.length >= 14 && (text.indexOf('^') >= 0 || text.indexOf('=') >= 0);
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

function replaceTracks(text: string, re: RegExp, masked: (m: RegExpExecArray) => string | null): string {
  re.lastIndex = 0;
  let out = '';
  let last = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    const mask = masked(m);
    if (mask === null) {
      // Not a track: look again from the next character (a later start may be one).
      re.lastIndex = m.index + 1;
      continue;
    }
    out += text.slice(last, m.index) + mask;
    last = m.index + m[0].length;
  }
  return last === 0 ? text : out + text.slice(last);
}

/**
 * Every track of a text masked whole; the text itself when it holds none.
 * @example maskTracks('swipe ;' + '4111' + '1111' + '1111' + '1111=2712101000?') // 'swipe ;411111******1111=**********?'
 */
export function maskTracks(text: string): string {
  if (!mayHoldTrack(text)) return text;
  let out = text.indexOf('^') >= 0 ? replaceTracks(text, TRACK1, track1) : text;
  if (out.indexOf('=') >= 0) out = replaceTracks(out, TRACK2, track2);
  return out;
}

/** Does the text hold track data? */
export function holdsTrack(text: string): boolean {
  return mayHoldTrack(text) && maskTracks(text) !== text;
}
