// `first`: a rule that names several sources in order, each with its own options and conversion, and takes the
// first that yields a value.
import type { TransactionField } from '../model/transaction.ts';
import {
  bad,
  type ColumnRef,
  checkOutputValue,
  type Env,
  isObject,
  type Json,
  MapFail,
  type Step,
} from './rule-kit.ts';

/** Keys that may stand beside `first` (everything else belongs to one of its sources). */
const BESIDE_FIRST = new Set(['first', 'default', 'required', 'description']);
/** Keys a source of `first` may not hold: they speak for the whole rule. */
const WHOLE_RULE = ['first', 'default', 'required'] as const;

/** Compiles one source of `first` as a rule of its own (rule.ts's compileRule, passed in to avoid a cycle). */
export type CompileSource = (
  env: Env,
  field: TransactionField,
  rule: Json,
  path: string,
) => { step: Step; columns: ColumnRef[] };

/**
 * `"first": [rule, rule, …]`: each source is a rule of its own (a column name, or an object with a source, its
 * options and its conversion); the first whose result is a value wins. A source that yields nothing (missing,
 * empty, an `else: null`) hands over to the next; one that fails (an unknown enum value, a bad date) rejects the
 * record, the source named, as the same rule alone would. None yields: the rule's `default`, else missing.
 * @example { "first": ["POSTED_AT", { "from": "events[status=captured].at", "timestamp": true }] }
 */
export function compileFirst(
  env: Env,
  field: TransactionField,
  path: string,
  r: Record<string, Json>,
  compileSource: CompileSource,
): { step: Step; columns: ColumnRef[]; hasDefault: boolean } {
  for (const k of Object.keys(r))
    if (!BESIDE_FIRST.has(k))
      bad(
        env.source,
        `${path}.${k}`,
        'only default, required or description beside first (put options and conversions in each source)',
        k,
      );
  const list = r.first;
  if (!Array.isArray(list) || list.length < 2)
    bad(env.source, `${path}.first`, 'a list of two or more sources (column names or rules)', list);
  const steps: Step[] = [];
  const columns: ColumnRef[] = [];
  for (const [i, entry] of list.entries()) {
    const at = `${path}.first[${i}]`;
    if (isObject(entry))
      for (const k of WHOLE_RULE)
        if (entry[k] !== undefined)
          bad(env.source, `${at}.${k}`, `no ${k} in a source of first (it belongs beside first)`, entry[k]);
    const c = compileSource(env, field, entry, at);
    steps.push(c.step);
    columns.push(...c.columns);
  }
  if (r.default !== undefined) checkOutputValue(env, `${path}.default`, field, r.default);
  const dflt = r.default === null ? undefined : r.default;
  const n = steps.length;
  return {
    columns,
    hasDefault: dflt !== undefined,
    step: {
      field,
      run: (rec, tx) => {
        for (let i = 0; i < n; i++) {
          let v: unknown;
          try {
            v = (steps[i] as Step).run(rec, tx);
          } catch (err) {
            if (err instanceof MapFail) throw new MapFail(`first[${i}]: ${err.message}`);
            throw err;
          }
          if (v !== undefined && v !== null) return v;
        }
        return dflt;
      },
    },
  };
}
