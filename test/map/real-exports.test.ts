// Issue 23, in the mapping language: per-record time zones, linear-time patterns, merchants abroad, the service's
// code lists, and hostile profiles and records.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileProfile } from '../../src/map/compile.ts';
import { CITY_STATE_ZIP, locationShape, timeLayout } from '../../src/map/draft-guess.ts';
import { loadProfile } from '../../src/map/profile.ts';
import { compileTimestamp } from '../../src/map/timestamp.ts';
import type { CompiledProfile } from '../../src/map/types.ts';
import { checkTransaction } from '../../src/simulator/check-transactions.ts';
import { ROOT } from '../helpers/cli.ts';
import { CONST_RULES } from '../helpers/profiles.ts';

/** The values of CONST_RULES: a valid transaction. */
const CONST_RULES_VALUES: Record<string, unknown> = Object.fromEntries(
  Object.entries(CONST_RULES).map(([k, v]) => [k, (v as { const: unknown }).const]),
);

function profile(fields: Record<string, unknown>, extra: Record<string, unknown> = {}): CompiledProfile {
  return compileProfile({ ...extra, fields: { ...CONST_RULES, ...fields } }, 'test.json', 'test');
}
function mapped(p: CompiledProfile, rec: Record<string, unknown>): Record<string, unknown> {
  const r = p.map(rec);
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.tx as unknown as Record<string, unknown>;
}
function errorsOf(p: CompiledProfile, rec: Record<string, unknown>): string[] {
  const r = p.mapValid(rec, false);
  return r.ok ? [] : r.errors.map((e) => `${e.field}: ${e.message}`);
}
function loadError(fields: Record<string, unknown>, extra: Record<string, unknown> = {}): string {
  try {
    profile(fields, extra);
  } catch (err) {
    return (err as Error).message;
  }
  return 'loaded';
}

describe('a time zone per record ("zone": "{tz}")', () => {
  const p = profile({
    transactionTimestamp: { from: 'when', timestamp: { format: 'MM/DD/YYYY HH:mm:ss', zone: '{tz}' } },
  });
  /** Each [local time, zone, the UTC instant it must map to]. */
  const check = (cases: Array<[string, string, string]>) => {
    for (const [when, tz, utc] of cases)
      expect(mapped(p, { when, tz }).transactionTimestamp, `${when} ${tz}`).toBe(utc);
  };

  it('IANA names: the offset in force at that local time, on both sides of a DST change', () => {
    check([
      // San Jose, the issue's record: 18:03:58 PST is 02:03:58Z the next day (one fixed zone made it 00:03:58Z).
      ['02/12/2026 18:03:58', 'America/Los_Angeles', '2026-02-13T02:03:58.000Z'],
      ['11/20/2026 14:03:22', 'America/Chicago', '2026-11-20T20:03:22.000Z'],
      // US DST began 2026-03-08 at 02:00 local: 01:59:59 PST, then 03:00:00 PDT.
      ['03/08/2026 01:59:59', 'America/Los_Angeles', '2026-03-08T09:59:59.000Z'],
      ['03/08/2026 03:00:00', 'America/Los_Angeles', '2026-03-08T10:00:00.000Z'],
      // ... and ended 2026-11-01 at 02:00 local: 00:30 CDT, then 02:30 CST.
      ['11/01/2026 00:30:00', 'America/Chicago', '2026-11-01T05:30:00.000Z'],
      ['11/01/2026 02:30:00', 'America/Chicago', '2026-11-01T08:30:00.000Z'],
      // Phoenix keeps MST all year; Europe changes on its own dates (2026-03-29).
      ['07/01/2026 12:00:00', 'America/Phoenix', '2026-07-01T19:00:00.000Z'],
      ['03/29/2026 00:30:00', 'Europe/London', '2026-03-29T00:30:00.000Z'],
      ['03/29/2026 02:30:00', 'Europe/London', '2026-03-29T01:30:00.000Z'],
    ]);
  });

  it('abbreviations: each side of a DST change names itself (MST/MDT, PST/PDT, EST/EDT, CST/CDT)', () => {
    check([
      ['03/08/2026 01:59:59', 'PST', '2026-03-08T09:59:59.000Z'],
      ['03/08/2026 03:00:00', 'PDT', '2026-03-08T10:00:00.000Z'],
      ['11/01/2026 01:30:00', 'MDT', '2026-11-01T07:30:00.000Z'],
      ['11/01/2026 01:30:00', 'MST', '2026-11-01T08:30:00.000Z'],
      ['11/20/2026 14:03:22', 'EST', '2026-11-20T19:03:22.000Z'],
      ['07/20/2026 14:03:22', 'edt', '2026-07-20T18:03:22.000Z'],
      ['11/20/2026 14:03:22', 'CST', '2026-11-20T20:03:22.000Z'],
      ['07/20/2026 14:03:22', 'CDT', '2026-07-20T19:03:22.000Z'],
      ['07/20/2026 14:03:22', 'UTC', '2026-07-20T14:03:22.000Z'],
    ]);
  });

  it('offsets: +05:30, -0700, -7, UTC-07:00, GMT+1', () => {
    check([
      ['11/20/2026 14:03:22', '+05:30', '2026-11-20T08:33:22.000Z'],
      ['11/20/2026 14:03:22', '-0700', '2026-11-20T21:03:22.000Z'],
      ['11/20/2026 14:03:22', '-7', '2026-11-20T21:03:22.000Z'],
      ['11/20/2026 14:03:22', 'UTC-07:00', '2026-11-20T21:03:22.000Z'],
      ['11/20/2026 14:03:22', 'GMT+1', '2026-11-20T13:03:22.000Z'],
    ]);
  });

  it('an unknown zone is a reject naming the field; an empty one falls back to the profile timeZone, else a reject', () => {
    expect(errorsOf(p, { when: '11/20/2026 14:03:22', tz: 'Mars/Olympus' })).toEqual([
      'transactionTimestamp: unknown time zone "Mars/Olympus" (an IANA name such as America/Denver, an abbreviation such as MST, or an offset such as -07:00)',
    ]);
    expect(errorsOf(p, { when: '11/20/2026 14:03:22', tz: '' })[0]).toMatch(
      /^transactionTimestamp: "11\/20\/2026 14:03:22" has no UTC offset and neither the record nor the profile names a zone/,
    );
    const withFallback = profile(
      { transactionTimestamp: { from: 'when', timestamp: { format: 'MM/DD/YYYY HH:mm:ss', zone: '{tz}' } } },
      { timeZone: 'America/Denver' },
    );
    expect(mapped(withFallback, { when: '11/20/2026 14:03:22', tz: '' }).transactionTimestamp).toBe(
      '2026-11-20T21:03:22.000Z',
    );
  });

  it('a value carrying its own offset keeps it; "timeZone": "{tz}" applies to every timestamp rule', () => {
    const all = profile(
      {
        transactionTimestamp: { from: 'when', timestamp: true },
        transactionPostingTimestamp: { from: 'posted', timestamp: true },
      },
      { timeZone: '{tz}' },
    );
    const tx = mapped(all, { when: '2026-11-20 14:03:22', posted: '2026-11-21T00:00:00Z', tz: 'MST' });
    expect(tx.transactionTimestamp).toBe('2026-11-20T21:03:22.000Z');
    expect(tx.transactionPostingTimestamp).toBe('2026-11-21T00:00:00.000Z');
    // The zone column is checked against the header like any other.
    expect(all.columns.filter((c) => c.column === 'tz').map((c) => c.rule)).toEqual(['timeZone', 'timeZone']);
  });
});

