// Card-number masking: keeps at most the first 6 and last 4 digits of anything that looks like a PAN.

/** Luhn check of a string of ASCII digits (no separators). */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return false;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return digits.length > 0 && sum % 10 === 0;
}

/**
 * Mask a card number: first 6 and last 4 digits kept, the rest as `*` (separators dropped).
 * Shorter inputs keep less: under 13 digits only the last 4 stay, 4 digits or fewer become all `*`.
 * @example maskPan(testPan) // '411111******1111' for the Visa test number 4111 1111 1111 1111
 */
export function maskPan(digits: string): string {
  const d = digits.replace(/[^0-9]/g, '');
  const n = d.length;
  if (n <= 4) return '*'.repeat(n);
  if (n < 13) return '*'.repeat(n - 4) + d.slice(-4);
  return d.slice(0, 6) + '*'.repeat(n - 10) + d.slice(-4);
}

// A maximal run of digits, optionally with single spaces or dashes between them.
const DIGIT_RUN = /\d(?:[ -]?\d)*/g;
// Cheap pre-check: without 13 digits in the text there is nothing to mask.
const THIRTEEN_DIGITS = /(?:\d[ -]?){13}/;

/**
 * Mask every card number inside free text: a maximal run of 13-19 digits (spaces or dashes allowed
 * between digits) that passes Luhn. Longer or shorter runs (ARNs, dates, phone numbers) stay.
 * @example maskCardNumbers('card 4111 1111 1111 1111 declined') // 'card 411111******1111 declined'
 */
export function maskCardNumbers(text: string): string {
  if (text.length < 13 || !THIRTEEN_DIGITS.test(text)) return text;
  return text.replace(DIGIT_RUN, (run) => {
    const digits = run.length > 13 && /[ -]/.test(run) ? run.replace(/[ -]/g, '') : run;
    const n = digits.length;
    if (n < 13 || n > 19 || !luhnValid(digits)) return run;
    return maskPan(digits);
  });
}

/**
 * True when the text holds a card number as maskCardNumbers would find it.
 * @example containsCardNumber('id 5500 0055 5555 5559') // true
 */
export function containsCardNumber(text: string): boolean {
  return maskCardNumbers(text) !== text;
}

/**
 * Deep copy of a JSON-like value with every card number masked: strings via maskCardNumbers,
 * integers of 13-19 digits passing Luhn turned into masked strings.
 * @example maskDeep({ note: 'pan 4111-1111-1111-1111' }) // { note: 'pan 411111******1111' }
 */
export function maskDeep(value: unknown): unknown {
  if (typeof value === 'string') return maskCardNumbers(value);
  if (typeof value === 'number') {
    if (Number.isInteger(value) && Math.abs(value) >= 1e12) {
      const s = String(Math.abs(value));
      // An unsafe integer has lost digits already: mask it rather than guess.
      if (s.length >= 13 && s.length <= 19 && (!Number.isSafeInteger(value) || luhnValid(s)))
        return maskPan(s);
    }
    return value;
  }
  if (typeof value === 'bigint') return maskDeep(value.toString());
  if (Array.isArray(value)) return value.map(maskDeep);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = maskDeep(v);
    return out;
  }
  return value;
}
