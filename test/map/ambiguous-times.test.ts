// Issue 50, Must 1: a settlement report's local wall-clock times (no offset, the zone from the merchant's place)
// that fall in the hour the clocks repeat or skip are never sent silently. With no choice written they are
// rejected with the reason; with `earlier` or `later` they are sent as chosen; either way `send`'s summary (and
// run.end), `map` and `mapping check` count them and name the rule.
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCliHere, sendEnv, summaryOf, textOf } from '../helpers/cli.ts';
import { useSimulator } from '../helpers/simulator.ts';

const sim = useSimulator({ seed: 50 }, 'reset');
let dir = '';

/** A settlement report as a bank's processor writes it: one row a settlement, the merchant's local time. */
const HEADER = 'SETTLE_ID,CUST,ACCT,LOCAL_TIME,AMOUNT,CCY,MERCHANT,CITY,STATE,ZIP,COUNTRY,MCC,MID';
const row = (i: number, time: string, city: string, state: string, zip: string) =>
  `S-${1000 + i},C-${i},A-${i},${time},12.34,USD,SHOP ${i},${city},${state},${zip},US,5411,MID${i}`;
const ROWS = [
  row(1, '2026-11-01 00:45:00', 'CHICAGO', 'IL', '60601'),
  // The repeated hour in Chicago (01:00–01:59 happens twice on 1 November 2026).
  row(2, '2026-11-01 01:15:00', 'CHICAGO', 'IL', '60601'),
  row(3, '2026-11-01 01:59:59', 'CHICAGO', 'IL', '60601'),
  row(4, '2026-11-01 02:00:00', 'CHICAGO', 'IL', '60601'),
  // The skipped hour in Denver (02:00–02:59 never happens on 8 March 2026).
  row(5, '2026-03-08 02:30:00', 'DENVER', 'CO', '80202'),
  row(6, '2026-03-08 03:00:00', 'DENVER', 'CO', '80202'),
  // Phoenix keeps MST: never ambiguous.
  row(7, '2026-11-01 01:30:00', 'PHOENIX', 'AZ', '85004'),
];

const profile = (ambiguous?: string) => ({
  name: 'settlement-local',
  format: 'csv',
  ...(ambiguous === undefined ? {} : { ambiguousTime: ambiguous }),
  fields: {
    transactionId: 'SETTLE_ID',
    transactionType: { const: 'AUTHORIZED' },
    sourceCustomerId: 'CUST',
    sourceAccountId: 'ACCT',
    paymentType: { const: 'DEBIT' },
    paymentMethodEntryType: { const: 'CHIP' },
    transactionTimestamp: {
      from: 'LOCAL_TIME',
      timestamp: {
        format: 'YYYY-MM-DD HH:mm:ss',
        zone: { country: 'COUNTRY', state: 'STATE', states: { 'US-AZ': 'America/Phoenix' } },
      },
    },
    transactionPostingTimestamp: {
      from: 'LOCAL_TIME',
      timestamp: {
        format: 'YYYY-MM-DD HH:mm:ss',
        zone: { country: 'COUNTRY', state: 'STATE', states: { 'US-AZ': 'America/Phoenix' } },
      },
    },
    paymentNetworkMCC: 'MCC',
    paymentNetworkMerchantIdType: { const: 'MID' },
    paymentNetworkMerchant: 'MERCHANT',
    paymentNetworkMerchantCity: 'CITY',
    paymentNetworkMerchantState: 'STATE',
    paymentNetworkMerchantPostalCode: 'ZIP',
    paymentNetworkMerchantCountryCode: 'COUNTRY',
    paymentNetworkMerchantId: 'MID',
    postedAmount: { from: 'AMOUNT', amount: true },
    currencyCode: 'CCY',
  },
});

let exportFile = '';
const profileFile = async (name: string, ambiguous?: string) => {
  const f = join(dir, `${name}.json`);
  await writeFile(f, JSON.stringify(profile(ambiguous)));
  return f;
};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-ambiguous-'));
  exportFile = join(dir, 'settlement.csv');
  await writeFile(exportFile, `${[HEADER, ...ROWS].join('\n')}\n`);
});

const send = (mapping: string, tag: string) =>
  runCliHere(['send', '--json', '--mapping', mapping, exportFile], { env: sendEnv(sim.url, dir, tag) });

const sentTimes = () =>
  Object.fromEntries([...sim.transactions()].map((t) => [t.transactionId, t.transactionTimestamp]));