describe('regular expressions run in linear time (RE2)', () => {
  it('^(a+)+$ on a 10,000-character value: milliseconds, and the value is a reject', () => {
    const p = profile({ paymentNetworkMerchantCity: { from: 'city', match: '^(a+)+$' } });
    const value = `${'a'.repeat(10_000)}!`;
    const t = performance.now();
    const errors = errorsOf(p, { city: value });
    const ms = performance.now() - t;
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^paymentNetworkMerchantCity: "a{10}.*does not match \/\^\(a\+\)\+\$\/$/);
    expect(ms).toBeLessThan(1000);
    // A record that matches still does.
    expect(mapped(p, { city: 'aaaa' }).paymentNetworkMerchantCity).toBe('aaaa');
  });

  it('named groups, flags and the issue\'s "CITY, ST ZIP" split as before', () => {
    const loc = '^(?<city>.+?),\\s*(?<st>[a-z]{2})\\s+(?<zip>\\d{5})(?:-\\d{4})?$';
    const p = profile({
      paymentNetworkMerchantCity: { from: 'LOC', match: { pattern: loc, group: 'city', flags: 'i' } },
      paymentNetworkMerchantState: { from: 'LOC', match: { pattern: loc, group: 'st', flags: 'i' } },
      paymentNetworkMerchantPostalCode: { from: 'LOC', match: { pattern: loc, group: 'zip', flags: 'iu' } },
    });
    const tx = mapped(p, { LOC: 'AUSTIN, TX 78701' });
    expect([
      tx.paymentNetworkMerchantCity,
      tx.paymentNetworkMerchantState,
      tx.paymentNetworkMerchantPostalCode,
    ]).toEqual(['AUSTIN', 'TX', '78701']);
  });

  it('what RE2 cannot run (backreferences, lookaround) is refused at load, with the JSON path and why', () => {
    expect(loadError({ paymentNetworkMerchantCity: { from: 'c', match: '^(a)\\1$' } })).toMatch(
      /^fields\.paymentNetworkMerchantCity\.match: expected a valid regular expression \(RE2 syntax\), got "\^\(a\)\\\\1\$ \(invalid escape sequence: `\\\\1`/,
    );
    expect(loadError({ paymentNetworkMerchantCity: { from: 'c', match: { pattern: '(?=a)a' } } })).toMatch(
      /^fields\.paymentNetworkMerchantCity\.match\.pattern: expected a valid regular expression \(RE2 syntax\).*lookahead/,
    );
    expect(
      loadError({ paymentNetworkMerchantCity: { from: 'c', match: { pattern: 'a', flags: 'g' } } }),
    ).toMatch(/^fields\.paymentNetworkMerchantCity\.match\.flags: expected any of i, m, s, u/);
  });
});

