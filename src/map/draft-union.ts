// `mapping draft` on a union: a required field still at "?" whose values sit in a list's elements by kind
// (`elements[type=settlement].amount`, `elements[type=refund].amount`) gets a `first` over the kinds that are a
// transaction's (settlements, purchases, authorisations, then refunds), marked GUESSED; `transactionType` reads the
// kind itself through an `enum`. Kinds that are no transaction (a fee, a hold, an adjustment) are left out and named.
// A field with a strong name at a plain path too (outside the lists) is left to the plain paths' candidates.

import { HINTS, lastKey } from './draft-check.ts';
import { CODE_WORDS, timeLayout } from './draft-guess.ts';
import { compileGetter } from './path.ts';

type Rule = string | Record<string, unknown>;
type RuleFor = (field: string, from: string, sample: unknown) => Rule;

/** Kinds that are no transaction of their own, even where a transaction's word is in them (`authorization_hold`). */
const NOT_A_TRANSACTION = /hold|fee|adjust|interchange|dispute|chargeback|reversal|void|declin|expir|fail/i;
/** A kind's rank in a `first` (lower first) and the transaction type it is: settled before purchase before refund. */
const KIND_RANKS: Array<[RegExp, number, string]> = [
  [/refund|return/i, 3, 'REFUND'],
  [/settle|clear|captur|post/i, 0, 'AUTHORIZED'],
  [/purchase|sale|transaction|payment|charge|debit/i, 1, 'AUTHORIZED'],
  [/authori[sz]/i, 2, 'AUTHORIZED'],
];

/** The rank and type of a kind, undefined when it is no transaction's. */
function kindRank(kind: string): { rank: number; type: string } | undefined {
  if (NOT_A_TRANSACTION.test(kind)) return undefined;
  const word = CODE_WORDS.transactionType?.[kind.toLowerCase()];
  if (word !== undefined) return { rank: word === 'REFUND' ? 3 : 1, type: word };
  const hit = KIND_RANKS.find(([re]) => re.test(kind));
  return hit === undefined ? undefined : { rank: hit[1], type: hit[2] };
}

const SELECTOR = /^(.+?)\[([a-z_]+)=([^\]]+)\]\.(.+)$/i;
const MERCHANTISH = /merchant|acceptor|store|shop/i;

/** One list's elements by kind: per kind, the path in it that holds the field (a strong name before a weak one). */
interface Union {
  list: string;
  key: string;
  byKind: Map<string, string>;
  others: Set<string>;
}

/** The lists by kind whose elements hold the field, each kind's path chosen by the field's names. */
function unionsFor(field: string, paths: readonly string[]): Union[] {
  const { strong, weak } = HINTS[field] ?? { strong: [], weak: [] };
  const merchantish = field.startsWith('paymentNetworkMerchant') || field === 'paymentNetworkMCC';
  const out = new Map<string, Union & { strength: Map<string, number> }>();
  for (const p of paths) {
    const m = SELECTOR.exec(p);
    if (m === null) continue;
    const [, list, key, kind, rest] = m as unknown as [string, string, string, string, string];
    if (rest.includes('[') || (merchantish && !MERCHANTISH.test(rest))) continue;
    const u = out.get(`${list}[${key}]`) ?? {
      list,
      key,
      byKind: new Map(),
      others: new Set(),
      strength: new Map(),
    };
    out.set(`${list}[${key}]`, u);
    if (kindRank(kind) === undefined) {
      u.others.add(kind);
      continue;
    }
    // The kind key itself is the selector: only the type reads it (through an enum of the kinds).
    const own = rest === key;
    if (own !== (field === 'transactionType')) continue;
    const strength = own ? 2 : strong.includes(lastKey(p)) ? 1 : weak.includes(lastKey(p)) ? 0 : -1;
    if (strength < 0) continue;
    if ((u.strength.get(kind) ?? -1) >= strength) continue;
    u.strength.set(kind, strength);
    u.byKind.set(kind, p);
  }
  return [...out.values()].filter((u) => u.byKind.size > 0);
}

/**
 * Whether a path outside any list by kind has a strong name for the field (`amounts.cardholder.currency`): then the
 * choice is among plain paths, listed by the draft, not a union's. The type reads the kind over any plain `status`.
 */
function hasPlainName(field: string, paths: readonly string[]): boolean {
  const strong = HINTS[field]?.strong ?? [];
  return paths.some((p) => !p.includes('[') && strong.includes(lastKey(p)));
}

/** A source of the `first`: the kind's path with the field's conversion (the type: an enum of the kind). */
function source(field: string, kind: string, path: string, sample: unknown, ruleFor: RuleFor): Rule {
  if (field !== 'transactionType') return ruleFor(field, path, sample);
  return { from: path, enum: { [kind]: kindRank(kind)?.type } };
}

/**
 * Every required field still at "?" that a list's elements hold by kind gets a `first` over the transaction kinds
 * (or the one kind's rule), marked `TODO: GUESSED`, with the records it covers, the kinds left out and the records
 * holding several kinds (one notification of the first: `expand` makes one per element).
 */
