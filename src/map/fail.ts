// The one failure a converter raises: a message about the value, caught per field by the compiled profile.
import { maskCardNumbers } from '../mask.ts';

/**
 * Thrown by a converter for a value it cannot convert. Not an Error: no stack is captured, so a
 * bad record costs little; it never escapes the mapping module.
 * @example throw new MapFail('expected a decimal amount, got "abc"')
 */
export class MapFail {
  readonly message: string;
  constructor(message: string) {
    this.message = message;
  }
}

/** A value quoted for a message: short, and never a card number. */
export function quote(v: unknown): string {
  const s = typeof v === 'string' ? v : typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v);
  // Mask before cutting: a card number cut in two would no longer be recognised.
  const masked = maskCardNumbers(s);
  return JSON.stringify(masked.length > 40 ? `${masked.slice(0, 40)}…` : masked);
}
