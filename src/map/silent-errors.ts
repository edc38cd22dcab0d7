// The warnings of a profile that is probably wrong without a reject to show it: local times read in one zone while
// merchants span several, ids that repeat, amounts scaled by a currency other than the record's, posting before
// transaction, a type that contradicts its amount's sign. Counted one mapped record at a time, into a state that
// crosses threads (send's worker pool) and merges; `mapping check` and `send` say the same warnings from it.
import { currencyExponent } from '../model/codes.ts';
import type { TransactionNotification } from '../model/transaction.ts';
import { locationZone, oneZone } from './location-zone.ts';
import { compileGetter, type Getter } from './path.ts';
import { countPicks, positionalPicks, positionalWarnings } from './positional.ts';
import { TIME_READS } from './timestamp.ts';
import type { CompiledProfile } from './types.ts';

/**
 * What the records mapped so far showed (structured-cloneable, mergeable).
 * @example { records: 3, locations: { 'US-NY': 2, GB: 1 }, fixedLocal: 3, postedBefore: 0, … }
 */
export interface SilentState {
  records: number;
  /** Merchant country (and state) → records. */
  locations: Record<string, number>;
  /** Local times read in the profile's one fixed zone. */
  fixedLocal: number;
  /** Local times in a DST repeated hour. */
  repeatedHour: number;
  /** Local times in a DST gap (the hour skipped). */
  gap: number;
  /** Per amount scale of the profile (notes.amountScales): the records' other currencies → records. */
  scales: Array<Record<string, number>>;
  postedBefore: number;
  firstPostedBefore?: string;
  negatives: number;
  negAuthorized: number;
  posRefund: number;
  /** AUTHORIZED with a positive (or unsigned) amount, REFUND with a negative one: the merchant's side of a sign. */
  posAuthorized: number;
  negRefund: number;
  /** The first record of each of the four (the one the warning names). */
  firstSign: Record<string, string>;
  repeatedIds: number;
  firstRepeated?: string;
  /** Per positional pick (`events[-1]`): the kind of element it read → records (positional.ts). */
  positional: Record<string, Record<string, number>>;
  /** Per kind of warning (postedBefore, scale, sign, positional), where a record first showed it: `source:line`. */
  firstAt: Record<string, string>;
}

export function newSilentState(profile: CompiledProfile): SilentState {
  return {
    records: 0,
    locations: {},
    fixedLocal: 0,
    repeatedHour: 0,
    gap: 0,
    scales: profile.notes.amountScales.map(() => ({})),
    postedBefore: 0,
    negatives: 0,
    negAuthorized: 0,
    posRefund: 0,
    posAuthorized: 0,
    negRefund: 0,
    firstSign: {},
    repeatedIds: 0,
    positional: {},
    firstAt: {},
  };
}

/** `from` added into `into` (one worker's chunk into the run's). */
export function mergeSilentState(into: SilentState, from: SilentState): void {
  into.records += from.records;
  for (const [k, n] of Object.entries(from.locations)) into.locations[k] = (into.locations[k] ?? 0) + n;
  into.fixedLocal += from.fixedLocal;
  into.repeatedHour += from.repeatedHour;
  into.gap += from.gap;
  for (const [i, m] of from.scales.entries()) {
    const to = into.scales[i] ?? {};
    into.scales[i] = to;
    for (const [k, n] of Object.entries(m)) to[k] = (to[k] ?? 0) + n;
  }
  into.postedBefore += from.postedBefore;
  into.firstPostedBefore ??= from.firstPostedBefore;
  into.negatives += from.negatives;
  into.negAuthorized += from.negAuthorized;
  into.posRefund += from.posRefund;
  into.posAuthorized += from.posAuthorized;
  into.negRefund += from.negRefund;
  for (const [k, id] of Object.entries(from.firstSign)) into.firstSign[k] ??= id;
  into.repeatedIds += from.repeatedIds;
  into.firstRepeated ??= from.firstRepeated;
  for (const [k, at] of Object.entries(from.firstAt)) into.firstAt[k] ??= at;
  for (const [pick, kinds] of Object.entries(from.positional)) {
    const to = into.positional[pick] ?? {};
    into.positional[pick] = to;
    for (const [k, c] of Object.entries(kinds)) to[k] = (to[k] ?? 0) + c;
  }
}

/** Where a record is: its source and line. */
export interface RecordAt {
  source: string;
  line: number;
}