describe('merchants abroad: the state is required only where the country has states', () => {
  const lithicLine = async (n: number) =>
    JSON.parse((await readFile(join(ROOT, 'samples/lithic.ndjson'), 'utf8')).split('\n')[n - 1] as string);
  const stripeLine = async (n: number) =>
    JSON.parse(
      (await readFile(join(ROOT, 'samples/stripe-issuing.ndjson'), 'utf8')).split('\n')[n - 1] as string,
    );

  it('lithic and stripe-issuing deliver a London merchant without a state, and reject a US merchant without one', async () => {
    const lithic = await loadProfile('lithic');
    const london = await lithicLine(9);
    expect(london.merchant.country).toBe('GBR');
    expect(errorsOf(lithic, london)).toEqual([]);
    const us = { ...london, merchant: { ...london.merchant, country: 'USA', state: '' } };
    expect(errorsOf(lithic, us)).toEqual([
      'paymentNetworkMerchantState: required for a merchant in US (required where the country is US, CA, AU)',
    ]);
    const stripe = await loadProfile('stripe-issuing');
    const pret = await stripeLine(7);
    expect(errorsOf(stripe, pret)).toEqual([]);
    const toronto = { ...pret, merchant_data: { ...pret.merchant_data, country: 'CA' } };
    expect(errorsOf(stripe, toronto)).toEqual([
      'paymentNetworkMerchantState: required for a merchant in CA (required where the country is US, CA, AU)',
    ]);
    // A state that is there is still checked, abroad too.
    const bad = { ...pret, merchant_data: { ...pret.merchant_data, state: 'Nowhere!' } };
    expect(errorsOf(stripe, bad)[0]).toMatch(/^paymentNetworkMerchantState: expected a state abbreviation/);
  });

  it('a profile says it: "where-states", or its own list of countries; a bad list is refused at load', () => {
    const rule = (required: unknown) => ({
      paymentNetworkMerchantState: { from: 'st', state: true, required },
      paymentNetworkMerchantCountryCode: { from: 'c', country: true },
    });
    const where = profile(rule('where-states'));
    expect(errorsOf(where, { st: '', c: 'DE' })).toEqual([]);
    expect(errorsOf(where, { st: '', c: 'AUS' })).toHaveLength(1);
    expect(errorsOf(where, { st: '', c: '' })).toEqual([
      'paymentNetworkMerchantCountryCode: required',
      'paymentNetworkMerchantState: required',
    ]);
    const mx = profile(rule({ countries: ['MX', 'US'] }));
    expect(errorsOf(mx, { st: '', c: 'MEX' })).toEqual([
      'paymentNetworkMerchantState: required for a merchant in MX (required where the country is MX, US)',
    ]);
    expect(errorsOf(mx, { st: '', c: 'CA' })).toEqual([]);
    expect(loadError(rule({ countries: ['USA'] }))).toMatch(
      /^fields\.paymentNetworkMerchantState\.required\.countries: expected a non-empty array of ISO 3166 alpha-2 codes/,
    );
    expect(loadError(rule('sometimes'))).toMatch(
      /^fields\.paymentNetworkMerchantState\.required: expected true or false, "where-states" or \{"countries": \["US", …\]\}/,
    );
    expect(loadError({ transactionId: { from: 'id', required: 'where-states' } })).toMatch(
      /^fields\.transactionId\.required: expected true \(every record needs its transactionId\)/,
    );
  });

  it('the simulator takes a foreign merchant without a state, refuses a US one, and with stateEverywhere refuses both', () => {
    const tx = (country: string) => {
      const t: Record<string, unknown> = {
        ...CONST_RULES_VALUES,
        paymentNetworkMerchantCountryCode: country,
      };
      delete t.paymentNetworkMerchantState;
      return t;
    };
    expect(checkTransaction(tx('GB'), 0)).toBeUndefined();
    expect(checkTransaction(tx('US'), 0)).toEqual([
      { field: 'transactions[0].paymentNetworkMerchantState', message: 'required field is missing' },
    ]);
    expect(checkTransaction(tx('GB'), 0, { strictCodes: false, stateEverywhere: true })).toHaveLength(1);
  });

  it('the simulator with strictCodes refuses a code outside the lists, naming the field', () => {
    const strict = { strictCodes: true, stateEverywhere: false };
    expect(checkTransaction({ ...CONST_RULES_VALUES }, 0, strict)).toBeUndefined();
    expect(checkTransaction({ ...CONST_RULES_VALUES, paymentMethodEntryType: 'ECOM' }, 3, strict)).toEqual([
      {
        field: 'transactions[3].paymentMethodEntryType',
        message:
          '"ECOM" is not a known paymentMethodEntryType (known: APPLE_PAY, GOOGLE_PAY, SAMSUNG_PAY, CHIP, CONTACTLESS, MAGNETIC_STRIPE, MANUAL, ECOMMERCE, CREDENTIAL_ON_FILE, CARD, OTHER)',
      },
    ]);
    expect(checkTransaction({ ...CONST_RULES_VALUES, paymentMethodEntryType: 'ECOM' }, 0)).toBeUndefined();
  });
});

