// Declared context for the card-number rule (src/mask/index.ts): a profile declares an id field the bank's own identifier, which never
// holds a card number (`ownNumericIds`). Declared by name alone, its all-digit values are the bank's; declared with
// a shape (`prefix`, `pattern`, `width`), every value of that shape is, letters and separators included
// (`ORD-` + 16 digits, a branch and account number). A value of another shape is checked as any id.
import { compilePattern } from './pattern.ts';

/** One declaration: a field name alone, or the field and the shape of its values. */
export interface OwnIdShape {
  field: string;
  /** The values start with it. */
  prefix?: string;
  /** The values match it (a whole-value regular expression, RE2 syntax). */
  pattern?: string;
  /** The values are exactly this many characters. */
  width?: number;
}

const ASCII_DIGITS = /^[0-9]+$/;

/**
 * Does a value have the declared shape? By name alone: all ASCII digits. With a shape: every part given holds.
 * @example ownIdMatcher({ field: 'transactionId', prefix: 'ORD-', width: 20 })('ORD-' + '4111' + '1111' + '1111' + '1111') // true (a card-shaped id of the declared shape)
 */
export function ownIdMatcher(d: OwnIdShape): (v: string) => boolean {
  const { prefix, pattern, width } = d;
  if (prefix === undefined && pattern === undefined && width === undefined)
    return (v) => ASCII_DIGITS.test(v);
  // Matched whole, in linear time (RE2).
  const re = pattern === undefined ? undefined : compilePattern(`^(?:${pattern})$`, '');
  return (v) =>
    (prefix === undefined || v.startsWith(prefix)) &&
    (width === undefined || v.length === width) &&
    (re === undefined || re.test(v));
}

/**
 * How a declaration is shown (run start, summary, `mapping check`).
 * @example describeOwnId({ field: 'transactionId', prefix: 'ORD-' }) // 'transactionId (prefix "ORD-")'
 */
export function describeOwnId(d: OwnIdShape): string {
  const parts: string[] = [];
  if (d.prefix !== undefined) parts.push(`prefix ${JSON.stringify(d.prefix)}`);
  if (d.pattern !== undefined) parts.push(`pattern ${JSON.stringify(d.pattern)}`);
  if (d.width !== undefined) parts.push(`width ${d.width}`);
  return parts.length === 0 ? d.field : `${d.field} (${parts.join(', ')})`;
}