/** A collector: `add` each mapped record; `end()` closes the time counts into the state. */
export interface SilentErrors {
  readonly state: SilentState;
  /**
   * A record mapped and valid: its transaction, the source record it came from (for the amount's sign), and where
   * it is (for the first occurrence of each warning).
   */
  add(tx: TransactionNotification, source: Record<string, unknown>, at?: RecordAt): void;
  /** Takes the time counts since the collector began (or last ended) into the state; returns the state. */
  end(): SilentState;
}

/**
 * A collector for `profile`'s records on this thread (the time counts are the thread's: create it just before
 * the records are mapped). `ids`: also count repeated transactionIds (`mapping check`; send rejects duplicates).
 * @example const s = createSilentErrors(profile, { ids: true }); s.add(tx, rec); silentWarnings(profile, s.end())
 */
export function createSilentErrors(profile: CompiledProfile, opts: { ids?: boolean } = {}): SilentErrors {
  const state = newSilentState(profile);
  let fixed0 = TIME_READS.fixedZoneLocal;
  let repeated0 = TIME_READS.repeatedHour;
  let gap0 = TIME_READS.gap;
  // Id → its transaction's hash: an identical record again (a redelivery) is a duplicate, not an id that repeats.
  const ids = opts.ids === true ? new Map<string, number>() : undefined;
  const scales = profile.notes.amountScales;
  const amountOf = amountGetter(profile);
  const declared = profile.notes.signConvention;
  const picks = positionalPicks(profile);
  // Country → state ('' for none) → records: two lookups a record, no string built.
  const locations = new Map<string, Map<string, number>>();
  const zoneSpread = spreadWatcher(profile);
  let spread = false;
  return {
    state,
    add(tx, source, at) {
      state.records++;
      const first = (kind: string) => {
        if (at !== undefined && state.firstAt[kind] === undefined)
          state.firstAt[kind] = `${at.source}:${at.line}`;
      };
      const cc = tx.paymentNetworkMerchantCountryCode;
      if (cc !== undefined) {
        let byState = locations.get(cc);
        if (byState === undefined) {
          byState = new Map();
          locations.set(cc, byState);
        }
        const st = tx.paymentNetworkMerchantState ?? '';
        const seen = byState.get(st);
        byState.set(st, (seen ?? 0) + 1);
        if (seen === undefined && zoneSpread?.(cc, st) === true) spread = true;
      }
      if (
        spread &&
        state.firstAt.oneZone === undefined &&
        TIME_READS.fixedZoneLocal - fixed0 + state.fixedLocal > 0
      )
        first('oneZone');
      if (picks.length > 0 && countPicks(picks, source, state.positional)) first('positional');
      if (ids !== undefined) {
        const text = fnv1a(JSON.stringify(tx));
        const before = ids.get(tx.transactionId);
        if (before === undefined) ids.set(tx.transactionId, text);
        else if (before !== text) {
          state.repeatedIds++;
          state.firstRepeated ??= tx.transactionId;
        }
      }
      for (let i = 0; i < scales.length; i++) {
        const s = scales[i] as (typeof scales)[number];
        const cur = tx.currencyCode;
        if (cur === undefined) continue;
        if (s.currency !== undefined ? cur !== s.currency : currencyExponent(cur) !== s.exponent) {
          const m = state.scales[i] as Record<string, number>;
          m[cur] = (m[cur] ?? 0) + 1;
          first('scale');
        }
      }
      if (tx.transactionPostingTimestamp < tx.transactionTimestamp) {
        state.postedBefore++;
        state.firstPostedBefore ??= tx.transactionId;
        first('postedBefore');
      }
      if (amountOf !== undefined) {
        const raw = amountOf(source);
        const neg = typeof raw === 'number' ? raw < 0 : typeof raw === 'string' && NEGATIVE.test(raw);
        if (neg) state.negatives++;
        const type = tx.transactionType;
        if (type === 'AUTHORIZED' || type === 'REFUND') {
          const key = `${neg ? 'neg' : 'pos'}${type === 'AUTHORIZED' ? 'Authorized' : 'Refund'}` as SignKey;
          state[key]++;
          state.firstSign[key] ??= tx.transactionId;
          // A declared convention knows at once which records contradict it; a learnt one once its majority holds.
          const convention = declared ?? establishedMajority(state);
          if (convention !== undefined && CONTRADICTS[convention].includes(key)) first('sign');
        }
      }
    },
    end() {
      for (const [cc, byState] of locations)
        for (const [st, n] of byState) {
          const key = st === '' ? cc : `${cc}-${st}`;
          state.locations[key] = (state.locations[key] ?? 0) + n;
        }
      locations.clear();
      state.fixedLocal += TIME_READS.fixedZoneLocal - fixed0;
      state.repeatedHour += TIME_READS.repeatedHour - repeated0;
      state.gap += TIME_READS.gap - gap0;
      fixed0 = TIME_READS.fixedZoneLocal;
      repeated0 = TIME_READS.repeatedHour;
      gap0 = TIME_READS.gap;
      return state;
    },
  };
}

