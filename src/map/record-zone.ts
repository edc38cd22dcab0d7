// A time zone read from each record (`"timestamp": { "zone": "{tz}" }`): an IANA name, an abbreviation of
// ZONE_ABBREVIATIONS, or a UTC offset, resolved once per distinct value.
import { quote } from '../model/quote.ts';
import { MapFail } from './rule-kit.ts';
import { type OffsetFn, ZONE_ABBREVIATIONS, zoneOffset } from './timestamp.ts';

/** `{path}`: the zone is read from the record at that path. */
const FROM_RECORD = /^\{([^{}]+)\}$/;

/**
 * The path of a zone written as `{path}` (read from each record), or undefined for a fixed zone.
 * @example recordZonePath('{tz}') // 'tz'
 */
export function recordZonePath(zone: string): string | undefined {
  return FROM_RECORD.exec(zone.trim())?.[1]?.trim();
}

/** `+05:30`, `-0700`, `+5`, `UTC-07:00`, `GMT+1`: sign, hours, optional minutes. */
const OFFSET = /^(?:UTC|GMT)?\s*([+-])(\d{1,2})(?::?(\d{2}))?$/i;
const resolved = new Map<string, OffsetFn>();
/** Distinct values kept resolved (an export has a handful; a hostile one cannot grow the cache past this). */
const CACHE_LIMIT = 1000;

function fixed(minutes: number): OffsetFn {
  return () => minutes;
}

function resolve(text: string): OffsetFn | undefined {
  const upper = text.toUpperCase();
  if (Object.hasOwn(ZONE_ABBREVIATIONS, upper)) return fixed(ZONE_ABBREVIATIONS[upper] as number);
  const m = OFFSET.exec(text);
  if (m !== null) {
    const h = Number(m[2]);
    const min = m[3] === undefined ? 0 : Number(m[3]);
    if (h > 18 || min > 59) return undefined;
    return fixed((m[1] === '-' ? -1 : 1) * (h * 60 + min));
  }
  // An IANA name (Intl knows them, in any case: america/chicago too).
  if (!/^[A-Za-z][A-Za-z0-9_+/-]{0,63}$/.test(text)) return undefined;
  try {
    return zoneOffset(text);
  } catch {
    return undefined;
  }
}

/**
 * The zone a record names: an abbreviation (MST, PDT: a fixed offset, so each side of a DST change says which
 * it is), an offset, or an IANA name (America/Denver: the offset in force at that local time). Throws MapFail
 * for anything else.
 * @example recordZoneOffset('PDT')(0) // -420
 */
export function recordZoneOffset(text: string): OffsetFn {
  const hit = resolved.get(text);
  if (hit !== undefined) return hit;
  const fn = resolve(text);
  if (fn === undefined)
    throw new MapFail(
      `unknown time zone ${quote(text)} (an IANA name such as America/Denver, an abbreviation such as MST, or an offset such as -07:00)`,
    );
  if (resolved.size >= CACHE_LIMIT) resolved.clear();
  resolved.set(text, fn);
  return fn;
}
