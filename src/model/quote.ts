// How a value is shown in a message: quoted, short, and never a card number.
import { maskCardNumbers } from '../mask.ts';

/** A value quoted for a message: short, and never a card number. */
export function quote(v: unknown): string {
  const s = typeof v === 'string' ? v : typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v);
  // Mask before cutting: a card number cut in two would no longer be recognised.
  const masked = maskCardNumbers(s);
  return JSON.stringify(masked.length > 40 ? `${masked.slice(0, 40)}…` : masked);
}