const NEGATIVE = /^\s*-/;

/**
 * The export's sign convention once its records make it plain (10 or more records on one side, twice the other's),
 * for `send` to log the first record contradicting it as it meets it; undefined before (the end's count decides).
 */
function establishedMajority(state: SilentState): 'account' | 'merchant' | undefined {
  if (state.negatives === 0) return undefined;
  const account = state.negAuthorized + state.posRefund;
  const merchant = state.posAuthorized + state.negRefund;
  if (account >= 10 && account >= 2 * merchant) return 'account';
  if (merchant >= 10 && merchant >= 2 * account) return 'merchant';
  return undefined;
}

/**
 * For a profile reading local times in one fixed named zone (not the export's own): a watcher told each location
 * as it is first seen, true once the merchants seen span more than one zone (with local times read in that zone:
 * the first record of the one-zone warning, logged as met). Undefined when the warning cannot apply.
 */
function spreadWatcher(profile: CompiledProfile): ((cc: string, st: string) => boolean) | undefined {
  if (profile.notes.fixedZones.length === 0 || profile.notes.exportZone) return undefined;
  const zones: string[] = [];
  let undecided = 0;
  return (cc, st) => {
    try {
      const z = locationZone(cc, st === '' ? undefined : st, new Map(), undefined);
      if (!zones.some((k) => oneZone([k, z]) !== null)) zones.push(z);
    } catch {
      undecided++;
    }
    return zones.length + undecided > 1;
  };
}

/** A 32-bit FNV-1a hash of a text (two records' transactions told apart without keeping their text). */
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

type SignKey = 'negAuthorized' | 'posAuthorized' | 'negRefund' | 'posRefund';
/** The records that contradict each convention: the merchant's side (a purchase positive), the account's. */
const CONTRADICTS: Record<'merchant' | 'account', readonly SignKey[]> = {
  merchant: ['negAuthorized', 'posRefund'],
  account: ['posAuthorized', 'negRefund'],
};

/**
 * The records whose type contradicts the export's sign convention: the profile's `signConvention`, else the
 * export's majority (an export with no negative amount is unsigned: nothing to check).
 */
function signWarning(profile: CompiledProfile, state: SilentState): string | undefined {
  if (state.negatives === 0) return undefined;
  const declared = profile.notes.signConvention;
  const account = state.negAuthorized + state.posRefund;
  const merchant = state.posAuthorized + state.negRefund;
  const convention = declared ?? (account > merchant ? 'account' : 'merchant');
  const [a, b] = CONTRADICTS[convention] as [SignKey, SignKey];
  const n = state[a] + state[b];
  if (n === 0) return undefined;
  const first = state.firstSign[state[a] > 0 ? a : b];
  const side =
    convention === 'account'
      ? "the account's side: a purchase negative, a refund positive"
      : "the merchant's side: a purchase positive, a refund negative";
  const how =
    declared !== undefined
      ? '"signConvention"'
      : `${Math.max(account, merchant)} of ${account + merchant} records`;
  const what = (k: SignKey) =>
    `${state[k]} ${k.endsWith('Authorized') ? 'AUTHORIZED' : 'REFUND'} with a ${k.startsWith('neg') ? 'negative' : 'positive'} amount`;
  return `transactionType contradicts the amount's sign in ${plural(n, 'record')} (${what(a)}, ${what(b)}; first: ${first}) against the export's convention, ${side} (${how}): is the type read from the right field?`;
}

/** The source amount's getter (its sign against the type), when the amount is read from one path. */
function amountGetter(profile: CompiledProfile): Getter | undefined {
  const use = profile.columns.find((c) => c.field === 'postedAmount' && c.rule.endsWith('.from'));
  if (use === undefined) return undefined;
  try {
    return compileGetter(use.column);
  } catch {
    return undefined;
  }
}

const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

