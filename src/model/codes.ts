// Code tables: ISO 4217 currencies (with exponents), ISO 3166 countries, US/Canadian subdivision names.
import * as currencyCodes from 'currency-codes';
// The package's node entry registers ~80 locales at import; code conversion needs none of them.
import * as countries from 'i18n-iso-countries/index.js';

const CURRENCY_EXPONENT = new Map<string, number>();
const CURRENCY_BY_NUMBER = new Map<string, string>();
for (const c of currencyCodes.data) {
  CURRENCY_EXPONENT.set(c.code, c.digits);
  if (c.number) CURRENCY_BY_NUMBER.set(c.number.padStart(3, '0'), c.code);
}

const COUNTRY_ALPHA2 = new Set<string>(Object.keys(countries.getAlpha2Codes()));

/**
 * Minor-unit exponent of an ISO 4217 alpha-3 code (USD 2, JPY 0, KWD 3), or undefined when unknown.
 * @example currencyExponent('KWD') // 3
 */
export function currencyExponent(alpha3: string): number | undefined {
  return CURRENCY_EXPONENT.get(alpha3);
}

/** True for a known ISO 4217 alpha-3 code (uppercase). */
export function isCurrencyCode(alpha3: string): boolean {
  return CURRENCY_EXPONENT.has(alpha3);
}

/**
 * Alpha-3 (any case) or numeric (`840`, `36`) currency → alpha-3 uppercase, or undefined.
 * @example toCurrencyAlpha3('usd') // 'USD'; toCurrencyAlpha3('840') // 'USD'
 */
export function toCurrencyAlpha3(value: string): string | undefined {
  if (/^[0-9]{1,3}$/.test(value)) return CURRENCY_BY_NUMBER.get(value.padStart(3, '0'));
  const up = value.toUpperCase();
  return CURRENCY_EXPONENT.has(up) ? up : undefined;
}

/** True for a known ISO 3166-1 alpha-2 code (uppercase). */
export function isCountryAlpha2(alpha2: string): boolean {
  return COUNTRY_ALPHA2.has(alpha2);
}

/**
 * Alpha-2, alpha-3 (any case) or numeric (`840`) country → alpha-2 uppercase, or undefined.
 * @example toCountryAlpha2('USA') // 'US'; toCountryAlpha2('840') // 'US'
 */
export function toCountryAlpha2(value: string): string | undefined {
  let r: unknown;
  if (/^[0-9]{1,3}$/.test(value)) r = countries.numericToAlpha2(value.padStart(3, '0'));
  else if (value.length === 3) r = countries.alpha3ToAlpha2(value.toUpperCase());
  else if (value.length === 2) r = COUNTRY_ALPHA2.has(value.toUpperCase()) ? value.toUpperCase() : undefined;
  // The library looks codes up in plain objects: 'constructor' would come back as a function.
  return typeof r === 'string' ? r : undefined;
}

const SUBDIVISIONS: Record<string, string> = {
  alabama: 'AL',
  alaska: 'AK',
  arizona: 'AZ',
  arkansas: 'AR',
  california: 'CA',
  colorado: 'CO',
  connecticut: 'CT',
  delaware: 'DE',
  'district of columbia': 'DC',
  florida: 'FL',
  georgia: 'GA',
  hawaii: 'HI',
  idaho: 'ID',
  illinois: 'IL',
  indiana: 'IN',
  iowa: 'IA',
  kansas: 'KS',
  kentucky: 'KY',
  louisiana: 'LA',
  maine: 'ME',
  maryland: 'MD',
  massachusetts: 'MA',
  michigan: 'MI',
  minnesota: 'MN',
  mississippi: 'MS',
  missouri: 'MO',
  montana: 'MT',
  nebraska: 'NE',
  nevada: 'NV',
  'new hampshire': 'NH',
  'new jersey': 'NJ',
  'new mexico': 'NM',
  'new york': 'NY',
  'north carolina': 'NC',
  'north dakota': 'ND',
  ohio: 'OH',
  oklahoma: 'OK',
  oregon: 'OR',
  pennsylvania: 'PA',
  'rhode island': 'RI',
  'south carolina': 'SC',
  'south dakota': 'SD',
  tennessee: 'TN',
  texas: 'TX',
  utah: 'UT',
  vermont: 'VT',
  virginia: 'VA',
  washington: 'WA',
  'west virginia': 'WV',
  wisconsin: 'WI',
  wyoming: 'WY',
  'puerto rico': 'PR',
  guam: 'GU',
  'american samoa': 'AS',
  'u.s. virgin islands': 'VI',
  'us virgin islands': 'VI',
  'virgin islands': 'VI',
  'northern mariana islands': 'MP',
  alberta: 'AB',
  'british columbia': 'BC',
  manitoba: 'MB',
  'new brunswick': 'NB',
  'newfoundland and labrador': 'NL',
  'nova scotia': 'NS',
  ontario: 'ON',
  'prince edward island': 'PE',
  quebec: 'QC',
  québec: 'QC',
  saskatchewan: 'SK',
  'northwest territories': 'NT',
  nunavut: 'NU',
  yukon: 'YT',
  // Australia's states and territories (their zones: src/map/state-zones.ts).
  'new south wales': 'NSW',
  victoria: 'VIC',
  queensland: 'QLD',
  'south australia': 'SA',
  'western australia': 'WA',
  tasmania: 'TAS',
  'australian capital territory': 'ACT',
  'northern territory': 'NT',
};

/**
 * A US state / territory or Canadian province name (any case, extra spaces ignored) → its postal
 * abbreviation; a value that already is 2-3 letters is uppercased. Undefined when unknown.
 * @example toStateCode('Arizona') // 'AZ'; toStateCode('az') // 'AZ'
 */
export function toStateCode(value: string): string | undefined {
  if (/^[A-Za-z]{2,3}$/.test(value)) return value.toUpperCase();
  const key = value.toLowerCase().replace(/\s+/g, ' ').replace(/\.$/, '');
  return Object.hasOwn(SUBDIVISIONS, key) ? SUBDIVISIONS[key] : undefined;
}
