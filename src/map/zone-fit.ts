// A profile's own zone choice for a place (`"states": {"US-TX": "America/Chicago", "ES": "Europe/Madrid"}`) must fit
// it: a country's entry one of the country's zones (the tz database's zone1970.tab, countries-and-timezones), a
// state's entry one of that state's (state-zones.ts) where the table covers the country, and every key a real
// country or state. Checked once at load; the reason names the zones that would fit.
import { getCountry, getTimezone } from 'countries-and-timezones';
import { isCountryAlpha2, toStateCode } from '../model/codes.ts';
import { STATE_ZONES } from './state-zones.ts';

/** Countries whose every subdivision is in STATE_ZONES (Russia's table names only some subjects). */
const COMPLETE = new Set(['US', 'CA', 'AU', 'BR', 'MX']);

const listed = (zones: readonly string[]): string =>
  zones.length > 6 ? `${zones.slice(0, 6).join(', ')} … ${zones.length} zones` : zones.join(', ');

/** The zone's canonical name (a link such as US/Central → America/Chicago) and the countries it is used in. */
function zoneCountries(zone: string): { name: string; countries: readonly string[] } | undefined {
  const tz = getTimezone(zone);
  if (tz === null) return undefined;
  const canonical = tz.aliasOf ? getTimezone(tz.aliasOf) : tz;
  return { name: canonical?.name ?? tz.name, countries: [...tz.countries, ...(canonical?.countries ?? [])] };
}

/**
 * Why `zone` does not fit the place `key` ("US-TX", "ES"), or undefined when it does.
 * @example zoneMisfit('CA-ON', 'America/Vancouver') // 'America/Vancouver is not a zone of CA-ON (America/Toronto, …)'
 */
export function zoneMisfit(key: string, zone: string): string | undefined {
  const [cc, sub] = key.split('-') as [string, string | undefined];
  if (!isCountryAlpha2(cc)) return `${cc} is not an ISO 3166 country code`;
  const country: readonly string[] =
    getCountry(cc as Parameters<typeof getCountry>[0], { deprecated: false })?.timezones ?? [];
  const z = zoneCountries(zone);
  if (sub === undefined) {
    if (z !== undefined && (z.countries.includes(cc) || country.includes(z.name))) return undefined;
    return `${zone} is not a zone of ${cc} (${listed(country)})`;
  }
  const table = STATE_ZONES[cc];
  const code = toStateCode(sub) ?? sub;
  const stateZones = table !== undefined && Object.hasOwn(table, code) ? table[code] : undefined;
  if (stateZones === undefined && table !== undefined && COMPLETE.has(cc))
    return `${sub} is not a state or province of ${cc} (ISO 3166-2: ${Object.keys(table).slice(0, 8).join(', ')}, …)`;
  if (stateZones !== undefined) {
    if (z !== undefined && stateZones.includes(z.name)) return undefined;
    return `${zone} is not a zone of ${cc}-${code} (${listed(stateZones)})`;
  }
  if (z !== undefined && (z.countries.includes(cc) || country.includes(z.name))) return undefined;
  return `${zone} is not a zone of ${cc} (${listed(country)}), so not of ${key}`;
}
