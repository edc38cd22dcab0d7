// Local times in a DST gap and in the repeated hour, for the zones docs/mapping.md names (America/Chicago,
// America/Denver, America/Phoenix, America/Los_Angeles, Europe/London), against UTC instants written out by
// hand: 2026's changes are US 8 March and 1 November at 02:00 local, EU 29 March and 25 October at 01:00 UTC.
// The documented rule: a time in the gap or the repeated hour is ambiguous and decided by the profile's choice:
// `reject` (the default), `earlier` (the earlier of its two instants: in the gap the offset after the change, in the
// repeated hour the first occurrence, summer time) or `later` (in the gap the offset before the change, 02:30 →
// 03:30 new time; in the repeated hour the second occurrence).
import { describe, expect, it } from 'vitest';
import { MapFail } from '../../src/map/rule-kit.ts';
import { type Ambiguous, compileTimestamp, TIME_READS } from '../../src/map/timestamp.ts';

const at = (zone: string, local: string, ambiguous: Ambiguous = 'earlier') =>
  compileTimestamp({ format: 'YYYY-MM-DD HH:mm:ss', zone, ambiguous })(local);

describe('DST: the gap and the repeated hour', () => {
  it('a time in the spring gap read "later" takes the offset before the change', () => {
    const cases: Array<[string, string, string]> = [
      // 02:30 CST (-6) does not exist: 08:30Z, shown 03:30 CDT.
      ['America/Chicago', '2026-03-08 02:30:00', '2026-03-08T08:30:00.000Z'],
      ['America/Denver', '2026-03-08 02:30:00', '2026-03-08T09:30:00.000Z'],
      ['America/Los_Angeles', '2026-03-08 02:30:00', '2026-03-08T10:30:00.000Z'],
      // London skips 01:00–02:00 GMT: 01:30 is read as GMT.
      ['Europe/London', '2026-03-29 01:30:00', '2026-03-29T01:30:00.000Z'],
      // Phoenix keeps MST (-7): no gap.
      ['America/Phoenix', '2026-03-08 02:30:00', '2026-03-08T09:30:00.000Z'],
    ];
    for (const [zone, local, utc] of cases) expect(at(zone, local, 'later'), `${zone} ${local}`).toBe(utc);
  });

  it('a time in the spring gap read "earlier" takes the offset after the change, an hour earlier', () => {
    expect(at('America/Chicago', '2026-03-08 02:30:00', 'earlier')).toBe('2026-03-08T07:30:00.000Z');
    expect(at('Europe/London', '2026-03-29 01:30:00', 'earlier')).toBe('2026-03-29T00:30:00.000Z');
  });

  it('a time in the repeated autumn hour read "later" is its second occurrence (standard time)', () => {
    expect(at('America/Chicago', '2026-11-01 01:30:00', 'later')).toBe('2026-11-01T07:30:00.000Z');
    expect(at('Europe/London', '2026-10-25 01:30:00', 'later')).toBe('2026-10-25T01:30:00.000Z');
  });

  it('by default a time in the gap or the repeated hour is rejected, saying both instants, and counted', () => {
    const read = compileTimestamp({ format: 'YYYY-MM-DD HH:mm:ss', zone: 'America/Chicago' });
    const repeated0 = TIME_READS.repeatedHour;
    const gap0 = TIME_READS.gap;
    expect(() => read('2026-11-01 01:30:00')).toThrow(MapFail);
    expect(() => read('2026-11-01 01:30:00')).toThrow(
      '"2026-11-01 01:30:00" is a local time in the hour the clocks repeat (it happened twice: 2026-11-01T06:30:00.000Z or 2026-11-01T07:30:00.000Z): ambiguous, rejected ("ambiguous": "reject", the default; "earlier" or "later" decides)',
    );
    expect(() => read('2026-03-08 02:30:00')).toThrow(/the hour the clocks skip/);
    expect(TIME_READS.repeatedHour - repeated0).toBe(2);
    expect(TIME_READS.gap - gap0).toBe(1);
    // Either side of the changes is no guess: read as it is.
    expect(read('2026-11-01 00:59:59')).toBe('2026-11-01T05:59:59.000Z');
    expect(read('2026-11-01 02:00:00')).toBe('2026-11-01T08:00:00.000Z');
    expect(read('2026-03-08 03:00:00')).toBe('2026-03-08T08:00:00.000Z');
  });

  it('the gap’s edges: the last second before it and the first after it, an hour of UTC apart less a second', () => {
    expect(at('America/Chicago', '2026-03-08 01:59:59')).toBe('2026-03-08T07:59:59.000Z');
    expect(at('America/Chicago', '2026-03-08 03:00:00')).toBe('2026-03-08T08:00:00.000Z');
    expect(at('Europe/London', '2026-03-29 00:59:59')).toBe('2026-03-29T00:59:59.000Z');
    expect(at('Europe/London', '2026-03-29 02:00:00')).toBe('2026-03-29T01:00:00.000Z');
  });

  it('a time in the repeated autumn hour read "earlier" is its first occurrence (summer time)', () => {
    const cases: Array<[string, string, string]> = [
      // 01:30 happens at 06:30Z (CDT, -5) and 07:30Z (CST, -6): the first.
      ['America/Chicago', '2026-11-01 01:30:00', '2026-11-01T06:30:00.000Z'],
      ['America/Denver', '2026-11-01 01:30:00', '2026-11-01T07:30:00.000Z'],
      ['America/Los_Angeles', '2026-11-01 01:30:00', '2026-11-01T08:30:00.000Z'],
      // London repeats 01:00–02:00: 01:30 BST (+1) is 00:30Z, then 01:30 GMT.
      ['Europe/London', '2026-10-25 01:30:00', '2026-10-25T00:30:00.000Z'],
      ['America/Phoenix', '2026-11-01 01:30:00', '2026-11-01T08:30:00.000Z'],
    ];
    for (const [zone, local, utc] of cases) expect(at(zone, local), `${zone} ${local}`).toBe(utc);
  });

  it('after the repeated hour, standard time', () => {
    expect(at('America/Chicago', '2026-11-01 02:00:00')).toBe('2026-11-01T08:00:00.000Z');
    expect(at('Europe/London', '2026-10-25 02:00:00')).toBe('2026-10-25T02:00:00.000Z');
  });
});
