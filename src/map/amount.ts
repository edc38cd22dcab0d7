// Amounts: a decimal or minor-unit value → a string of integer minor units, by exact string arithmetic.
import { quote } from '../model/quote.ts';
import { MapFail } from './rule-kit.ts';

/**
 * How an amount column is read.
 * @example { units: 'major', abs: true } // "-12.34" in USD → "1234"
 */
export interface AmountOptions {
  /** 'major' (default): a decimal in currency units; 'minor': already an integer of minor units. */
  units: 'major' | 'minor';
  /** Drop the sign (signed exports write purchases as negative numbers). */
  abs: boolean;
}

/** At most 15 digits of minor units (the validator's limit), so no amount overflows anything downstream. */
const MAX_DIGITS = 15;
const DECIMAL = /^([+-])?(\d{1,3}(?:,\d{3})+|\d*)(?:\.(\d*))?$/;
/** A leading currency sign, after an optional sign: `$`, `€`, `£`, `¥`, with or without a space after it. */
const CURRENCY_SIGN = /^([+-]?)[$€£¥]\s?/;

/**
 * Convert one amount. `exponent` is the currency's ISO 4217 minor-unit exponent (USD 2, JPY 0).
 * Extra decimals are allowed only when they are zeros ("1200.00" JPY is exact); anything else that
 * would lose precision, a non-number, a negative without `abs`, or more than 15 digits throws MapFail.
 * @example toMinorUnits('1,234.5', 2, { units: 'major', abs: false }) // '123450'
 */
export function toMinorUnits(value: unknown, exponent: number, opts: AmountOptions): string {
  let s: string;
  if (typeof value === 'string') s = value.trim();
  else if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new MapFail(`expected a finite number, got ${quote(value)}`);
    s = String(value);
  } else throw new MapFail(`expected a number, got ${quote(value)}`);
  let m = DECIMAL.exec(s);
  // "$12.34", "-$12.34", "€ 5": a currency sign before the digits is dropped (not checked against the currency).
  if (m === null && CURRENCY_SIGN.test(s)) m = DECIMAL.exec(s.replace(CURRENCY_SIGN, '$1'));
  if (m === null) throw new MapFail(`expected a decimal number, got ${quote(value)}`);
  const sign = m[1];
  let int = m[2] ?? '';
  const frac = m[3] ?? '';
  if (int === '' && frac === '') throw new MapFail(`expected a decimal number, got ${quote(value)}`);
  if (int.length > 3 && int.includes(',')) int = int.replaceAll(',', '');
  let digits: string;
  if (opts.units === 'minor') {
    if (frac.replaceAll('0', '') !== '') {
      throw new MapFail(`expected an integer number of minor units, got ${quote(value)}`);
    }
    digits = int;
  } else {
    if (frac.length > exponent && frac.slice(exponent).replaceAll('0', '') !== '') {
      throw new MapFail(`${quote(value)} has more decimals than the currency allows (${exponent})`);
    }
    digits = int + (frac.length >= exponent ? frac.slice(0, exponent) : frac.padEnd(exponent, '0'));
  }
  let i = 0;
  while (i < digits.length - 1 && digits.charCodeAt(i) === 48) i++;
  if (i > 0) digits = digits.slice(i);
  if (digits === '') digits = '0';
  if (digits.length > MAX_DIGITS) {
    throw new MapFail(`${quote(value)} is too large (more than ${MAX_DIGITS} digits of minor units)`);
  }
  if (sign === '-' && digits !== '0' && !opts.abs) {
    throw new MapFail(`negative amount ${quote(value)} (set "abs": true for signed exports)`);
  }
  return digits;
}