function top(m: Record<string, number>, n = 5): string {
  const e = Object.entries(m).sort((a, b) => b[1] - a[1]);
  return (
    e
      .slice(0, n)
      .map(([k, c]) => `${k} ${c}`)
      .join(', ') + (e.length > n ? ', …' : '')
  );
}

/**
 * The warnings the state shows for `profile`, one line each (none: no sign of a wrong profile).
 * @example silentWarnings(profile, state) // ['13 local times read in the one zone America/New_York (timeZone) while …']
 */
export function silentWarnings(profile: CompiledProfile, state: SilentState): string[] {
  const out: string[] = [];
  const zones = [...new Set(profile.notes.fixedZones.map((z) => z.zone))];
  // A profile that declares its zone the export's own (timeZoneScope) reads every local time right in it.
  if (state.fixedLocal > 0 && zones.length > 0 && !profile.notes.exportZone) {
    const spread = merchantZones(state.locations);
    if (spread.zones.size + spread.undecided > 1) {
      const rules = [...new Set(profile.notes.fixedZones.map((z) => z.rule))].join(', ');
      out.push(
        `${plural(state.fixedLocal, 'local time')} read in the one zone ${zones.join(', ')} (${rules}) while the merchants are in ${spread.zones.size > 1 ? `${spread.zones.size} zones` : 'several zones'} (${top(spread.countries)}): each is wrong by its merchant's offset from that zone; take the zone from the merchant ("zone": {"country": …, "state": …})`,
      );
    }
  }
  if (systematic(state.repeatedIds, state.records))
    out.push(
      `transactionId repeats: ${state.repeatedIds} record${state.repeatedIds === 1 ? '' : 's'} share an id with an earlier one (first: ${state.firstRepeated}); only the first is sent: is the id column unique?`,
    );
  for (const [i, s] of profile.notes.amountScales.entries()) {
    const m = state.scales[i] ?? {};
    const n = Object.values(m).reduce((a, b) => a + b, 0);
    if (n === 0) continue;
    out.push(
      `amounts scaled as ${s.currency ?? `exponent ${s.exponent}`} (${s.rule}) in ${plural(n, 'record')} whose currencyCode is another (${top(m)}): their amounts are off by a power of ten or in the wrong currency`,
    );
  }
  if (systematic(state.postedBefore, state.records))
    out.push(
      `transactionPostingTimestamp earlier than transactionTimestamp in ${plural(state.postedBefore, 'record')} (first: ${state.firstPostedBefore}): is the posting time read from the right event?`,
    );
  out.push(...positionalWarnings(positionalPicks(profile), state.positional));
  const sign = signWarning(profile, state);
  if (sign !== undefined) out.push(sign);
  return out;
}

/**
 * A wrong rule is wrong for a class of records: a repeated id or a posting before its transaction in one record (or
 * under 1 % of them) is that record's data, said by `silentNotes`, not a sign of a wrong profile.
 */
function systematic(n: number, records: number): boolean {
  return n >= 2 && n * 100 >= records;
}

/**
 * What the records showed that is below a warning (single records): `mapping check` prints it in its report.
 * @example silentNotes(state) // ['1 record whose posting time is earlier than its transaction time (first: NW20251027): its data, not the profile']
 */
export function silentNotes(state: SilentState): string[] {
  const out: string[] = [];
  if (state.repeatedIds > 0 && !systematic(state.repeatedIds, state.records))
    out.push(
      `${plural(state.repeatedIds, 'record')} with an id an earlier, different record has (first: ${state.firstRepeated}): send rejects ${state.repeatedIds === 1 ? 'it' : 'them'} as a duplicate`,
    );
  if (state.postedBefore > 0 && !systematic(state.postedBefore, state.records))
    out.push(
      `${plural(state.postedBefore, 'record')} whose posting time is earlier than its transaction time (first: ${state.firstPostedBefore}): too few to be a rule's (a warning from 2 records and 1 %)`,
    );
  return out;
}

/** The zones the merchants seen are in (a location that cannot decide its zone counted apart), and the countries. */
function merchantZones(locations: Record<string, number>): {
  zones: Set<string>;
  undecided: number;
  countries: Record<string, number>;
} {
  const found: string[] = [];
  let undecided = 0;
  const countries: Record<string, number> = {};
  for (const [loc, n] of Object.entries(locations)) {
    const [cc, state] = loc.split('-') as [string, string | undefined];
    countries[cc] = (countries[cc] ?? 0) + n;
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
