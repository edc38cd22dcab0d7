// What `mapping draft` checks of its own proposal against the records before it writes it: a local time left in the
// guessed zone takes the merchant's; a time that is an event list's last one (whose kind varies) is not proposed
// as it is but marked GUESSED with a `first` by kind; the two times are ordered (the earlier is the transaction's)
// or marked GUESSED.
import { eventTimePaths, POSTING_KINDS } from './draft-records.ts';
import { compileGetter } from './path.ts';
import { kindOf } from './positional.ts';

type Rule = string | Record<string, unknown>;
const TIMES = ['transactionTimestamp', 'transactionPostingTimestamp'] as const;

const fromOf = (r: Rule | undefined): string | undefined =>
  r === undefined ? undefined : typeof r === 'string' ? r : typeof r.from === 'string' ? r.from : undefined;

/** A local time left in the GUESSED zone takes the merchant's country (and state) instead, when the draft reads one. */
export function settleZones(fields: Record<string, Rule>, guessedZone: string): void {
  const country = fromOf(fields.paymentNetworkMerchantCountryCode);
  if (country === undefined || country === '?') return;
  const read = fromOf(fields.paymentNetworkMerchantState);
  const state = read !== undefined && read !== '?' ? read : undefined;
  const zone = { country, ...(state !== undefined ? { state } : {}) };
  const settle = (r: Rule): Rule => {
    if (typeof r === 'string') return r;
    if (Array.isArray(r.first)) return { ...r, first: (r.first as Rule[]).map(settle) };
    const ts = r.timestamp as Record<string, unknown> | undefined;
    if (typeof ts !== 'object' || ts === null || ts.zone !== guessedZone) return r;
    return {
      ...r,
      timestamp: { ...ts, zone },
      description: `TODO: local times read in the merchant's zone (${country}${state ? `, ${state}` : ''}): check`,
    };
  };
  for (const f of TIMES) if (fields[f] !== undefined) fields[f] = settle(fields[f] as Rule);
}

/** An instant of a time value (ISO with an offset, or Unix seconds / milliseconds), else undefined. */
function instant(v: unknown): number | undefined {
  if (typeof v === 'number') return v > 1e11 ? v : v * 1000;
  if (typeof v !== 'string') return undefined;
  if (/^\d{9,13}$/.test(v.trim())) return instant(Number(v));
  if (!/[zZ]|[+-]\d{2}:?\d{2}$/.test(v.trim())) return undefined;
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : t;
}

/** The arrays of objects with a kind in a record (top level and one level down), by path. */
function eventLists(rec: Record<string, unknown>): Array<[string, Record<string, unknown>[]]> {
  const out: Array<[string, Record<string, unknown>[]]> = [];
  const look = (o: Record<string, unknown>, prefix: string, depth: number) => {
    for (const [k, v] of Object.entries(o)) {
      if (Array.isArray(v) && v.length > 0 && v.every((e) => kindOf(e) !== undefined))
        out.push([prefix + k, v as Record<string, unknown>[]]);
      else if (v !== null && typeof v === 'object' && !Array.isArray(v) && depth < 2)
        look(v as Record<string, unknown>, `${prefix}${k}.`, depth + 1);
    }
  };
  look(rec, '', 0);
  return out;
}

/**
 * A time field proposed from a plain path whose value is, record after record, the time of an event list's last
 * element while the last element's kind varies: the last event is not the posting one in every record. The rule
 * becomes a `first` over the posting kinds (when the records have them), marked GUESSED either way.
 */
