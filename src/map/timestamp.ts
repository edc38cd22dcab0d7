// Timestamps: Unix, ISO 8601, local strings in an IANA zone or with a zone abbreviation → ISO 8601 UTC with ms.
import { quote } from '../model/quote.ts';
import { isUtcTimestamp } from '../validate/validate.ts';
import { MapFail } from './rule-kit.ts';

/**
 * Zone abbreviations understood in a value (`2025-10-09 11:20:33 MST`), as fixed UTC offsets in
 * minutes. Ambiguous ones (IST, CST in China, BST in Bangladesh...) take their North American /
 * European meaning listed here; anything else is refused.
 * @example ZONE_ABBREVIATIONS.MST // -420
 */
export const ZONE_ABBREVIATIONS: Readonly<Record<string, number>> = {
  UTC: 0,
  GMT: 0,
  Z: 0,
  EST: -300,
  EDT: -240,
  CST: -360,
  CDT: -300,
  MST: -420,
  MDT: -360,
  PST: -480,
  PDT: -420,
  AKST: -540,
  AKDT: -480,
  HST: -600,
  HDT: -540,
  AST: -240,
  ADT: -180,
  NST: -210,
  NDT: -150,
  WET: 0,
  WEST: 60,
  BST: 60,
  CET: 60,
  CEST: 120,
  EET: 120,
  EEST: 180,
  JST: 540,
  AEST: 600,
  AEDT: 660,
};

/** A zone: an IANA name (`America/Phoenix`), `UTC`, or a fixed offset (`+05:30`, `-0700`). */
export type ZoneSpec = string;

/** Offset of a zone at a UTC instant, in minutes east of UTC. */
export type OffsetFn = (utcMs: number) => number;

const OFFSET = /^([+-])(\d{2}):?(\d{2})$/;
const zoneCache = new Map<string, OffsetFn>();
// Offsets only change at zone transitions; a 15-minute bucket is finer than any transition rule.
const BUCKET_MS = 15 * 60 * 1000;

/**
 * A zone with DST rules of a place (an IANA name), not a fixed offset or UTC: a fixed offset written for a whole
 * export is the export's zone, which the merchants' places cannot contradict.
 * @example isNamedZone('America/Chicago') // true; isNamedZone('-07:00') // false
 */
export function isNamedZone(zone: string): boolean {
  return !OFFSET.test(zone) && !/^(UTC|Z|GMT|Etc\/UTC)$/i.test(zone);
}

/**
 * Resolve a zone once into a cached offset function (Intl does the zone math; results are cached per
 * 15-minute bucket). Throws a RangeError naming the zone when it is unknown.
 * @example zoneOffset('America/Phoenix')(Date.UTC(2025, 9, 9)) // -420
 */
export function zoneOffset(zone: ZoneSpec): OffsetFn {
  const cached = zoneCache.get(zone);
  if (cached) return cached;
  let fn: OffsetFn;
  const fixed = OFFSET.exec(zone);
  if (fixed) {
    const minutes = (fixed[1] === '-' ? -1 : 1) * (Number(fixed[2]) * 60 + Number(fixed[3]));
    fn = () => minutes;
  } else if (zone === 'UTC' || zone === 'Z') {
    fn = () => 0;
  } else {
    let dtf: Intl.DateTimeFormat;
    try {
      dtf = new Intl.DateTimeFormat('en-US', {
        timeZone: zone,
        hourCycle: 'h23',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
      });
    } catch {
      throw new RangeError(`unknown time zone ${JSON.stringify(zone)}`);
    }
    const buckets = new Map<number, number>();
    fn = (utcMs) => {
      const bucket = Math.floor(utcMs / BUCKET_MS);
      const hit = buckets.get(bucket);
      if (hit !== undefined) return hit;
      const at = bucket * BUCKET_MS;
      const p: Record<string, number> = {};
      for (const part of dtf.formatToParts(at))
        if (part.type !== 'literal') p[part.type] = Number(part.value);
      const local = Date.UTC(
        p.year ?? 0,
        (p.month ?? 1) - 1,
        p.day ?? 1,
        p.hour ?? 0,
        p.minute ?? 0,
        p.second ?? 0,
      );
      const offset = Math.round((local - at) / 60000);
      if (buckets.size > 100_000) buckets.clear();
      buckets.set(bucket, offset);
      return offset;
    };
  }
  zoneCache.set(zone, fn);
  return fn;
}

/**
 * What a local time that names no single instant becomes (the hour repeated when clocks go back, or the hour
 * skipped when they go forward): `earlier` the earlier of its two readings, `later` the later, `reject` (the
 * default) a reject saying so. A profile's `"ambiguous"` (on a timestamp rule) or `"ambiguousTime"` (at the top).
 */
