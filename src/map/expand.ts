// `expand`: one source record → one notification per element of an array that matches a filter (a payment's
// `elements[]`, an authorisation's `events[]`), each read from the element and from its parent record.
import { quote } from '../model/quote.ts';
import type { Getter } from './path.ts';
import { bad, type Env, getterAt, isObject, type Json } from './rule-kit.ts';

/** Where a view of one element keeps the element's position in the array (read by the id suffix). */
export const ELEMENT_INDEX: unique symbol = Symbol('element index');

/**
 * What `expand` makes of one record: a view per matching element (the record's own keys, the element under
 * `as`, its position under ELEMENT_INDEX), or why none matched.
 */
export type Expansion = Array<Record<string | symbol, unknown>> | { none: string };

export interface CompiledExpand {
  /** The array's path, as the profile wrote it. */
  from: string;
  /** The key the element is read under (`element.amount`). */
  as: string;
  /**
   * `auto` (the default): the transactionId rule's value as it is when the record yields one notification, + `:` +
   * the element's position when it yields several; `suffix`: always suffixed; `rule`: the rule's value as it is.
   */
  id: 'auto' | 'suffix' | 'rule';
  expand(rec: Record<string, unknown>): Expansion;
}

/**
 * `"expand": {"from": "elements", "where": {"type": ["settlement", "refund"]}, "as": "element", "id": "suffix"}`
 * compiled. `where`: element path → a value or a list of values, compared as text; every key must match.
 * @example compileExpand({ source: 'p.json' }, { from: 'events', where: { status: 'captured' } })
 */
export function compileExpand(env: Env, o: Json): CompiledExpand {
  if (!isObject(o)) bad(env.source, 'expand', 'an object {"from": "elements", "where": {…}}', o);
  for (const k of Object.keys(o))
    if (!['from', 'where', 'as', 'id', 'description'].includes(k))
      bad(env.source, `expand.${k}`, 'one of from, where, as, id, description', k);
  if (typeof o.from !== 'string' || o.from === '')
    bad(env.source, 'expand.from', 'the path of an array ("elements", "events")', o.from);
  const as = o.as ?? 'element';
  if (typeof as !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(as))
    bad(env.source, 'expand.as', 'a key name such as "element"', as);
  const id = o.id ?? 'auto';
  if (id !== 'auto' && id !== 'suffix' && id !== 'rule')
    bad(env.source, 'expand.id', '"auto", "suffix" or "rule"', id);
  const array: Getter = getterAt(env, 'expand.from', o.from);
  const tests: Array<{ get: Getter; values: Set<string> }> = [];
  if (o.where !== undefined) {
    if (!isObject(o.where) || Object.keys(o.where).length === 0)
      bad(env.source, 'expand.where', 'an object {"type": ["settlement", "refund"]}', o.where);
    for (const [k, v] of Object.entries(o.where)) {
      const list = Array.isArray(v) ? v : [v];
      if (list.length === 0 || !list.every((x) => ['string', 'number', 'boolean'].includes(typeof x)))
        bad(env.source, `expand.where.${k}`, 'a value or a list of values', v);
      tests.push({ get: getterAt(env, `expand.where.${k}`, k), values: new Set(list.map(String)) });
    }
  }
  const from = o.from;
  const filter =
    o.where === undefined
      ? ''
      : ` whose ${Object.entries(o.where)
          .map(([k, v]) => `${k} is ${JSON.stringify(v)}`)
          .join(' and ')}`;
  return {
    from,
    as,
    id,
    expand(rec) {
      if (Object.hasOwn(rec, as))
        return { none: `the record has a key ${quote(as)} of its own: give "expand.as" another name` };
      const arr = array(rec);
      if (!Array.isArray(arr)) return { none: `no array at ${from} to expand` };
      const out: Array<Record<string | symbol, unknown>> = [];
      for (let i = 0; i < arr.length; i++) {
        const el = arr[i];
        if (!isObject(el)) continue;
        let ok = true;
        for (const t of tests) {
          const v = t.get(el as Record<string, unknown>);
          if (v === undefined || v === null || typeof v === 'object' || !t.values.has(String(v).trim())) {
            ok = false;
            break;
          }
        }
        if (!ok) continue;
        const view: Record<string | symbol, unknown> = { ...rec, [as]: el };
        view[ELEMENT_INDEX] = i;
        out.push(view);
      }
      // One notification keeps the processor's id (auto): only several need the position to tell them apart.
      if (id === 'auto' && out.length === 1) delete (out[0] as Record<symbol, unknown>)[ELEMENT_INDEX];
      return out.length > 0 ? out : { none: `no element of ${from}${filter} (${arr.length} elements)` };
    },
  };
}
