// Issue 50, Must 8: the checks that were missing. A merchant abroad whose "state" is no subdivision of its country
// (its own country code, from a "CITY, CC" split) is rejected with the reason; XXX, XTS and the precious metals are
// no transaction's currency; a rejected record lists every problem it has; `map` prints what `send` sends.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileProfile } from '../../src/map/compile.ts';
import { runCliHere } from '../helpers/cli.ts';
import { CONST_RULES } from '../helpers/profiles.ts';
import { useSimulator } from '../helpers/simulator.ts';

const sim = useSimulator({ seed: 50 }, 'reset');

/** A settlement report's location as `CITY, CC` split naively into city and state. */
const profile = compileProfile(
  {
    fields: {
      ...CONST_RULES,
      transactionId: 'ID',
      paymentNetworkMerchantCity: { from: 'LOCATION', split: { separator: ',', at: 'last', part: 0 } },
      paymentNetworkMerchantState: {
        from: 'LOCATION',
        split: { separator: ',', at: 'last', part: 1 },
        required: 'where-states',
      },
      paymentNetworkMerchantCountryCode: 'COUNTRY',
      paymentNetworkMerchantId: 'MID',
      currencyCode: { from: 'CUR', currency: true },
      postedAmount: { from: 'AMT', amount: true },
    },
  },
  'p.json',
  'p',
);
const row = (o: Record<string, string>) => ({ ID: 't1', MID: 'M1', CUR: 'GBP', AMT: '1.00', ...o });

describe('checks that were missing', () => {
  it('abroad, the country code as the state is rejected with the reason; a real state of BR/MX is checked', () => {
    const r = profile.mapValid(row({ LOCATION: 'LONDON, GB', COUNTRY: 'GB' }), false);
    expect(r.ok ? [] : r.errors).toEqual([
      {
        field: 'paymentNetworkMerchantState',
        message:
          'GB is the merchant\'s country, not a subdivision of it (ISO 3166-2): a "CITY, GB" location read as city and state? Leave the state out abroad ("else": null), or read it from where the export keeps it',
      },
    ]);
    expect(profile.mapValid(row({ LOCATION: 'PUEBLA, PUE', COUNTRY: 'MX', CUR: 'MXN' }), false).ok).toBe(
      true,
    );
    const mx = profile.mapValid(row({ LOCATION: 'PUEBLA, TX', COUNTRY: 'MX', CUR: 'MXN' }), false);
    expect(mx.ok ? '' : mx.errors[0]?.message).toContain('TX is not a subdivision of MX');
    // At home nothing changes: a US merchant's state as before.
    expect(profile.mapValid(row({ LOCATION: 'AUSTIN, TX', COUNTRY: 'US', CUR: 'USD' }), false).ok).toBe(true);
  });

  it("XXX (999), XTS and the precious metals are no transaction's currency", () => {
    for (const [cur, code] of [
      ['999', 'XXX'],
      ['XTS', 'XTS'],
      ['XAU', 'XAU'],
      ['XAG', 'XAG'],
      ['XPT', 'XPT'],
      ['XPD', 'XPD'],
    ]) {
      const r = profile.mapValid(row({ LOCATION: 'AUSTIN, TX', COUNTRY: 'US', CUR: cur as string }), false);
      expect(r.ok, cur).toBe(false);
      expect(r.ok ? [] : r.errors.map((e) => e.field), cur).toContain('currencyCode');
      expect(JSON.stringify(r.ok ? [] : r.errors), cur).toContain(`${code} (`);
    }
  });

  it("a rejected record lists every problem: the conversions that failed and the other fields' too", () => {
    const r = profile.mapValid(row({ LOCATION: 'LONDON, GB', COUNTRY: 'GB', CUR: 'nope', MID: '' }), false);
    expect(r.ok ? [] : r.errors.map((e) => e.field)).toEqual([
      'currencyCode',
      'postedAmount',
      'paymentNetworkMerchantId',
      'paymentNetworkMerchantState',
    ]);
  });

  it('map prints exactly what send sends: a 15-digit merchant id as it is in both', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-missing-checks-'));
    const file = join(dir, 'x.csv');
    // 15 digits passing the Luhn check, no card brand's number: a merchant id, sent as it is.
    await writeFile(file, 'ID,LOCATION,COUNTRY,MID,CUR,AMT\nt1,"AUSTIN, TX",US,445566000015554,USD,1.00\n');
    const p = join(dir, 'p.json');
    await writeFile(
      p,
      JSON.stringify({
        fields: {
          ...CONST_RULES,
          transactionId: 'ID',
          paymentNetworkMerchantId: 'MID',
          postedAmount: { from: 'AMT', amount: true },
          currencyCode: 'CUR',
        },
      }),
    );
    const m = await runCliHere(['map', '--mapping', p, file]);
    expect(m.code, m.stderr).toBe(0);
    const s = await runCliHere([
      'send',
      '--base-url',
      sim.url,
      '--ledger',
      join(dir, 'l.ndjson'),
      '--rejects',
      join(dir, 'r.ndjson'),
      '--mapping',
      p,
      file,
    ]);
    expect(s.code, s.stderr).toBe(0);
    const sent = [...sim.transactions()][0];
    expect(JSON.parse(m.stdout.trim())).toEqual(sent);
    expect(m.stdout).toContain('"paymentNetworkMerchantId":"445566000015554"');
  });

  it('{"default": null} with a "required" is a field the export never has; alone, the message says what to write', () => {
    const state = (rule: unknown) => () =>
      compileProfile({ fields: { ...CONST_RULES, paymentNetworkMerchantState: rule } }, 'p.json', 'p');
    expect(state({ default: null, required: 'where-states' })).not.toThrow();
    expect(state({ default: null })).toThrow(
      'for a field the export never has, {"default": null} with "required": false, or "required": "where-states" for a state',
    );
    const p = state({ default: null, required: 'where-states' })();
    expect(p.mapValid({}, false).ok).toBe(false);
    const abroad = compileProfile(
      {
        fields: {
          ...CONST_RULES,
          paymentNetworkMerchantState: { default: null, required: 'where-states' },
          paymentNetworkMerchantCountryCode: { const: 'GB' },
          currencyCode: { const: 'GBP' },
        },
      },
      'p.json',
      'p',
    );
    expect(abroad.mapValid({}, false).ok).toBe(true);
  });

  it('mapping check counts records as send does: an unreadable piece is read and rejected', async () => {
    const r = await runCliHere(['mapping', 'check', 'canonical', 'samples/canonical.csv']);
    expect(r.stdout).toContain('samples/canonical.csv: 22 records read, 19 valid, 3 rejected (1 unreadable)');
  });
});
