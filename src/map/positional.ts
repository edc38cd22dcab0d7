// Positional picks checked, not trusted: a rule that reads an array element by its position (`events[-1].at`,
// `elements[0].category`) reads the right element only while the element at that position is always of one kind.
// Where the elements carry a kind key (type, status, category, …) whose value at that position varies across the
// export, the pick reads different events in different records: counted per kind, and warned of with the selector by
// kind to use instead.
import { compileGetter, type Getter } from './path.ts';
import type { CompiledProfile } from './types.ts';

/** The keys an element's kind is read from, in this order (the first present with a text value). */
export const KIND_KEYS = [
  'type',
  'status',
  'category',
  'kind',
  'event',
  'event_type',
  'eventType',
  'action',
  'name',
];

/** One positional pick of a profile: `events[-1]`, the rules that read through it, and the path after it. */
export interface PositionalPick {
  pick: string;
  /** The array, its position, and what a rule reads in the element (the element itself when nothing). */
  array: Getter;
  index: number;
  value: Getter | undefined;
  rest: string;
  rules: string[];
}

/** `events[-1].at` → `events`, `-1`, `at`; no match without a positional selector. */
const POSITIONAL = /^((?:[^[]|\[(?!-?\d+\]))*?)\[(-?\d+)\]\.?(.*)$/;

/**
 * The profile's positional picks, one per distinct `array[n]` (its rules listed).
 * @example positionalPicks(profile).map((p) => p.pick) // ['events[-1]']
 */
export function positionalPicks(profile: CompiledProfile): PositionalPick[] {
  const byPick = new Map<string, PositionalPick>();
  for (const c of profile.columns) {
    const m = POSITIONAL.exec(c.column);
    if (m === null || m[1] === '') continue;
    const pick = `${m[1]}[${m[2]}]`;
    let p = byPick.get(pick);
    if (p === undefined) {
      try {
        const rest = m[3] ?? '';
        p = {
          pick,
          array: compileGetter(m[1] as string),
          index: Number(m[2]),
          value: rest === '' ? undefined : compileGetter(rest),
          rest,
          rules: [],
        };
      } catch {
        continue;
      }
      byPick.set(pick, p);
    }
    p.rules.push(c.rule);
  }
  return [...byPick.values()];
}

/** The kind of an element (`type=captured`), or undefined when it has none. */
export function kindOf(element: unknown): string | undefined {
  if (element === null || typeof element !== 'object' || Array.isArray(element)) return undefined;
  const o = element as Record<string, unknown>;
  for (const k of KIND_KEYS) {
    const v = Object.hasOwn(o, k) ? o[k] : undefined;
    if (typeof v === 'string' && v !== '') return `${k}=${v}`;
  }
  return undefined;
}

const SEP = '\u0001';
const valueText = (v: unknown): string => (typeof v === 'object' ? JSON.stringify(v) : String(v));

/**
 * Count, for one record, the kind each pick reads (`k:` + kind) and, for each other kind in the same list, whether
 * its first element holds another value there (`d:` + picked + SEP + other): the records a pick by kind would read
 * differently. Returns true when this record reads another value than the kind the pick read first (its first
 * probably wrong record).
 */
export function countPicks(
  picks: readonly PositionalPick[],
  record: Record<string, unknown>,
  counts: Record<string, Record<string, number>>,
): boolean {
  let wrong = false;
  for (const p of picks) {
    const arr = p.array(record);
    if (!Array.isArray(arr) || arr.length === 0) continue;
    const el: unknown = arr.at(p.index);
    const kind = kindOf(el);
    if (kind === undefined) continue;
    let m = counts[p.pick];
    if (m === undefined) {
      m = {};
      counts[p.pick] = m;
    }
    const firstKind = Object.keys(m).find((k) => k.startsWith('k:'));
    m[`k:${kind}`] = (m[`k:${kind}`] ?? 0) + 1;
    const read = valueText(p.value === undefined ? el : p.value(el as Record<string, unknown>));
    const seen = new Set<string>([kind]);
    for (const e of arr) {
      const other = kindOf(e);
      if (other === undefined || seen.has(other)) continue;
      seen.add(other);
      const there = valueText(p.value === undefined ? e : p.value(e as Record<string, unknown>));
      if (there === read) continue;
      const key = `d:${kind}${SEP}${other}`;
      m[key] = (m[key] ?? 0) + 1;
      if (firstKind !== undefined && `k:${other}` === firstKind) wrong = true;
    }
  }
  return wrong;
}

const n = (x: number): string => x.toLocaleString('en-US');

/**
 * One warning per pick that reads, in some records, another kind of element than in most and another value than
 * that record's element of the usual kind: the counts, the rules, and the selector by kind to use instead.
 * @example ['events[-1] (fields.transactionPostingTimestamp.from) reads type captured in 1,605 records and interchangeAdjusted in 90 …']
 */
export function positionalWarnings(
  picks: readonly PositionalPick[],
  counts: Record<string, Record<string, number>>,
): string[] {
  const out: string[] = [];
  for (const p of picks) {
    const m = counts[p.pick] ?? {};
    const kinds = Object.entries(m)
      .filter(([k]) => k.startsWith('k:'))
      .map(([k, c]) => [k.slice(2), c] as [string, number])
      .sort((a, b) => b[1] - a[1]);
    const usual = kinds[0]?.[0];
    if (usual === undefined || kinds.length < 2) continue;
    // A record reading a rarer kind than an element it also holds, with another value there (at most once a record).
    let wrong = 0;
    for (const [k, c] of kinds.slice(1)) {
      let d = 0;
      for (const [more, mc] of kinds) if (mc > c) d += m[`d:${k}${SEP}${more}`] ?? 0;
      wrong += Math.min(c, d);
    }
    if (wrong === 0) continue;
    const [key] = usual.split('=') as [string];
    const sameKey = kinds.every(([k]) => k.startsWith(`${key}=`));
    const text = kinds.map(([k, c]) => `${sameKey ? k.slice(key.length + 1) : k} in ${n(c)}`);
    const said = `${text.slice(0, -1).join(', ')} and ${text.at(-1)}`;
    const array = p.pick.replace(/\[-?\d+\]$/, '');
    const rest = p.rest === '' ? '' : `.${p.rest}`;
    out.push(
      `${p.pick} (${p.rules.join(', ')}) reads ${sameKey ? `${key} ` : ''}${said} records: in ${n(wrong)} of them another value than their element of a more usual kind holds; a position is not a kind: pick by kind, "${array}[${usual}]${rest}" (or "first" over the kinds the field should read, in order)`,
    );
  }
  return out;
}
