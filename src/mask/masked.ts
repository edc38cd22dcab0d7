// How a card number is masked (src/mask/rule.ts, track.ts): its first 6 and last 4 digits kept.

/** Digits kept at each end of a card number masked in place. */
export const KEEP_HEAD = 6;
export const KEEP_TAIL = 4;

/**
 * Mask a card number: first 6 and last 4 digits kept, the rest as `*` (separators dropped).
 * Shorter inputs keep less: under 13 digits only the last 4 stay, 4 digits or fewer become all `*`.
 * @example maskDigits('4111' + '1111' + '1111' + '1111') // '411111******1111' (the Visa test number, written in groups)
 */
export function maskDigits(d: string): string {
  const n = d.length;
  if (n <= 4) return '*'.repeat(n);
  if (n < 13) return '*'.repeat(n - 4) + d.slice(-4);
  return d.slice(0, KEEP_HEAD) + '*'.repeat(n - KEEP_HEAD - KEEP_TAIL) + d.slice(-KEEP_TAIL);
}
