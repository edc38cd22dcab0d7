// The card-number rule applied to an id, code or amount we send (src/mask/index.ts): the one rule of src/mask/rule.ts,
// plus what a field's declared shape says (a fixed width) and numbers written in scientific notation.
import { isCardNumber, MAX, MIN } from './brands.ts';
import { holdsCard } from './rule.ts';

/** Known fixed widths: a value of exactly this many ASCII digits in the field is that number, not a card number. */
export const FIXED_WIDTHS: Readonly<Record<string, number>> = {
  /** An acquirer reference number is 23 digits by definition. */
  acquirerReferenceNumber: 23,
  /** A card acceptor id (ISO 8583 field 42) is 15 characters. */
  paymentNetworkMerchantId: 15,
};

/**
 * Leading zeros from which a fixed-width value is a padded card number rather than the field's own number: a
 * 23-digit reference number starts with its format digit, so 4 zeros then a card number is a card number padded.
 */
const PADDING = 4;

/** Every ASCII digit? */
function allAsciiDigits(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return text.length > 0;
}

/** A number in scientific notation (`4.539578763621E+15`): mantissa digits, and the exponent. */
const SCIENTIFIC = /^[+-]?([0-9])[.,]([0-9]+)[eE]\+?([0-9]{1,2})$/;

/**
 * Does a value written in scientific notation stand for a card number? Its integer has 13-19 digits, starts with
 * a brand's IIN at that length, and its mantissa shows 12 digits or more of it (Luhn where it shows them all).
 */
function scientificCard(text: string): boolean {
  // Cheap first: an exponent needs an E.
  if (text.length > 32 || (text.indexOf('E') < 0 && text.indexOf('e') < 0)) return false;
  const m = SCIENTIFIC.exec(text.trim());
  if (m === null) return false;
  const shown = (m[1] as string) + (m[2] as string);
  const n = Number(m[3]) + 1;
  if (n < MIN || n > MAX || shown.length < 12 || shown.length > n) return false;
  if (shown.length === n) return isCardNumber(shown);
  for (let c = 0; c <= 9; c++) if (isCardNumber(shown.padEnd(n - 1, '0') + c)) return true;
  return false;
}

/**
 * Does an id or code value hold a card number (the rule of src/mask/rule.ts)? `width`: the field's fixed width
 * (FIXED_WIDTHS); a value of exactly that many ASCII digits is that number, unless it is 4 zeros or more then a
 * card number.
 * @example holdsCardNumberId('PAN16-01') // true
 * @example holdsCardNumberId('de6a90e9-8939-4827-8942-8fda87f2ec1f') // false
 */
export function holdsCardNumberId(text: string, width?: number): boolean {
  const n = text.length;
  if (n < MIN) return false;
  if (width !== undefined && n === width && allAsciiDigits(text)) {
    let zeros = 0;
    while (zeros < n && text.charCodeAt(zeros) === 48) zeros++;
    return zeros >= PADDING && n - zeros >= MIN && n - zeros <= MAX && isCardNumber(text.slice(zeros));
  }
  return holdsCard(text) || scientificCard(text);
}
