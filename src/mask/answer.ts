// What the service or a webhook sends back, read before anything prints or stores it (docs/security.md): JSON numbers
// of 13 digits or more are read as their source text (Node 22+: a reviver's `context.source`), never rounded to a
// double that keeps 16 of a card number's digits; then every card number in the value (strings, keys, those numbers)
// is masked by the one rule (src/mask/index.ts).
import { maskCardNumbers, maskDeep, maskExcerpt } from './index.ts';

/** Thirteen digits in a row: a number that may be a card number, or lose digits to a double. */
const LONG_NUMBER = /[0-9]{13}/;

/** A JSON number of 13 digits or more as its source text, lossless. */
function losslessNumber(_key: string, value: unknown, context?: { source?: string }): unknown {
  return typeof value === 'number' && context?.source !== undefined && LONG_NUMBER.test(context.source)
    ? context.source
    : value;
}

/** JSON.parse, with numbers of 13 digits or more as their text (throws as JSON.parse does). */
export function parseLossless(text: string): unknown {
  return LONG_NUMBER.test(text) ? JSON.parse(text, losslessNumber as never) : JSON.parse(text);
}

/**
 * An answer's JSON read losslessly, every card number in it masked (throws as JSON.parse does).
 * @example parseGuarded('{"transactionId": ' + '4111' + '1111' + '1111' + '1111}') // { transactionId: '411111******1111' } (written in groups: no card number stands whole in the sources)
 */
export function parseGuarded(text: string): unknown {
  return maskDeep(parseLossless(text));
}

/**
 * The text of a service's answer as the client keeps it: nothing for an empty body, `{unparsable}` (its first 200
 * characters, masked first) for one that is no JSON, else parseGuarded's value. `guard: false` for startSession's token
 * only (a secret, never printed).
 */
export function readAnswer(text: string, guard = true): unknown {
  if (text.trim() === '') return undefined;
  let parsed: unknown;
  try {
    parsed = parseLossless(text);
  } catch {
    // Masked before it is cut: a card number cut in two would no longer be recognised.
    return { unparsable: guard ? maskExcerpt(text, 200) : text.slice(0, 200) };
  }
  return guard ? maskDeep(parsed) : parsed;
}

/** A header the service answered (its request id), masked by the card-number rule. */
export function guardedHeader(value: string | null): string | null {
  return value === null ? null : maskCardNumbers(value);
}
