// The warnings of a profile that is probably wrong without a reject to show it: local times read in one zone while
// merchants span several, ids that repeat, amounts scaled by a currency other than the record's, posting before
// transaction, a type that contradicts its amount's sign. Fed one mapped record at a time (mapping check, send).
import { currencyExponent } from '../model/codes.ts';
import type { TransactionNotification } from '../model/transaction.ts';
import { locationZone, oneZone } from './location-zone.ts';
import type { Getter } from './path.ts';
import { compileGetter } from './path.ts';
import { TIME_READS } from './timestamp.ts';
import type { CompiledProfile } from './types.ts';

/** A collector of one run's records: `add` each mapped one, then `warnings()`. */
export interface SilentErrors {
  /** A record mapped and valid: its transaction, and the source record it came from (for the amount's sign). */
  add(tx: TransactionNotification, source?: Record<string, unknown>): void;
  /** The warnings, one line each (none: the profile gave no sign of being wrong). */
  warnings(): string[];
}

const top = (m: Map<string, number>, n = 5): string =>
  [...m.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, c]) => `${k} ${c}`)
    .join(', ') + (m.size > n ? ', …' : '');

const bump = (m: Map<string, number>, k: string): void => {
  m.set(k, (m.get(k) ?? 0) + 1);
};

/**
 * A collector for `profile`'s records. Reads TIME_READS as it stands now and at `warnings()`: create it just before
 * the records are mapped, on the thread that maps them.
 * @example const s = createSilentErrors(profile); for (const tx of txs) s.add(tx); s.warnings()
 */
export function createSilentErrors(profile: CompiledProfile, opts: { ids?: boolean } = {}): SilentErrors {
  const fixedLocal0 = TIME_READS.fixedZoneLocal;
  const locations = new Map<string, number>();
  const ids = opts.ids === false ? undefined : new Set<string>();
  let repeatedIds = 0;
  let firstRepeated: string | undefined;
  const scaleMismatch = profile.notes.amountScales.map(() => new Map<string, number>());
  let postedBefore = 0;
  let firstPostedBefore: string | undefined;
  let negAuthorized = 0;
  let posRefund = 0;
  let negatives = 0;
  const amountUse = profile.columns.find((c) => c.field === 'postedAmount' && c.rule.endsWith('.from'));
  let amountOf: Getter | undefined;
  try {
    amountOf = amountUse === undefined ? undefined : compileGetter(amountUse.column);
  } catch {
    amountOf = undefined;
  }
  return {
    add(tx, source) {
      if (tx.paymentNetworkMerchantCountryCode !== undefined)
        bump(
          locations,
          `${tx.paymentNetworkMerchantCountryCode}${tx.paymentNetworkMerchantState ? `-${tx.paymentNetworkMerchantState}` : ''}`,
        );
      if (ids !== undefined) {
        if (ids.has(tx.transactionId)) {
          repeatedIds++;
          firstRepeated ??= tx.transactionId;
        } else ids.add(tx.transactionId);
      }
      for (const [i, s] of profile.notes.amountScales.entries()) {
        const cur = tx.currencyCode;
        if (cur === undefined) continue;
        const differs = s.currency !== undefined ? cur !== s.currency : currencyExponent(cur) !== s.exponent;
        if (differs) bump(scaleMismatch[i] as Map<string, number>, cur);
      }
      if (tx.transactionPostingTimestamp < tx.transactionTimestamp) {
        postedBefore++;
        firstPostedBefore ??= tx.transactionId;
      }
      if (amountOf !== undefined && source !== undefined) {
        const raw = amountOf(source);
        const neg = typeof raw === 'number' ? raw < 0 : typeof raw === 'string' && raw.trim().startsWith('-');
        if (neg) negatives++;
        if (neg && tx.transactionType === 'AUTHORIZED') negAuthorized++;
        else if (!neg && tx.transactionType === 'REFUND') posRefund++;
      }
    },
    warnings() {
      const out: string[] = [];
      const fixedLocal = TIME_READS.fixedZoneLocal - fixedLocal0;
      const zones = [...new Set(profile.notes.fixedZones.map((z) => z.zone))];
      if (fixedLocal > 0 && zones.length > 0) {
        const spread = merchantZones(locations);
        if (spread.zones.size > 1 || spread.undecided > 0) {
          const rules = [...new Set(profile.notes.fixedZones.map((z) => z.rule))].join(', ');
          out.push(
            `${fixedLocal} local time${fixedLocal === 1 ? '' : 's'} read in the one zone ${zones.join(', ')} (${rules}) while the merchants are in ${spread.zones.size + spread.undecided > 1 ? `${spread.zones.size} zones` : 'several zones'} (${top(spread.countries)}): each is wrong by its merchant's offset from that zone; take the zone from the merchant ("zone": {"country": …, "state": …})`,
          );
        }
      }
      if (repeatedIds > 0)
        out.push(
          `transactionId repeats: ${repeatedIds} record${repeatedIds === 1 ? '' : 's'} share an id with an earlier one (first: ${firstRepeated}); only the first is sent: is the id column unique?`,
        );
      for (const [i, s] of profile.notes.amountScales.entries()) {
        const m = scaleMismatch[i] as Map<string, number>;
        if (m.size === 0) continue;
        const n = [...m.values()].reduce((a, b) => a + b, 0);
        out.push(
          `amounts scaled as ${s.currency ?? `exponent ${s.exponent}`} (${s.rule}) in ${n} record${n === 1 ? '' : 's'} whose currencyCode is another (${top(m)}): their amounts are off by a power of ten or in the wrong currency`,
        );
      }
      if (postedBefore > 0)
        out.push(
          `transactionPostingTimestamp earlier than transactionTimestamp in ${postedBefore} record${postedBefore === 1 ? '' : 's'} (first: ${firstPostedBefore}): is the posting time read from the right event?`,
        );
      if (negatives > 0 && (negAuthorized > 0 || posRefund > 0))
        out.push(
          `transactionType contradicts the amount's sign: ${negAuthorized} AUTHORIZED with a negative amount, ${posRefund} REFUND with a positive one (${amountUse?.column}): is the type read from the right field?`,
        );
      return out;
    },
  };
}

/** The zones the merchants seen are in (a location that cannot decide its zone counted apart), and the countries. */
function merchantZones(locations: Map<string, number>): {
  zones: Set<string>;
  undecided: number;
  countries: Map<string, number>;
} {
  const found: string[] = [];
  let undecided = 0;
  const countries = new Map<string, number>();
  for (const [loc, n] of locations) {
    const [cc, state] = loc.split('-') as [string, string | undefined];
    countries.set(cc, (countries.get(cc) ?? 0) + n);
    try {
      found.push(locationZone(cc, state, new Map(), undefined));
    } catch {
      undecided++;
    }
  }
  // Zones that keep the same time (Berlin and Paris) are one.
  const zones = new Set<string>();
  for (const z of found) if (![...zones].some((k) => oneZone([k, z]) !== null)) zones.add(z);
  return { zones, undecided, countries };
}
