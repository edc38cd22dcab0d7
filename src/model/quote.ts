// How a value is shown in a message: quoted, short, and never a card number.
import { maskCardNumbers, maskDeep } from '../mask/index.ts';

/** A value quoted for a message: short, and never a card number. */
export function quote(v: unknown): string {
  // Mask before quoting (JSON escapes a tab as `\t`) and before cutting (a card number cut in two would no longer
  // be recognised).
  const masked =
    typeof v === 'object' && v !== null ? JSON.stringify(maskDeep(v)) : maskCardNumbers(String(v));
  return JSON.stringify(masked.length > 40 ? `${masked.slice(0, 40)}…` : masked);
}
