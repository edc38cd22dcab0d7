// A merchant abroad with a "state" that is no subdivision of its country (ISO 3166-2, from the `iso-3166` package's
// list): most often the country's own code, from a `CITY, CC` location split naively into city and state (London,
// GB). Rejected with the reason. A subdivision is written as the service takes a US or Canadian state: its code
// without the country prefix (GB-LND → LND, FR-IDF → IDF), any level of the country's list (region or department).
import { createRequire } from 'node:module';
import { STATE_COUNTRIES } from '../model/code-lists.ts';
import type { FieldError } from '../model/field-error.ts';
import { FIELD_INDEX } from './rule-kit.ts';

const COUNTRY_AT = FIELD_INDEX.get('paymentNetworkMerchantCountryCode') as number;
const STATE_AT = FIELD_INDEX.get('paymentNetworkMerchantState') as number;
const HOME = new Set(STATE_COUNTRIES);

let subdivisions: ReadonlyMap<string, ReadonlySet<string>> | undefined;

/**
 * Per ISO 3166-1 alpha-2 country: its ISO 3166-2 subdivision codes without the prefix (empty: it has none). Read
 * from the package at the first merchant abroad with a state, not at start: its ~5,000 entries cost ~10 ms of CPU
 * that a run without one (or a command that maps nothing) need not pay. require() loads the ES modules at once, so
 * the check stays synchronous.
 */
function subdivisionTable(): ReadonlyMap<string, ReadonlySet<string>> {
  if (subdivisions !== undefined) return subdivisions;
  const require = createRequire(import.meta.url);
  const { iso31661 } = require('iso-3166/1.js') as typeof import('iso-3166/1.js');
  const { iso31662 } = require('iso-3166/2.js') as typeof import('iso-3166/2.js');
  const byCountry = new Map<string, Set<string>>(iso31661.map((c) => [c.alpha2, new Set<string>()]));
  for (const { code } of iso31662) byCountry.get(code.slice(0, 2))?.add(code.slice(3));
  subdivisions = byCountry;
  return byCountry;
}

/** The country's subdivision codes (without the prefix), or undefined for a code that is no ISO 3166-1 country. */
export function subdivisionsOf(country: string): ReadonlySet<string> | undefined {
  return subdivisionTable().get(country);
}

/**
 * Why the record's state is not a subdivision of its merchant's country abroad, or undefined (a state country's
 * states are validated as before; an unknown country is its own error).
 * @example stateAbroadProblem('GB', 'GB') // 'GB is the merchant's country, not a subdivision of it …'
 */
export function stateAbroadProblem(country: string, state: string): string | undefined {
  if (HOME.has(country)) return undefined;
  const known = subdivisionTable().get(country);
  if (known === undefined || known.has(state)) return undefined;
  if (state === country)
    return `${state} is the merchant's country, not a subdivision of it (ISO 3166-2): a "CITY, ${state}" location read as city and state? Leave the state out abroad ("else": null), or read it from where the export keeps it`;
  if (known.size === 0)
    return `${country} has no subdivisions in ISO 3166-2, so ${state} is no state of it: leave the state out for ${country} ("else": null)`;
  const letters = [...known].filter((code) => /^[A-Z]{2,3}$/.test(code));
  const some = (letters.length > 0 ? letters : [...known]).slice(0, 5).join(', ');
  return `${state} is not a subdivision of ${country} (ISO 3166-2, without the "${country}-" prefix: ${some}, …)`;
}

/** `errors` with the state's problem added, when the mapped values hold one. */
export function checkStateAbroad(values: readonly unknown[], errors: FieldError[]): FieldError[] {
  const country = values[COUNTRY_AT];
  const state = values[STATE_AT];
  if (typeof country !== 'string' || typeof state !== 'string') return errors;
  const problem = stateAbroadProblem(country, state);
  if (problem === undefined || errors.some((e) => e.field === 'paymentNetworkMerchantState')) return errors;
  return [...errors, { field: 'paymentNetworkMerchantState', message: problem }];
}