export function firstByKind(
  fields: Record<string, Rule>,
  records: readonly Record<string, unknown>[],
  paths: Map<string, unknown>,
  ruleFor: RuleFor,
): void {
  const all = [...paths.keys()];
  // The type last, from the list the other fields were read from where it can (one variant per record for all).
  const order = Object.keys(fields).sort(
    (a, b) => Number(a === 'transactionType') - Number(b === 'transactionType'),
  );
  const lists = new Set<string>();
  for (const field of order) {
    const rule = fields[field] as Rule;
    if (typeof rule === 'string' || rule.from !== '?') continue;
    if (field !== 'transactionType' && hasPlainName(field, all)) continue;
    const union = unionsFor(field, all)
      .map((u) => ({ u, covered: coverage(records, [...u.byKind.values()]), was: lists.has(u.list) ? 1 : 0 }))
      .sort((a, b) => b.was - a.was || b.covered.any - a.covered.any)[0];
    if (union === undefined || union.covered.any === 0) continue;
    const { u, covered } = union;
    lists.add(u.list);
    const kinds = [...u.byKind.keys()].sort(
      (a, b) => (kindRank(a)?.rank ?? 9) - (kindRank(b)?.rank ?? 9) || a.localeCompare(b),
    );
    const sources = kinds.map((k) =>
      source(field, k, u.byKind.get(k) as string, paths.get(u.byKind.get(k) as string), ruleFor),
    );
    const left = u.others.size > 0 ? `; left out, no transaction's kind: ${[...u.others].join(', ')}` : '';
    const several =
      covered.several > 0
        ? `; ${covered.several} records hold several of them: one notification of the first ("expand" over ${u.list} makes one per element)`
        : '';
    const description = `TODO: GUESSED: ${field} by the kind of ${u.list}[].${u.key}: ${kinds.length > 1 ? `first of ${kinds.join(', ')}` : kinds[0]}, in ${covered.any} of ${records.length} records${left}${several}; check the order`;
    const one = sources[0] as Rule;
    fields[field] =
      sources.length > 1
        ? { first: sources, description }
        : { ...(typeof one === 'string' ? { from: one } : one), description };
  }
}

const TIMES = ['transactionTimestamp', 'transactionPostingTimestamp'];

/**
 * A time read from one variant of a union (`elements[category=card_transaction].card_transaction.authorized_at`)
 * misses the records of the others: it becomes a `first` over each transaction kind's time (the same last key, else
 * a name the field is known by, else the variant's one date-time), the chosen kind first, marked GUESSED, where that
 * covers more records.
 */
export function widenTimes(
  fields: Record<string, Rule>,
  records: readonly Record<string, unknown>[],
  paths: Map<string, unknown>,
  ruleFor: RuleFor,
): void {
  for (const field of TIMES) {
    const rule = fields[field];
    if (rule === undefined || typeof rule === 'string' || typeof rule.from !== 'string') continue;
    const m = SELECTOR.exec(rule.from);
    if (m === null || (m[4] as string).includes('[')) continue;
    const [, list, key, kind] = m as unknown as [string, string, string, string];
    const byKind = new Map<string, string>([[kind, rule.from]]);
    for (const k of kindsOf(list, key, paths.keys())) {
      if (byKind.has(k) || kindRank(k) === undefined) continue;
      const p = timeOf(field, `${list}[${key}=${k}].`, lastKey(rule.from), paths);
      if (p !== undefined) byKind.set(k, p);
    }
    if (byKind.size < 2) continue;
    const alone = coverage(records, [rule.from]).any;
    const covered = coverage(records, [...byKind.values()]).any;
    if (covered <= alone) continue;
    const others = [...byKind.keys()]
      .slice(1)
      .sort((a, b) => (kindRank(a)?.rank ?? 9) - (kindRank(b)?.rank ?? 9));
    const { description: _said, ...first } = rule;
    fields[field] = {
      first: [
        first,
        ...others.map((k) => ruleFor(field, byKind.get(k) as string, paths.get(byKind.get(k) as string))),
      ],
      description: `TODO: GUESSED: ${field} by the kind of ${list}[].${key}: first of ${[kind, ...others].join(', ')} (${rule.from} alone is in ${alone} of ${records.length} records, these in ${covered}); check the order`,
    };
  }
}

/** The kinds a list's paths name. */
function kindsOf(list: string, key: string, paths: Iterable<string>): string[] {
  const out = new Set<string>();
  for (const p of paths) {
    const m = SELECTOR.exec(p);
    if (m !== null && m[1] === list && m[2] === key) out.add(m[3] as string);
  }
  return [...out];
}

/** A variant's time for the field: the same last key, else a known name, else its one date-time. */
function timeOf(
  field: string,
  prefix: string,
  last: string,
  paths: Map<string, unknown>,
): string | undefined {
  const times = [...paths.keys()].filter(
    (p) =>
      p.startsWith(prefix) &&
      !p.slice(prefix.length).includes('[') &&
      typeof paths.get(p) === 'string' &&
      timeLayout(paths.get(p) as string) !== undefined,
  );
  const { strong, weak } = HINTS[field] ?? { strong: [], weak: [] };
  return (
    times.find((p) => lastKey(p) === last) ??
    times.find((p) => strong.includes(lastKey(p))) ??
    times.find((p) => weak.includes(lastKey(p))) ??
    (times.length === 1 ? times[0] : undefined)
  );
}

/** In how many records one of the paths holds a value, and in how many several do. */
function coverage(
  records: readonly Record<string, unknown>[],
  paths: readonly string[],
): { any: number; several: number } {
  const getters = paths.map((p) => {
    try {
      return compileGetter(p);
    } catch {
      return () => undefined;
    }
  });
  let any = 0;
  let several = 0;
  for (const r of records) {
    const held = getters.filter((g) => {
      const v = g(r);
      return v !== undefined && v !== null && v !== '';
    }).length;
    if (held > 0) any++;
    if (held > 1) several++;
  }
  return { any, several };
}
