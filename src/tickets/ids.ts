// Which of our transaction ids a ticket can name: the interface types a ticket's transactionIds as numbers, so an
// id we sent is given as that number when it is a safe integer written plainly, and refused otherwise.
import { SvcIngestError } from '../errors.ts';

/** The rule, in words, for messages and docs. */
export const TICKET_ID_RULE =
  "a ticket's transactionIds are numbers (the service's interface): an id we sent is given as that number when it is " +
  `a whole number written plainly (digits only, no sign or leading zero) up to ${Number.MAX_SAFE_INTEGER}; any other id cannot be named in a ticket`;

const PLAIN = /^(0|[1-9]\d*)$/;

/**
 * The number a ticket carries for one of our transaction ids, or null when the id has none.
 * @example ticketNumberOf('700123') // 700123
 * @example ticketNumberOf('tx-0001') // null
 */
export function ticketNumberOf(id: string): number | null {
  if (!PLAIN.test(id)) return null;
  const n = Number(id);
  return Number.isSafeInteger(n) ? n : null;
}

/**
 * Every id as its ticket number; the first id without one is refused (USAGE_INVALID), naming it and the rule.
 * @example ticketNumbers(['700123', '700124']) // [700123, 700124]
 */
export function ticketNumbers(ids: string[]): number[] {
  return ids.map((id) => {
    const n = ticketNumberOf(id);
    if (n === null) {
      throw new SvcIngestError(
        'USAGE_INVALID',
        `--transaction ${JSON.stringify(id)} cannot be named in a ticket: ${TICKET_ID_RULE}`,
        { field: '--transaction' },
      );
    }
    return n;
  });
}