export type Ambiguous = 'earlier' | 'later' | 'reject';
export const AMBIGUOUS_CHOICES: readonly Ambiguous[] = ['earlier', 'later', 'reject'];

/**
 * Counts of timestamp reads worth a warning, kept by the converters (a thread's own): local times in a DST repeated
 * hour or in a DST gap (whatever the profile chose for them), and local times read in a profile's one fixed zone.
 * `mapping check`, `map` and `send` read them.
 * @example const before = TIME_READS.repeatedHour; … ; TIME_READS.repeatedHour - before
 */
export const TIME_READS = {
  repeatedHour: 0,
  gap: 0,
  fixedZoneLocal: 0,
  /** The repeated-hour and gap reads by field (a rule's conversion counts its own). */
  repeatedByField: {} as Record<string, number>,
};

/**
 * Wall-clock time in a zone → UTC epoch ms. A time in a DST repeated hour (two instants) or in a gap (none: read
 * with the offset before or after the change, one hour apart) is counted and decided by `ambiguous`: the earlier
 * instant, the later, or a MapFail (`reject`).
 */
export function localToUtc(
  wallMs: number,
  offsetAt: OffsetFn,
  ambiguous: Ambiguous = 'reject',
  raw: unknown = isoLocal(wallMs),
): number {
  const before = offsetAt(wallMs - 86_400_000);
  const after = offsetAt(wallMs + 86_400_000);
  if (before === after) return wallMs - before * 60000;
  // A transition is near: try both offsets.
  const a = wallMs - before * 60000;
  const b = wallMs - after * 60000;
  const aOk = offsetAt(a) === before;
  const bOk = offsetAt(b) === after;
  if (aOk && bOk && a === b) return a;
  if (aOk !== bOk) return aOk ? a : b;
  const repeated = aOk && bOk;
  if (repeated) TIME_READS.repeatedHour++;
  else TIME_READS.gap++;
  if (ambiguous === 'earlier') return Math.min(a, b);
  if (ambiguous === 'later') return Math.max(a, b);
  const which = repeated ? 'repeat (it happened twice:' : 'skip (it never happened; read as';
  throw new MapFail(
    `${quote(raw)} is a local time in the hour the clocks ${which} ${isoFromMs(Math.min(a, b))} or ${isoFromMs(Math.max(a, b))}): ambiguous, rejected ("ambiguous": "reject", the default; "earlier" or "later" decides)`,
  );
}

/** A wall-clock time as `YYYY-MM-DD HH:mm:ss` (for messages). */
function isoLocal(wallMs: number): string {
  return isoFromMs(wallMs).slice(0, 19).replace('T', ' ');
}

/** First instant of year 10000: ISO 8601 output has four year digits. */
const MAX_MS = Date.UTC(10000, 0, 1);

const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Parsed wall-clock parts; zone = minutes offset when the value carried one. */
interface Parts {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  ms: number;
  offset?: number;
}

function partsToUtc(p: Parts, offsetAt: OffsetFn | undefined, raw: unknown, ambiguous: Ambiguous): number {
  if (p.year < 1970 || p.year > 9999 || p.month < 1 || p.month > 12 || p.day < 1) {
    throw new MapFail(`not a real date: ${quote(raw)}`);
  }
  const leap = p.year % 4 === 0 && (p.year % 100 !== 0 || p.year % 400 === 0);
  const maxDay = p.month === 2 && !leap ? 28 : (DAYS_IN_MONTH[p.month - 1] as number);
  if (p.day > maxDay || p.hour > 23 || p.minute > 59 || p.second > 59) {
    throw new MapFail(`not a real date and time: ${quote(raw)}`);
  }
  const wall = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second, p.ms);
  if (p.offset !== undefined) return wall - p.offset * 60000;
  if (offsetAt === undefined) {
    throw new MapFail(
      `${quote(raw)} has no UTC offset and neither the record nor the profile names a zone ("zone" or "timeZone")`,
    );
  }
  return localToUtc(wall, offsetAt, ambiguous, raw);
}

function fractionToMs(frac: string | undefined): number {
  if (!frac) return 0;
  return Number(frac.length >= 3 ? frac.slice(0, 3) : frac.padEnd(3, '0'));
}

function zoneToOffset(z: string | undefined, raw: unknown): number | undefined {
  if (z === undefined || z === '') return undefined;
  const c = z.charCodeAt(0);
  if (c === 43 || c === 45) {
    // +hh, +hhmm, +hh:mm
    const sign = c === 45 ? -1 : 1;
    const digits = z.slice(1).replace(':', '');
    const h = Number(digits.slice(0, 2));
    const m = digits.length > 2 ? Number(digits.slice(2, 4)) : 0;
    if (h > 18 || m > 59) throw new MapFail(`bad UTC offset in ${quote(raw)}`);
    return sign * (h * 60 + m);
  }
  const upper = z.toUpperCase();
  const off = Object.hasOwn(ZONE_ABBREVIATIONS, upper) ? ZONE_ABBREVIATIONS[upper] : undefined;
  if (off === undefined) throw new MapFail(`unknown zone abbreviation ${quote(z)} in ${quote(raw)}`);
  return off;
}