describe('mapping draft reads date-time layouts, locations and amounts from a sample', () => {
  it('each layout it proposes reads its own sample back (in America/Chicago)', () => {
    const cases: Array<[string, string, string]> = [
      ['02/12/2026 18:03:58', 'M/D/YYYY H:mm:ss', '2026-02-13T00:03:58.000Z'],
      ['2/3/2026 6:03', 'M/D/YYYY H:mm', '2026-02-03T12:03:00.000Z'],
      ['25/12/2026 18:03:58', 'D/M/YYYY H:mm:ss', '2026-12-26T00:03:58.000Z'],
      ['2/12/2026 6:03:58 PM', 'M/D/YYYY h:mm:ss A', '2026-02-13T00:03:58.000Z'],
      ['12-02-2026 18:03:58', 'M-D-YYYY H:mm:ss', '2026-12-03T00:03:58.000Z'],
      ['12.02.2026 18:03:58', 'D.M.YYYY H:mm:ss', '2026-02-13T00:03:58.000Z'],
      ['2026/02/12 18:03:58', 'YYYY/MM/DD HH:mm:ss', '2026-02-13T00:03:58.000Z'],
      ['20260212 180358', 'YYYYMMDD HHmmss', '2026-02-13T00:03:58.000Z'],
      ['2026-02-12 18:03:58', 'auto', '2026-02-13T00:03:58.000Z'],
    ];
    for (const [sample, format, utc] of cases) {
      const layout = timeLayout(sample);
      expect(layout, sample).toEqual({ format, zoned: false });
      expect(compileTimestamp({ format, zone: 'America/Chicago' })(sample), sample).toBe(utc);
    }
    expect(timeLayout('2026-02-12T18:03:58Z')).toEqual({ format: 'auto', zoned: true });
    expect(timeLayout('1759386437')).toEqual({ format: 'unix-s', zoned: true });
    expect(timeLayout('AUSTIN, TX 78701')).toBeUndefined();
  });

  it('"CITY, ST ZIP" and "CITY, ST" columns, and the pattern it proposes, which RE2 runs', () => {
    expect(locationShape('AUSTIN, TX 78701')).toBe('city-state-zip');
    expect(locationShape('SEATTLE, WA 98101-1234')).toBe('city-state-zip');
    expect(locationShape('TORONTO, ON M5V 2T6')).toBe('city-state-zip');
    expect(locationShape('SAN JOSE, CA')).toBe('city-state');
    expect(locationShape('LONDON')).toBeUndefined();
    expect(locationShape('12.34')).toBeUndefined();
    const p = profile({
      paymentNetworkMerchantCity: { from: 'L', match: { pattern: CITY_STATE_ZIP, group: 'city' } },
      paymentNetworkMerchantPostalCode: { from: 'L', match: { pattern: CITY_STATE_ZIP, group: 'zip' } },
    });
    const tx = mapped(p, { L: 'ST. PAUL, MN 55101' });
    expect([tx.paymentNetworkMerchantCity, tx.paymentNetworkMerchantPostalCode]).toEqual([
      'ST. PAUL',
      '55101',
    ]);
  });

  it('amounts with a currency sign map as the decimals they are', () => {
    const p = profile({ postedAmount: { from: 'A', amount: true } });
    expect(mapped(p, { A: '$1,204.00' }).postedAmount).toBe('120400');
    expect(mapped(p, { A: '€ 5' }).postedAmount).toBe('500');
    const signed = profile({ postedAmount: { from: 'A', amount: { abs: true } } });
    expect(mapped(signed, { A: '-$12.34' }).postedAmount).toBe('1234');
    expect(errorsOf(p, { A: '$$5' })).toEqual(['postedAmount: expected a decimal number, got "$$5"']);
  });
});
