// Issue 50, Must 8: abroad, a "state" that is no ISO 3166-2 subdivision of the merchant's country is rejected with
// the reason. Shaped like a bank's settlement report whose `CITY, CC` location is split naively into city and
// state: London, Paris and Tokyo merchants get the state GB, FR, JP. Real subdivisions (London LND, Île-de-France
// IDF, Berlin BE) are sent; US states are checked as before. Sent through the real CLI to the simulator.
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stateAbroadProblem, subdivisionsOf } from '../../src/map/state-abroad.ts';
import { runCliHere } from '../helpers/cli.ts';
import { CONST_RULES } from '../helpers/profiles.ts';
import { useSimulator } from '../helpers/simulator.ts';

const sim = useSimulator({ seed: 50 }, 'reset');

const REPORT = [
  'REF,MERCHANT_LOCATION,CTRY,MID,CCY,AMOUNT',
  'S-1,"LONDON, GB",GB,M1,GBP,12.00',
  'S-2,"PARIS, FR",FR,M2,EUR,8.50',
  'S-3,"TOKYO, JP",JP,M3,JPY,1200',
  'S-4,"LONDON, LND",GB,M4,GBP,3.00',
  'S-5,"PARIS, IDF",FR,M5,EUR,4.00',
  'S-6,"BERLIN, BE",DE,M6,EUR,5.00',
  'S-7,"AUSTIN, TX",US,M7,USD,6.00',
  'S-8,"PARIS, TX",FR,M8,EUR,7.00',
  'S-9,"KOWLOON, KLN",HK,M9,HKD,9.00',
];

const PROFILE = {
  fields: {
    ...CONST_RULES,
    transactionId: 'REF',
    paymentNetworkMerchantCity: { from: 'MERCHANT_LOCATION', split: { separator: ',', at: 'last', part: 0 } },
    paymentNetworkMerchantState: {
      from: 'MERCHANT_LOCATION',
      split: { separator: ',', at: 'last', part: 1 },
      required: 'where-states',
    },
    paymentNetworkMerchantCountryCode: 'CTRY',
    paymentNetworkMerchantId: 'MID',
    currencyCode: 'CCY',
    postedAmount: { from: 'AMOUNT', amount: true },
  },
};

describe('a state abroad that is no subdivision of its country', () => {
  it('London/Paris/Tokyo with state GB/FR/JP are rejected with the reason; real subdivisions are sent', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-state-abroad-'));
    const file = join(dir, 'settlement.csv');
    const profile = join(dir, 'p.json');
    await writeFile(file, `${REPORT.join('\n')}\n`);
    await writeFile(profile, JSON.stringify(PROFILE));
    const rejects = join(dir, 'r.ndjson');
    const args = ['--base-url', sim.url, '--ledger', join(dir, 'l.ndjson'), '--rejects', rejects];
    const r = await runCliHere(['send', ...args, '--mapping', profile, file]);
    expect(r.code, r.stderr).toBe(2);
    expect([...sim.transactions()].map((t) => t.transactionId).sort()).toEqual(['S-4', 'S-5', 'S-6', 'S-7']);
    const lines = (await readFile(rejects, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { line: number; errors: Array<{ field: string; message: string }> });
    const byLine = Object.fromEntries(lines.map((x) => [x.line, x.errors]));
    expect(Object.keys(byLine)).toEqual(['2', '3', '4', '9', '10']);
    expect(byLine[2]).toEqual([
      {
        field: 'paymentNetworkMerchantState',
        message:
          'GB is the merchant\'s country, not a subdivision of it (ISO 3166-2): a "CITY, GB" location read as city and state? Leave the state out abroad ("else": null), or read it from where the export keeps it',
      },
    ]);
    expect(byLine[3]?.[0]?.message).toMatch(/^FR is the merchant's country, not a subdivision of it/);
    expect(byLine[4]?.[0]?.message).toMatch(/^JP is the merchant's country, not a subdivision of it/);
    expect(byLine[9]?.[0]?.message).toMatch(
      /^TX is not a subdivision of FR \(ISO 3166-2, without the "FR-" prefix: /,
    );
    expect(byLine[10]?.[0]?.message).toBe(
      'HK has no subdivisions in ISO 3166-2, so KLN is no state of it: leave the state out for HK ("else": null)',
    );
  });

  it('every subdivision level counts, without its prefix; home countries are checked as before', () => {
    expect(stateAbroadProblem('GB', 'ENG')).toBeUndefined();
    expect(stateAbroadProblem('GB', 'MAN')).toBeUndefined();
    expect(stateAbroadProblem('FR', '75C')).toBeUndefined();
    expect(stateAbroadProblem('MX', 'PUE')).toBeUndefined();
    expect(stateAbroadProblem('MX', 'TX')).toMatch(/^TX is not a subdivision of MX/);
    expect(stateAbroadProblem('US', 'ZZ')).toBeUndefined();
    expect(stateAbroadProblem('XK', 'ZZ')).toBeUndefined();
    expect(subdivisionsOf('GB')?.has('LND')).toBe(true);
    expect(subdivisionsOf('HK')?.size).toBe(0);
  });
});
