// One field's rule: its source, options and conversion, compiled into one step.
import { TRANSACTION_FIELDS, type TransactionField } from '../model/transaction.ts';
import { compileConversion, conversionColumns } from './convert.ts';
import { compileExtract } from './extract.ts';
import { compileFirst } from './first-of.ts';
import { checkNoOps, conversionKind } from './no-ops.ts';
import { requiredCountries } from './required-where.ts';
import {
  bad,
  type ColumnRef,
  checkOutputValue,
  type Env,
  isEmpty,
  isObject,
  type Json,
  NO_MATCH,
  RULE_KEYS,
  type Step,
  scalarToString,
} from './rule-kit.ts';
import { compileSource } from './source.ts';

/** What one compiled rule brings to its profile. */
export interface CompiledRule {
  step: Step;
  columns: ColumnRef[];
  hasDefault: boolean;
  /** The rule's own `required` (absent = the field's default). */
  required?: boolean;
  /** Required only for merchants in these countries (`"required": "where-states"` or `{countries}`). */
  requiredIn?: string[];
  /** The columns are alternatives (`first`): none of them is needed on its own. */
  anyOf?: boolean;
}

export function compileRule(
  env: Env,
  field: TransactionField,
  rule: Json,
  path = `fields.${field}`,
): CompiledRule {
  const r: Record<string, Json> =
    typeof rule === 'string'
      ? { from: rule }
      : isObject(rule)
        ? rule
        : bad(env.source, path, 'a column name or a rule object', rule);
  for (const k of Object.keys(r)) {
    if (!(RULE_KEYS as readonly string[]).includes(k))
      bad(env.source, `${path}.${k}`, `one of ${RULE_KEYS.join(', ')}`, k);
  }
  const extract = r.split !== undefined || r.match !== undefined;
  if (r.else !== undefined && r.enum === undefined && !extract)
    bad(env.source, `${path}.else`, 'else only together with enum, split or match', r.else);
  if (extract && (r.const !== undefined || r.hash !== undefined))
    bad(
      env.source,
      r.split !== undefined ? `${path}.split` : `${path}.match`,
      'split and match only with from or template',
      r.split ?? r.match,
    );
  if (r.description !== undefined && typeof r.description !== 'string')
    bad(env.source, `${path}.description`, 'a string', r.description);
  const requiredIn = requiredCountries(env, path, r.required);
  const required = requiredIn === undefined ? r.required : undefined;
  if (required !== undefined && typeof required !== 'boolean')
    bad(
      env.source,
      `${path}.required`,
      'true or false, "where-states" or {"countries": ["US", …]}',
      required,
    );
  // The ledger, resume and the duplicate check all key on the id: it can never be left out.
  if ((required === false || requiredIn !== undefined) && field === 'transactionId')
    bad(env.source, `${path}.required`, 'true (every record needs its transactionId)', r.required);
  const own = requiredIn !== undefined ? { requiredIn } : required === undefined ? {} : { required };
  if (r.first !== undefined)
    return { ...compileFirst(env, field, path, r, compileRule), ...own, anyOf: true };
  checkNoOps(env, path, r, conversionKind(r, TRANSACTION_FIELDS[field]));
  const source = compileSource(env, path, r);
  const columns = source.columns;
  let get = source.get;
  // The else value stands in for a value split or match cannot take apart (enum handles its own).
  const extractElse = extract && r.else !== undefined;
  if (extractElse) checkOutputValue(env, `${path}.else`, field, r.else);
  if (extract) get = compileExtract(env, path, r, get, extractElse);
  if (r.slice !== undefined) {
    const sl = r.slice;
    if (
      !Array.isArray(sl) ||
      sl.length < 1 ||
      sl.length > 2 ||
      !sl.every((n) => typeof n === 'number' && Number.isInteger(n))
    ) {
      bad(
        env.source,
        `${path}.slice`,
        '[start] or [start, end] (integers, negative counts from the end)',
        sl,
      );
    }
    const [a, b] = sl as number[];
    const inner = get;
    get = (rec) => {
      const v = inner(rec);
      return isEmpty(v) || v === NO_MATCH ? v : scalarToString(v).trim().slice(a, b);
    };
  }
  if (r.const !== undefined) {
    checkOutputValue(env, `${path}.const`, field, r.const);
    const value = r.const;
    return { step: { field, run: () => value }, columns: [], hasDefault: true, ...own };
  }
  if (r.default !== undefined) checkOutputValue(env, `${path}.default`, field, r.default);
  const dflt = r.default === null ? undefined : r.default;
  if (r.hash !== undefined) {
    return { step: { field, run: get }, columns, hasDefault: false, ...own };
  }
  if (r.from === undefined && r.template === undefined) {
    // `{"default": null}` with a `required` is a field the export never has: said as plainly as `{"const": null}`.
    if (dflt === undefined && !(r.default === null && r.required !== undefined))
      bad(
        env.source,
        path,
        'a source: from, template, const, hash (or a default; for a field the export never has, {"default": null} with "required": false, or "required": "where-states" for a state)',
        r,
      );
    return { step: { field, run: () => dflt }, columns: [], hasDefault: true, ...own };
  }
  const convert = compileConversion(env, path, field, r);
  columns.push(...conversionColumns(env, path, r));
  const otherwise = r.else === null ? undefined : r.else;
  const step: Step = {
    field,
    run: extractElse
      ? (rec, tx) => {
          const v = get(rec);
          if (v === NO_MATCH) return otherwise;
          if (v === undefined || v === null || v === '' || (typeof v === 'string' && v.trim() === ''))
            return dflt;
          const out = convert(v, tx, rec);
          return out === '' ? dflt : out;
        }
      : (rec, tx) => {
          const v = get(rec);
          if (v === undefined || v === null || v === '' || (typeof v === 'string' && v.trim() === ''))
            return dflt;
          const out = convert(v, tx, rec);
          return out === '' ? dflt : out;
        },
  };
  return { step, columns, hasDefault: dflt !== undefined, ...own };
}
