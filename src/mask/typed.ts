// Text a person typed (a command-line option, a configuration value) that the tool sends or stores: refused when
// it holds a card number, before anything is sent — the option named, the number masked in the message.
import { SvcIngestError } from '../errors.ts';
import { containsCardNumber, maskExcerpt } from './index.ts';

/**
 * Throws a usage error (exit 1) naming the first option whose value holds a card number; values undefined are
 * skipped.
 * @example refuseTypedCardNumbers([['--description', 'card 4111 1111 1111 1111']]) // throws: --description holds a card number
 */
export function refuseTypedCardNumbers(
  fields: ReadonlyArray<readonly [string, string | undefined]>,
  code: 'USAGE_INVALID' | 'CONFIG_INVALID' = 'USAGE_INVALID',
): void {
  for (const [option, value] of fields) {
    if (value === undefined || !containsCardNumber(value)) continue;
    throw new SvcIngestError(
      code,
      `${option} holds a card number (${JSON.stringify(maskExcerpt(value, 80))}); nothing was sent: ` +
        'write it without the card number (its last 4 digits at most)',
      { field: option },
    );
  }
}
