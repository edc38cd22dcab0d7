// Test card numbers and a scanner for them written apart from src/mask.ts, so the two can disagree.

/** Append the Luhn check digit to a string of digits. */
export function withCheckDigit(body: string): string {
  for (let c = 0; c <= 9; c++) if (luhn(body + c)) return body + c;
  throw new Error('unreachable');
}

/** Luhn, written again here on purpose (not imported from src/mask.ts). */
export function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return digits.length > 0 && sum % 10 === 0;
}

/** The networks' published test numbers, 13 to 19 digits. */
export const TEST_PANS = {
  visa: '4111111111111111',
  visa2: '4012888888881881',
  visa13: '4222222222222',
  mastercard: '5500005555555559',
  mastercard2: '5105105105105100',
  amex: '378282246310005',
  discover: '6011111111111117',
  jcb: '3530111333300000',
  diners: '30569309025904',
  unionpay19: withCheckDigit('621234567890123456'),
  visa19: withCheckDigit('411111111111111111'),
} as const;

/**
 * Every Luhn-valid 13-19-digit window of every digit run (digits joined by spaces, dashes, dots or
 * slashes) in a text, as the red team's capture server reads traffic. Returns the windows found.
 */
export function luhnWindows(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(/\d(?:[ ./-]*\d)*/g)) {
    const d = m[0].replace(/\D/g, '');
    for (let a = 0; a + 13 <= d.length; a++)
      for (let len = 13; len <= 19 && a + len <= d.length; len++) {
        const w = d.slice(a, a + len);
        if (luhn(w)) found.push(w);
      }
  }
  return found;
}

/** The test card numbers whose digits appear in a text once separators are taken out. */
export function pansIn(text: string, pans: Iterable<string> = Object.values(TEST_PANS)): string[] {
  const digits = text.replace(/[ ./-]/g, '');
  return [...pans].filter((p) => digits.includes(p));
}
