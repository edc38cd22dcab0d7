// An ISO timestamp already in the form sent (`YYYY-MM-DDTHH:mm:ss.sssZ`) is handed on as it is: the same answer as
// parsing it. A value with a space after it takes the parsing path, so each value is read both ways and compared.
import { describe, expect, it } from 'vitest';
import { MapFail } from '../../src/map/rule-kit.ts';
import { compileTimestamp, isoFromMs } from '../../src/map/timestamp.ts';

function readBoth(read: (v: unknown) => string, v: string): [string, string] {
  const one = (x: string): string => {
    try {
      return read(x);
    } catch (err) {
      if (err instanceof MapFail) return 'MapFail';
      throw err;
    }
  };
  return [one(v), one(`${v} `)];
}

describe('ISO timestamps already in the sent form', () => {
  it('are read as parsing reads them: the same string back, or the same reject', () => {
    const values: string[] = [];
    // Instants over the whole range, and the days and times at their edges.
    for (let i = 0; i < 500; i++)
      values.push(isoFromMs(Math.floor((i / 500) * Date.UTC(9999, 11, 31, 23, 59, 59, 999))));
    values.push('1970-01-01T00:00:00.000Z', '9999-12-31T23:59:59.999Z', '2024-02-29T12:00:00.000Z');
    values.push('1969-12-31T23:59:59.999Z', '2025-02-29T00:00:00.000Z', '2100-02-29T00:00:00.000Z');
    values.push('2025-13-01T00:00:00.000Z', '2025-04-31T00:00:00.000Z', '2025-01-00T00:00:00.000Z');
    values.push('2025-01-01T24:00:00.000Z', '2025-01-01T23:60:00.000Z', '2025-01-01T23:59:60.000Z');
    for (const format of ['iso', 'auto']) {
      const read = compileTimestamp({ format });
      for (const v of values) {
        const [fast, parsed] = readBoth(read, v);
        expect(fast, `${format} ${v}`).toBe(parsed);
      }
    }
    const read = compileTimestamp({ format: 'iso' });
    expect(read('2025-10-01T05:00:00.214Z')).toBe('2025-10-01T05:00:00.214Z');
    expect(() => read('2025-02-29T00:00:00.000Z')).toThrow(MapFail);
    expect(read('2025-10-01 02:01:37.007+02')).toBe('2025-10-01T00:01:37.007Z');
  });
});