describe('ambiguous local times: decided by the profile, rejected by default, always counted', () => {
  it('with no choice written, the repeated-hour and gap rows are rejected with the reason and counted', async () => {
    const r = await send(await profileFile('none'), 'none');
    expect(r.code, r.stderr).toBe(2);
    const s = summaryOf(r);
    expect(s).toMatchObject({ read: 7, valid: 4, rejected: 3, sent: 4 });
    expect(s.ambiguousTimes).toEqual({ repeatedHour: 4, gap: 2, rule: 'reject' });
    expect(Object.keys(sentTimes()).sort()).toEqual(['S-1001', 'S-1004', 'S-1006', 'S-1007']);
    const rejects = (await readFile(join(dir, 'none.rejects.ndjson'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { line: number; errors: Array<{ field: string; message: string }> });
    expect(rejects.map((x) => x.line)).toEqual([3, 4, 6]);
    expect(rejects[0]?.errors[0]).toEqual({
      field: 'transactionTimestamp',
      message:
        '"2026-11-01 01:15:00" is a local time in the hour the clocks repeat (it happened twice: 2026-11-01T06:15:00.000Z or 2026-11-01T07:15:00.000Z): ambiguous, rejected ("ambiguous": "reject", the default; "earlier" or "later" decides)',
    });
    expect(rejects[2]?.errors[0]?.message).toContain('the hour the clocks skip');
    // Both timestamp fields are named: a rejected record lists every problem it has.
    expect(rejects[0]?.errors.map((e) => e.field)).toEqual([
      'transactionTimestamp',
      'transactionPostingTimestamp',
    ]);
  });

  it('with "earlier" they are sent as the earlier instant, and counted', async () => {
    const r = await send(await profileFile('earlier', 'earlier'), 'earlier');
    expect(r.code, r.stderr).toBe(0);
    expect(summaryOf(r)).toMatchObject({
      read: 7,
      sent: 7,
      ambiguousTimes: { repeatedHour: 4, gap: 2, rule: 'earlier' },
    });
    expect(sentTimes()).toMatchObject({
      'S-1002': '2026-11-01T06:15:00.000Z',
      'S-1003': '2026-11-01T06:59:59.000Z',
      'S-1005': '2026-03-08T08:30:00.000Z',
      'S-1007': '2026-11-01T08:30:00.000Z',
    });
  });

  it('with "later" they are sent as the later instant; the words of the summary name the rule', async () => {
    const mapping = await profileFile('later', 'later');
    const r = await runCliHere([
      'send',
      '--base-url',
      sim.url,
      '--ledger',
      join(dir, 'later.ledger.ndjson'),
      '--rejects',
      join(dir, 'later.rejects.ndjson'),
      '--mapping',
      mapping,
      exportFile,
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(
      '6 ambiguous local times (4 in a DST repeated hour, 2 in a DST gap): read as the later instant ("ambiguous": "later")',
    );
    expect(sentTimes()).toMatchObject({
      'S-1002': '2026-11-01T07:15:00.000Z',
      'S-1003': '2026-11-01T07:59:59.000Z',
      'S-1005': '2026-03-08T09:30:00.000Z',
    });
  });

  it('map and mapping check count them and name the rule', async () => {
    const mapping = await profileFile('none2');
    const m = await runCliHere(['map', '--mapping', mapping, exportFile]);
    expect(m.code).toBe(2);
    expect(textOf(m.stderr)).toContain(
      '6 ambiguous local times (4 in a DST repeated hour, 2 in a DST gap): rejected ("ambiguous": "reject")',
    );
    const c = await runCliHere(['mapping', 'check', mapping, exportFile]);
    expect(c.stderr + c.stdout).toContain(
      '6 ambiguous local times (4 in a DST repeated hour, 2 in a DST gap): rejected ("ambiguous": "reject") (transactionTimestamp 3, transactionPostingTimestamp 3)',
    );
  });

  it('a choice that is not one of the three is refused at load, naming the key', async () => {
    const f = join(dir, 'bad.json');
    const p = profile();
    (p.fields.transactionTimestamp.timestamp as Record<string, unknown>).ambiguous = 'first';
    await writeFile(f, JSON.stringify(p));
    const r = await runCliHere(['mapping', 'check', f]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      'fields.transactionTimestamp.timestamp.ambiguous: expected "earlier", "later" or "reject"',
    );
  });
});