const ISO =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?\s*(Z|z|[+-]\d{2}(?::?\d{2})?|[A-Za-z]{3,4})?$/;
const UNIX = /^(\d{1,14})(?:\.(\d{1,9}))?$/;

function unixToMs(value: unknown, unit: 's' | 'ms' | 'auto'): number {
  const s =
    typeof value === 'number' && Number.isFinite(value)
      ? String(value)
      : typeof value === 'string'
        ? value
        : '';
  const m = UNIX.exec(s);
  if (m === null) throw new MapFail(`expected a Unix time, got ${quote(value)}`);
  const int = m[1] as string;
  // Auto: up to 11 digits are seconds (until year 5138), more are milliseconds.
  const seconds = unit === 's' || (unit === 'auto' && int.length <= 11);
  return seconds ? Number(int) * 1000 + fractionToMs(m[2]) : Number(int);
}

/**
 * How a timestamp value is read.
 * - 'auto' (default): a Unix time (number or digits; up to 11 digits = seconds, else ms) or ISO 8601
 *   (`T` or space; offset, `Z`, a zone abbreviation, or none = local in the zone)
 * - 'iso', 'unix-s', 'unix-ms'
 * - a pattern of tokens YYYY MM M DD D HH H hh h mm ss SSS A Z z with any other text literal
 *   (a space matches one or more spaces), e.g. `MM/DD/YYYY hh:mm:ss A`
 * @example { format: 'YYYY-MM-DD HH:mm:ss', zone: 'America/Phoenix' }
 */
export interface TimestampOptions {
  format: string;
  zone?: ZoneSpec;
  /** A local time in a DST repeated hour or gap (default `reject`). */
  ambiguous?: Ambiguous;
}

/**
 * A compiled timestamp converter: value → ISO 8601 UTC with milliseconds, or MapFail. `zone`: the record's own
 * zone (record-zone.ts), used instead of the compiled one for a value without an offset.
 */
export type TimestampConverter = (value: unknown, zone?: OffsetFn) => string;

const TOKENS: Array<[string, string, keyof Parts | 'ampm' | 'zone' | 'hour12' | 'frac']> = [
  ['YYYY', '(\\d{4})', 'year'],
  ['SSS', '(\\d{1,9})', 'frac'],
  ['MM', '(\\d{2})', 'month'],
  ['DD', '(\\d{2})', 'day'],
  ['HH', '(\\d{2})', 'hour'],
  ['hh', '(\\d{2})', 'hour12'],
  ['mm', '(\\d{2})', 'minute'],
  ['ss', '(\\d{2})', 'second'],
  ['M', '(\\d{1,2})', 'month'],
  ['D', '(\\d{1,2})', 'day'],
  ['H', '(\\d{1,2})', 'hour'],
  ['h', '(\\d{1,2})', 'hour12'],
  ['A', '([AaPp][Mm])', 'ampm'],
  ['Z', '(Z|[+-]\\d{2}(?::?\\d{2})?)', 'zone'],
  ['z', '([A-Za-z]{1,5})', 'zone'],
];

function compilePattern(format: string): (s: string, raw: unknown) => Parts {
  let re = '^';
  const slots: Array<(typeof TOKENS)[number][2]> = [];
  let i = 0;
  while (i < format.length) {
    const token = TOKENS.find(([t]) => format.startsWith(t, i));
    if (token) {
      re += token[1];
      slots.push(token[2]);
      i += token[0].length;
    } else {
      const ch = format[i] as string;
      re += ch === ' ' ? '\\s+' : ch.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
      i++;
    }
  }
  const seen = new Set(slots);
  for (const need of ['year', 'month', 'day'] as const) {
    if (!seen.has(need)) throw new RangeError(`pattern ${JSON.stringify(format)} has no ${need} token`);
  }
  if (seen.has('hour12') !== seen.has('ampm')) {
    throw new RangeError(`pattern ${JSON.stringify(format)}: hh/h need A (AM/PM) and the other way round`);
  }
  const regex = new RegExp(`${re}$`);
  return (s, raw) => {
    const m = regex.exec(s);
    if (m === null) throw new MapFail(`expected a time like ${JSON.stringify(format)}, got ${quote(raw)}`);
    const p: Parts = { year: 0, month: 0, day: 0, hour: 0, minute: 0, second: 0, ms: 0 };
    let pm: boolean | undefined;
    for (let k = 0; k < slots.length; k++) {
      const v = m[k + 1] as string;
      const slot = slots[k];
      if (slot === 'frac') p.ms = fractionToMs(v);
      else if (slot === 'zone') p.offset = zoneToOffset(v, raw);
      else if (slot === 'ampm') pm = v.toUpperCase() === 'PM';
      else if (slot === 'hour12') {
        const h = Number(v);
        if (h < 1 || h > 12) throw new MapFail(`not a 12-hour clock hour in ${quote(raw)}`);
        p.hour = h % 12;
      } else if (slot !== undefined) p[slot] = Number(v);
    }
    if (pm) p.hour += 12;
    return p;
  };
}