export function lastEventTimes(
  fields: Record<string, Rule>,
  records: readonly Record<string, unknown>[],
  paths: Iterable<string>,
): void {
  for (const field of TIMES) {
    const from = fromOf(fields[field]);
    if (from === undefined || from === '?' || from.includes('[')) continue;
    const get = compileGetter(from);
    let equal = 0;
    const lastKinds = new Map<string, number>();
    let list = '';
    for (const rec of records) {
      const t = instant(get(rec));
      if (t === undefined) continue;
      for (const [p, events] of eventLists(rec)) {
        const last = events.at(-1) as Record<string, unknown>;
        const times = Object.values(last).map(instant);
        if (!times.includes(t)) continue;
        equal++;
        list = p;
        const k = kindOf(last) as string;
        lastKinds.set(k, (lastKinds.get(k) ?? 0) + 1);
        break;
      }
    }
    if (equal < Math.max(2, records.length / 2) || lastKinds.size < 2) continue;
    const kinds = [...lastKinds].map(([k, c]) => `${k} ${c}`).join(', ');
    const byKind = eventTimePaths(paths, POSTING_KINDS).filter((p) => p.startsWith(`${list}[`));
    const why = `${from} is the time of the last element of ${list} in ${equal} of ${records.length} records, whose kind varies (${kinds})`;
    fields[field] =
      field === 'transactionPostingTimestamp' && byKind.length > 0
        ? {
            first: byKind.map((p) => ({ from: p, timestamp: true })),
            description: `TODO: GUESSED: ${why}: the posting time by kind instead; check the kinds and their order`,
          }
        : {
            ...(typeof fields[field] === 'string' ? { from } : (fields[field] as object)),
            description: `TODO: GUESSED: ${why}: a position is not a kind`,
          };
  }
}

/**
 * The two times in order: where the records say the proposed posting time comes before the transaction time, the
 * two are swapped (the earlier is the transaction's); where they disagree, both are marked GUESSED.
 */
export function orderTimes(fields: Record<string, Rule>, records: readonly Record<string, unknown>[]): void {
  const txFrom = fromOf(fields.transactionTimestamp);
  const postFrom = fromOf(fields.transactionPostingTimestamp);
  if (
    txFrom === undefined ||
    postFrom === undefined ||
    txFrom === '?' ||
    postFrom === '?' ||
    txFrom === postFrom
  )
    return;
  const tx = compileGetter(txFrom);
  const post = compileGetter(postFrom);
  let before = 0;
  let after = 0;
  for (const rec of records) {
    const a = instant(tx(rec));
    const b = instant(post(rec));
    if (a === undefined || b === undefined || a === b) continue;
    if (b < a) before++;
    else after++;
  }
  if (before === 0) return;
  const mark = (f: 'transactionTimestamp' | 'transactionPostingTimestamp', text: string) => {
    const r = fields[f] as Rule;
    fields[f] = { ...(typeof r === 'string' ? { from: r } : r), description: text };
  };
  if (after === 0) {
    const t = fields.transactionTimestamp as Rule;
    fields.transactionTimestamp = fields.transactionPostingTimestamp as Rule;
    fields.transactionPostingTimestamp = t;
    mark(
      'transactionTimestamp',
      `TODO: ${postFrom} is earlier than ${txFrom} in all ${before} records: the transaction time (swapped); check`,
    );
    return;
  }
  const text = `TODO: GUESSED: ${postFrom} is earlier than ${txFrom} in ${before} records and later in ${after}: which is the transaction time?`;
  mark('transactionTimestamp', text);
  mark('transactionPostingTimestamp', text);
}

/** Words a path's last key holds for a field (lower case, no punctuation), the first ones strong enough to propose. */
export const HINTS: Record<string, { strong: string[]; weak: string[] }> = {
  transactionType: { strong: ['transactiontype', 'kind', 'direction'], weak: ['type', 'status', 'category'] },
  sourceCustomerId: {
    strong: ['customer', 'customerid', 'cardholder', 'cardholderid'],
    weak: ['holder', 'user', 'member', 'client'],
  },
  sourceAccountId: { strong: ['account', 'accountid', 'accounttoken'], weak: ['acct', 'wallet'] },
  paymentType: { strong: ['funding', 'fundingtype', 'cardtype'], weak: ['product', 'type'] },
  paymentMethodEntryType: {
    strong: ['entrymode', 'posentrymode'],
    weak: ['entry', 'mode', 'wallet', 'pan', 'channel'],
  },
  paymentNetworkMCC: { strong: ['mcc', 'merchantcategorycode'], weak: ['category'] },
  paymentNetworkMerchant: { strong: ['descriptor', 'merchantname'], weak: ['name', 'dba'] },
  paymentNetworkMerchantId: { strong: ['mid', 'acceptorid', 'merchantid'], weak: ['id', 'networkid'] },
  paymentNetworkMerchantCity: { strong: ['city'], weak: ['locality', 'town'] },
  paymentNetworkMerchantState: { strong: ['state', 'region', 'province'], weak: ['subdivision'] },
  paymentNetworkMerchantPostalCode: {
    strong: ['postalcode', 'zip', 'postcode', 'postal'],
    weak: ['zipcode'],
  },
  paymentNetworkMerchantCountryCode: { strong: ['country', 'countrycode'], weak: ['nation'] },
  postedAmount: { strong: ['amount', 'settledamount', 'value'], weak: ['amt', 'total'] },
  currencyCode: { strong: ['currency', 'currencycode'], weak: ['ccy'] },
  transactionTimestamp: {
    strong: ['createdat', 'authorizedat', 'transactiontime'],
    weak: ['created', 'at', 'time', 'date'],
  },
  transactionPostingTimestamp: {
    strong: ['postedat', 'settledat', 'capturedat'],
    weak: ['posted', 'settled', 'at', 'time'],
  },
  transactionId: {
    strong: ['id', 'transactionid', 'token', 'paymentid', 'transferid', 'txnid'],
    weak: ['reference', 'ref'],
  },
};

