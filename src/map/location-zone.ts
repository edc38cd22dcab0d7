// A timestamp's zone from where the merchant is (`"zone": {"country": "…", "state": "…"}`): the country's zones
// from countries-and-timezones (the tz database's zone1970.tab), a state's from state-zones.ts; a location that
// cannot decide the zone is a reject saying why, never a guess.
import { getCountry } from 'countries-and-timezones';
import { toCountryAlpha2, toStateCode } from '../model/codes.ts';
import { quote } from '../model/quote.ts';
import type { Getter } from './path.ts';
import { pathText } from './path.ts';
import {
  bad,
  type ColumnRef,
  type Env,
  getterAt,
  isEmpty,
  isObject,
  type Json,
  MapFail,
  scalarToString,
} from './rule-kit.ts';
import { STATE_ZONES } from './state-zones.ts';
import { type OffsetFn, zoneOffset } from './timestamp.ts';
import { zoneMisfit } from './zone-fit.ts';

/** Zones that agree on the UTC offset every 6 hours from FROM to UNTIL count as one (the first named). */
const FROM = Date.UTC(2010, 0, 1);
const UNTIL = Date.UTC(2038, 0, 1);
const STEP = 6 * 3600 * 1000;
const agreeing = new Map<string, string | null>();

function offsetsOf(zone: string): (ms: number) => string {
  const dtf = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset' });
  return (ms) => dtf.format(ms).slice(-9);
}

/**
 * The one zone standing for `zones` when they all agree on the offset from 2010 to 2037 (sampled every 6 hours),
 * else null. Computed once per list.
 * @example oneZone(['America/Halifax', 'America/Glace_Bay']) // 'America/Halifax'
 */
export function oneZone(zones: readonly string[]): string | null {
  const key = zones.join(',');
  const hit = agreeing.get(key);
  if (hit !== undefined) return hit;
  let out: string | null = zones[0] ?? null;
  if (zones.length > 1) {
    const fns = zones.map(offsetsOf);
    const first = fns[0] as (ms: number) => string;
    outer: for (let t = FROM; t < UNTIL; t += STEP) {
      const o = first(t);
      for (let i = 1; i < fns.length; i++)
        if ((fns[i] as (ms: number) => string)(t) !== o) {
          out = null;
          break outer;
        }
    }
  }
  agreeing.set(key, out);
  return out;
}

/** The country's zones (zone1970.tab, links left out); undefined for a code the library does not know. */
export function countryZones(alpha2: string): readonly string[] | undefined {
  return getCountry(alpha2 as Parameters<typeof getCountry>[0], { deprecated: false })?.timezones;
}

const listed = (zones: readonly string[]): string =>
  zones.length > 4 ? `${zones.slice(0, 4).join(', ')} … ${zones.length} zones` : zones.join(', ');

/**
 * The zone of one location: `states` (the profile's own choices, "US-TX" or a country "ES") first, then the
 * country's one zone, then its state's one zone. Throws MapFail saying why the location cannot decide.
 */
export function locationZone(
  country: string,
  state: string | undefined,
  states: ReadonlyMap<string, string>,
  statePath: string | undefined,
): string {
  const cc = toCountryAlpha2(country);
  if (cc === undefined) throw new MapFail(`unknown merchant country ${quote(country)} to take the zone from`);
  const settled = states.get(cc);
  if (settled !== undefined) return settled;
  const zones = countryZones(cc);
  if (zones === undefined || zones.length === 0)
    throw new MapFail(`no time zone is known for the merchant country ${cc}`);
  const one = oneZone(zones);
  if (one !== null) return one;
  const several = `${cc} has several time zones (${listed(zones)})`;
  if (state === undefined)
    throw new MapFail(
      statePath === undefined
        ? `${several}: the merchant's state decides, and the rule names no "state"`
        : `${several}: the merchant's state (${statePath}) decides, and this record has none`,
    );
  const raw = state.toUpperCase().startsWith(`${cc}-`) ? state.slice(cc.length + 1) : state;
  const code = toStateCode(raw.trim()) ?? raw.trim().toUpperCase();
  const chosen = states.get(`${cc}-${code}`);
  if (chosen !== undefined) return chosen;
  const table = STATE_ZONES[cc];
  if (table === undefined)
    throw new MapFail(
      `${several} and the tool has no table of its states: name the zone in "states" ("${cc}-${code}": …)`,
    );
  const stateZones = Object.hasOwn(table, code) ? table[code] : undefined;
  if (stateZones === undefined)
    throw new MapFail(
      `no time zone is known for the state ${quote(state)} of ${cc} (a code such as ${Object.keys(table)[0]}, or name its zone in "states")`,
    );
  const single = oneZone(stateZones);
  if (single !== null) return single;
  throw new MapFail(
    `${cc}-${code} spans several time zones (${listed(stateZones)}): name its zone in "states" ("${cc}-${code}": …) if its merchants are all in one`,
  );
}

