// A field required only for merchants in some countries: `"required": { "countries": ["US", "CA"] }`, or
// `"required": "where-states"` for STATE_COUNTRIES (the merchant's state, which merchants abroad do not have).
import { STATE_COUNTRIES } from '../model/code-lists.ts';
import { isCountryAlpha2 } from '../model/codes.ts';
import type { FieldError } from '../model/field-error.ts';
import { bad, type Env, FIELD_INDEX, isObject, type Json } from './rule-kit.ts';

/** A field required when the record's merchant country is in `countries` (or the country is missing). */
export interface RequiredWhere {
  /** Position of the field in TRANSACTION_FIELDS order. */
  at: number;
  field: string;
  countries: ReadonlySet<string>;
}

const COUNTRY_AT = FIELD_INDEX.get('paymentNetworkMerchantCountryCode') as number;

/** The countries of a `required` value that names some ("where-states", or {countries: […]}), else undefined. */
export function requiredCountries(env: Env, path: string, required: Json | undefined): string[] | undefined {
  if (required === 'where-states') return [...STATE_COUNTRIES];
  if (!isObject(required)) return undefined;
  const list = required.countries;
  for (const k of Object.keys(required))
    if (k !== 'countries') bad(env.source, `${path}.required.${k}`, 'countries', k);
  if (
    !Array.isArray(list) ||
    list.length === 0 ||
    !list.every((c) => typeof c === 'string' && isCountryAlpha2(c))
  )
    bad(env.source, `${path}.required.countries`, 'a non-empty array of ISO 3166 alpha-2 codes', list);
  return list as string[];
}

/**
 * The "required" errors of fields required where the merchant's country says so: a record without the field is
 * refused when its country is one of the list, or has no country (whose own error then says so too).
 */
export function checkRequiredWhere(
  rules: readonly RequiredWhere[],
  values: readonly unknown[],
  errors: FieldError[],
): FieldError[] {
  let out = errors;
  for (const r of rules) {
    if (values[r.at] !== undefined) continue;
    const country = values[COUNTRY_AT];
    if (typeof country === 'string' && !r.countries.has(country)) continue;
    if (out === errors) out = [...errors];
    out.push({
      field: r.field,
      message:
        typeof country === 'string'
          ? `required for a merchant in ${country} (required where the country is ${[...r.countries].join(', ')})`
          : 'required',
    });
  }
  return out;
}