export const lastKey = (p: string): string =>
  (p.split('.').at(-1) ?? p)
    .replace(/\[.*$/, '')
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '');

/** The longest of `words` a path's name holds: its last key, or its last two keys joined (`cardholder.id`). */
function nameIn(p: string, words: readonly string[]): string | undefined {
  const two = p
    .split('.')
    .slice(-2)
    .join('')
    .replace(/\[.*?\]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '');
  return [lastKey(p), two].filter((w) => words.includes(w)).sort((a, b) => b.length - a.length)[0];
}

/** The one path whose name is a longer strong word than every other's (`transaction_id` over `acceptor.id`). */
function mostSpecific(paths: readonly string[], words: readonly string[]): string | undefined {
  const len = (p: string) => nameIn(p, words)?.length ?? 0;
  const [first, second] = [...paths].sort((a, b) => len(b) - len(a));
  return first !== undefined && (second === undefined || len(first) > len(second)) ? first : undefined;
}

/**
 * Every field still at `"from": "?"` names the paths it saw that might hold it (`TODO: no column matched; …
 * candidates: account.customer, …`), and takes the one path whose last key is a strong name for it, marked GUESSED.
 * Merchant fields look under a `merchant` object first.
 */
export function candidatesForUnknown(fields: Record<string, Rule>, paths: Iterable<string>): void {
  const all = [...paths];
  const used = new Set(Object.values(fields).map(fromOf));
  for (const [field, rule] of Object.entries(fields)) {
    if (fromOf(rule) !== '?') continue;
    const { strong, weak } = HINTS[field] ?? { strong: [], weak: [] };
    const merchantish = field.startsWith('paymentNetworkMerchant') || field === 'paymentNetworkMCC';
    // An element's own kind key (`events[type=captured].type`) is the selector, never a field's value.
    const fits = (p: string) =>
      !used.has(p) &&
      !/\[([a-z_]+)=[^\]]*\]\.\1$/i.test(p) &&
      (!merchantish || /merchant|acceptor|store|shop/i.test(p));
    const strongs = all.filter((p) => fits(p) && nameIn(p, strong) !== undefined);
    const weaks = all.filter((p) => fits(p) && nameIn(p, weak) !== undefined && !strongs.includes(p));
    const seen = [...strongs, ...weaks].slice(0, 6);
    const base = typeof rule === 'string' ? {} : rule;
    const said = typeof base.description === 'string' ? base.description : `TODO: no column matched`;
    // One strong name (or one more specific than the others), else one weak one: taken, GUESSED; several: listed.
    const only =
      mostSpecific(strongs, strong) ?? (strongs.length === 0 && weaks.length === 1 ? weaks[0] : undefined);
    if (only !== undefined) {
      fields[field] = {
        from: only,
        description: `TODO: GUESSED: ${only} by its name (other candidates: ${seen.filter((p) => p !== only).join(', ') || 'none'})`,
      };
      used.add(only);
    } else
      fields[field] = {
        ...base,
        description: `${said}; candidate paths: ${seen.length > 0 ? seen.join(', ') : "none among the records' paths"}`,
      };
  }
}