function parseIso(s: string, raw: unknown): Parts {
  const m = ISO.exec(s);
  if (m === null) throw new MapFail(`expected an ISO 8601 time, got ${quote(raw)}`);
  return {
    year: Number(m[1]),
    month: Number(m[2]),
    day: Number(m[3]),
    hour: m[4] ? Number(m[4]) : 0,
    minute: m[5] ? Number(m[5]) : 0,
    second: m[6] ? Number(m[6]) : 0,
    ms: fractionToMs(m[7]),
    offset: zoneToOffset(m[8], raw),
  };
}

function pad2(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

/** Epoch ms (1970..9999) → `YYYY-MM-DDTHH:mm:ss.sssZ` by arithmetic (days → civil date, H. Hinnant). */
export function isoFromMs(ms: number): string {
  const days = Math.floor(ms / 86_400_000);
  let rem = ms - days * 86_400_000;
  const h = Math.floor(rem / 3_600_000);
  rem -= h * 3_600_000;
  const mi = Math.floor(rem / 60_000);
  rem -= mi * 60_000;
  const s = Math.floor(rem / 1000);
  const milli = rem - s * 1000;
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  const y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  const msText = milli < 10 ? `00${milli}` : milli < 100 ? `0${milli}` : String(milli);
  return `${y}-${pad2(m)}-${pad2(d)}T${pad2(h)}:${pad2(mi)}:${pad2(s)}.${msText}Z`;
}

/**
 * Compile a timestamp converter once (pattern regex and zone resolved now). Throws RangeError with a
 * readable message for a bad pattern or zone (the profile loader turns it into MAPPING_INVALID).
 * @example compileTimestamp({ format: 'auto', zone: 'America/Phoenix' })('2025-10-09 11:20:33') // '2025-10-09T18:20:33.000Z'
 */
export function compileTimestamp(opts: TimestampOptions): TimestampConverter {
  const offsetAt = opts.zone === undefined ? undefined : zoneOffset(opts.zone);
  const format = opts.format;
  const ambiguous = opts.ambiguous ?? 'reject';
  // A fixed offset (or UTC) is the export's own zone, never a merchant's: its local reads are not counted.
  const named = opts.zone !== undefined && isNamedZone(opts.zone);
  const toIso = (ms: number, raw: unknown): string => {
    if (!(ms >= 0 && ms < MAX_MS)) throw new MapFail(`time out of range: ${quote(raw)}`);
    return isoFromMs(ms);
  };
  if (format === 'unix-s' || format === 'unix-ms') {
    const unit = format === 'unix-s' ? 's' : 'ms';
    return (v) => toIso(unixToMs(typeof v === 'string' ? v.trim() : v, unit), v);
  }
  if (format === 'iso' || format === 'auto') {
    const auto = format === 'auto';
    return (v, zone) => {
      // Already the form written (canonical exports): parsing would give the same string back.
      if (typeof v === 'string' && isUtcTimestamp(v)) return v;
      if (typeof v === 'number') {
        if (!auto) throw new MapFail(`expected an ISO 8601 string, got ${quote(v)}`);
        return toIso(unixToMs(v, 'auto'), v);
      }
      if (typeof v !== 'string') throw new MapFail(`expected a time, got ${quote(v)}`);
      const s = v.trim();
      if (auto && UNIX.test(s)) return toIso(unixToMs(s, 'auto'), v);
      const parts = parseIso(s, v);
      if (zone === undefined && parts.offset === undefined && named) TIME_READS.fixedZoneLocal++;
      return toIso(partsToUtc(parts, zone ?? offsetAt, v, ambiguous), v);
    };
  }
  const parse = compilePattern(format);
  return (v, zone) => {
    const s = typeof v === 'string' ? v.trim() : typeof v === 'number' ? String(v) : undefined;
    if (s === undefined) throw new MapFail(`expected a time string, got ${quote(v)}`);
    const parts = parse(s, v);
    if (zone === undefined && parts.offset === undefined && named) TIME_READS.fixedZoneLocal++;
    return toIso(partsToUtc(parts, zone ?? offsetAt, v, ambiguous), v);
  };
}
