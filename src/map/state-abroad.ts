// A merchant abroad with a "state" that is no subdivision of its country: most often the country's own code, from a
// `CITY, CC` location split naively into city and state (London, GB). Rejected with the reason; for the countries
// whose subdivisions the tool knows whole outside the state countries (BR, MX: state-zones.ts), any other code too.
import { STATE_COUNTRIES } from '../model/code-lists.ts';
import type { FieldError } from '../model/field-error.ts';
import { FIELD_INDEX } from './rule-kit.ts';
import { STATE_ZONES } from './state-zones.ts';

const COUNTRY_AT = FIELD_INDEX.get('paymentNetworkMerchantCountryCode') as number;
const STATE_AT = FIELD_INDEX.get('paymentNetworkMerchantState') as number;
const HOME = new Set(STATE_COUNTRIES);
/** Countries abroad whose every ISO 3166-2 subdivision is in STATE_ZONES. */
const KNOWN_WHOLE = new Set(['BR', 'MX']);

/**
 * Why the record's state is not a subdivision of its merchant's country abroad, or undefined (a state country's
 * states are validated as before).
 * @example stateAbroadProblem('GB', 'GB') // 'GB is the merchant's country, not a subdivision of it …'
 */
export function stateAbroadProblem(country: string, state: string): string | undefined {
  if (HOME.has(country)) return undefined;
  if (state === country)
    return `${state} is the merchant's country, not a subdivision of it (ISO 3166-2): a "CITY, ${state}" location read as city and state? Leave the state out abroad ("else": null), or read it from where the export keeps it`;
  const table = KNOWN_WHOLE.has(country) ? STATE_ZONES[country] : undefined;
  if (table !== undefined && !Object.hasOwn(table, state))
    return `${state} is not a state of ${country} (ISO 3166-2: ${Object.keys(table).slice(0, 6).join(', ')}, …)`;
  return undefined;
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