/** Distinct locations kept resolved (an export has a few hundred; a hostile one cannot grow it past this). */
const CACHE_LIMIT = 5000;

/**
 * `"zone": {"country": path, "state": path, "states": {"US-TX": "America/Chicago", …}}` compiled: the record →
 * its zone's offset function (each distinct location resolved once), and the columns it reads.
 * @example compileLocationZone(env, 'fields.transactionTimestamp.timestamp.zone', { country: 'merchant.country', state: 'merchant.state' })
 */
export function compileLocationZone(
  env: Env,
  p: string,
  o: Record<string, Json>,
): { zoneOf: (rec: Record<string, unknown>) => OffsetFn; columns: ColumnRef[] } {
  for (const k of Object.keys(o))
    if (!['country', 'state', 'states'].includes(k))
      bad(env.source, `${p}.${k}`, 'country, state or states', k);
  if (typeof o.country !== 'string' || o.country === '')
    bad(env.source, `${p}.country`, 'the path of the merchant country', o.country);
  if (o.state !== undefined && (typeof o.state !== 'string' || o.state === ''))
    bad(env.source, `${p}.state`, 'the path of the merchant state or province', o.state);
  const states = new Map<string, string>();
  if (o.states !== undefined) {
    if (!isObject(o.states))
      bad(env.source, `${p}.states`, 'an object {"US-TX": "America/Chicago", …}', o.states);
    for (const [k, z] of Object.entries(o.states)) {
      if (!/^[A-Z]{2}(-[A-Z0-9]{1,3})?$/.test(k))
        bad(env.source, `${p}.states.${k}`, 'a country ("ES") or country-state ("US-TX") code', k);
      try {
        if (typeof z !== 'string') throw new Error('not a string');
        zoneOffset(z);
      } catch {
        bad(env.source, `${p}.states.${k}`, 'an IANA zone name such as "America/Chicago"', z);
      }
      const misfit = zoneMisfit(k, z as string);
      if (misfit !== undefined)
        bad(env.source, `${p}.states.${k}`, `a zone of the place its key names (${misfit})`, z);
      states.set(k, z as string);
    }
  }
  const country: Getter = getterAt(env, `${p}.country`, o.country as string);
  const statePath = o.state as string | undefined;
  const state: Getter | undefined =
    statePath === undefined ? undefined : getterAt(env, `${p}.state`, statePath);
  const columns: ColumnRef[] = [{ column: pathText(o.country as string), rule: `${p}.country` }];
  if (statePath !== undefined) columns.push({ column: pathText(statePath), rule: `${p}.state` });
  const resolved = new Map<string, OffsetFn | string>();
  return {
    columns,
    zoneOf: (rec) => {
      const c = country(rec);
      if (isEmpty(c)) throw new MapFail(`no merchant country (${o.country}) to take the zone from`);
      const s = state === undefined ? undefined : state(rec);
      const cs = scalarToString(c).trim();
      const ss = isEmpty(s) ? undefined : scalarToString(s).trim();
      const key = ss === undefined ? cs : `${cs}\u0000${ss}`;
      let hit = resolved.get(key);
      if (hit === undefined) {
        try {
          hit = zoneOffset(locationZone(cs, ss, states, statePath));
        } catch (err) {
          if (!(err instanceof MapFail)) throw err;
          hit = err.message;
        }
        if (resolved.size >= CACHE_LIMIT) resolved.clear();
        resolved.set(key, hit);
      }
      if (typeof hit === 'string') throw new MapFail(hit);
      return hit;
    },
  };
}
