// What `mapping draft` learns from many records, not the first alone: paths into arrays by their elements' kind
// (`events[status=captured].at`), where each path is present, and which values repeat.

/** Keys that tell an array's elements apart (`events[status=captured]`, `elements[type=refund]`). */
const KINDS = ['type', 'status', 'kind', 'event_type', 'category'];
/** Distinct kinds of one array turned into paths, at most. */
const MAX_KINDS = 12;

/**
 * The scalar leaves of the records as dotted paths (4 levels deep), with arrays of objects read through their
 * elements' kind: `events[status=captured].at`. Each path with its first sample value.
 * @example recordPaths([{ id: 'p1', events: [{ status: 'captured', at: 't' }] }]) // Map { 'id' => 'p1', 'events[status=captured].at' => 't' }
 */
export function recordPaths(records: readonly Record<string, unknown>[]): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const r of records) walk(r, '', 0, out);
  return out;
}

function walk(o: Record<string, unknown>, prefix: string, depth: number, out: Map<string, unknown>): void {
  for (const [k, v] of Object.entries(o)) {
    const p = prefix + k;
    if (Array.isArray(v)) {
      if (depth >= 3) continue;
      const kinds = new Set<string>();
      for (const el of v) {
        if (el === null || typeof el !== 'object' || Array.isArray(el)) continue;
        const e = el as Record<string, unknown>;
        const key = KINDS.find(
          (c) => typeof e[c] === 'string' && /^[A-Za-z0-9_.-]{1,40}$/.test(e[c] as string),
        );
        if (key === undefined) continue;
        const sel = `${p}[${key}=${e[key]}]`;
        if (!kinds.has(sel) && kinds.size >= MAX_KINDS) continue;
        kinds.add(sel);
        walk(e, `${sel}.`, depth + 1, out);
      }
    } else if (v !== null && typeof v === 'object') {
      if (depth < 3) walk(v as Record<string, unknown>, `${p}.`, depth + 1, out);
    } else if (!out.has(p) || out.get(p) === '' || out.get(p) === null) out.set(p, v);
  }
}

/**
 * How many of the records hold a value at each of `paths` (read with `get`), and whether each path's values repeat.
 * @example presence(records, ['id'], get) // Map { 'id' => { present: 12, repeats: 0 } }
 */
export function presence(
  records: readonly Record<string, unknown>[],
  paths: readonly string[],
  get: (path: string) => (r: Record<string, unknown>) => unknown,
): Map<string, { present: number; repeats: number; absentIn: Set<number> }> {
  const out = new Map<string, { present: number; repeats: number; absentIn: Set<number> }>();
  for (const p of paths) {
    const g = get(p);
    const seen = new Set<string>();
    const s = { present: 0, repeats: 0, absentIn: new Set<number>() };
    records.forEach((r, i) => {
      const v = g(r);
      if (v === undefined || v === null || v === '') {
        s.absentIn.add(i);
        return;
      }
      s.present++;
      const key = typeof v === 'object' ? JSON.stringify(v) : String(v);
      if (seen.has(key)) s.repeats++;
      else seen.add(key);
    });
    out.set(p, s);
  }
  return out;
}

/** Posting-time kinds of an event array, in the order a first-of tries them. */
export const POSTING_KINDS = [
  'posted',
  'settled',
  'settlement',
  'cleared',
  'clearing',
  'captured',
  'capture',
  'refunded',
  'refund',
];
/** Transaction-time kinds (authorisation). */
export const TXN_KINDS = ['authorized', 'authorization', 'authorisation', 'auth', 'created'];
/** Leaves that hold an event's time. */
export const TIME_LEAVES = ['at', 'created', 'created_at', 'time', 'timestamp', 'occurred_at', 'date'];

/**
 * Array paths of one kind family with a time leaf, in the family's order: `events[status=captured].at`,
 * `events[status=refunded].at` for the posting time.
 */
export function eventTimePaths(paths: Iterable<string>, kinds: readonly string[]): string[] {
  const found: Array<[number, string]> = [];
  for (const p of paths) {
    const m = /^(.+)\[[a-z_]+=([^\]]+)\]\.([a-z_]+)$/i.exec(p);
    if (m === null || !TIME_LEAVES.includes((m[3] as string).toLowerCase())) continue;
    const rank = kinds.indexOf((m[2] as string).toLowerCase());
    if (rank >= 0) found.push([rank, p]);
  }
  return found.sort((a, b) => a[0] - b[0]).map(([, p]) => p);
}

type DraftRule = string | Record<string, unknown>;

/**
 * The amount's own currency: a posted amount read from `x.amount` beside an `x.currency` takes that currency for
 * `currencyCode` (an amount in the merchant's or the cardholder's currency scaled by the other's exponent, or sent
 * under the other's code, is silently wrong), and says so in a TODO.
 * @example pairCurrency(fields, paths, ruleFor) // currencyCode: { from: 'amounts.cardholder.currency', … }
 */
export function pairCurrency(
  fields: Record<string, DraftRule>,
  paths: Map<string, unknown>,
  ruleFor: (field: 'currencyCode', from: string, sample: unknown) => DraftRule,
): void {
  const amount = fields.postedAmount;
  const from = typeof amount === 'string' ? amount : (amount?.from as string | undefined);
  if (from === undefined || from === '?') return;
  const m = /^(.*?)(amount|amt|value)$/i.exec(from);
  const sibling =
    m === null
      ? undefined
      : ['currency', 'currency_code', 'currencyCode'].map((c) => `${m[1]}${c}`).find((p) => paths.has(p));
  const current = fields.currencyCode;
  const now = typeof current === 'string' ? current : (current?.from as string | undefined);
  if (sibling === undefined && (now === undefined || now === '?')) {
    guessCurrency(fields, paths, ruleFor);
    return;
  }
  if (sibling === undefined || sibling === now) return;
  const rule = ruleFor('currencyCode', sibling, paths.get(sibling));
  fields.currencyCode = {
    ...(typeof rule === 'string' ? { from: rule } : rule),
    description: `TODO: the currency beside the amount (${from})${now !== undefined && now !== '?' ? `, not ${now}` : ''}: check they are one`,
  };
}

/**
 * No currency beside the amount and none matched by name: a currency field elsewhere in the records (outside a list),
 * the cardholder's first (what a card's posted amount is billed in), then a settlement's, marked GUESSED with the
 * others named.
 */
function guessCurrency(
  fields: Record<string, DraftRule>,
  paths: Map<string, unknown>,
  ruleFor: (field: 'currencyCode', from: string, sample: unknown) => DraftRule,
): void {
  const rank = (p: string) => (/cardholder/i.test(p) ? 0 : /settle/i.test(p) ? 1 : 2);
  const candidates = [...paths.keys()]
    .filter((p) => !p.includes('[') && /(^|\.)(currency|currency_?code)$/i.test(p))
    .sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  const chosen = candidates[0];
  if (chosen === undefined) return;
  const rule = ruleFor('currencyCode', chosen, paths.get(chosen));
  const others = candidates.slice(1);
  fields.currencyCode = {
    ...(typeof rule === 'string' ? { from: rule } : rule),
    description: `TODO: GUESSED: the currency at ${chosen} (other candidates: ${others.length > 0 ? others.join(', ') : 'none'}): check it is the posted amount's`,
  };
}
