// issue 31's "Done when" export, sent in one pass with one profile: purchases and refunds whose posting time lives in
// different events (and a later `adjusted` event that must not be read), local times without a zone for merchants
// in five countries on both sides of a DST change, and payments with a settlement and a later refund, each element
// its own notification. Asserted on what the simulator received, field by field.
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCliHere, sendEnv, summaryOf } from '../helpers/cli.ts';
import { useSimulator } from '../helpers/simulator.ts';

const EXPORT = 'test/fixtures/multi-event/export.ndjson';
const PROFILE = 'test/fixtures/multi-event/profile.json';
const sim = useSimulator({ seed: 31, strictCodes: true }, 'reset');
let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-multi-event-'));
});

describe('one profile, one pass: first-of, zones from the merchant, one record to several notifications', () => {
  it('sends every valid notification with exact fields; the refund is its own; nothing is sent wrong', async () => {
    const rejects = join(dir, 'rejects.ndjson');
    const r = await runCliHere(['send', '--json', '--mapping', PROFILE, EXPORT], {
      env: sendEnv(sim.url, dir),
    });
    expect(r.code, r.stderr).toBe(2);
    // 12 records read; expansion added 2 (pay_005's and pay_007's refunds): 14 notifications, 12 valid, 2 rejected.
    expect(summaryOf(r)).toMatchObject({
      read: 12,
      expanded: 2,
      valid: 12,
      rejected: 2,
      sent: 12,
      failed: 0,
    });
    const got = [...sim.transactions()].sort((a, b) => a.transactionId.localeCompare(b.transactionId));
    const row = (t: Record<string, unknown>) =>
      [
        t.transactionId,
        t.transactionType,
        t.transactionTimestamp,
        t.transactionPostingTimestamp,
        t.postedAmount,
        t.currencyCode,
        t.paymentNetworkMerchantCountryCode,
        t.paymentNetworkMerchantState ?? '-',
      ].join(' ');
    expect(got.map((t) => row(t as unknown as Record<string, unknown>))).toEqual([
      // New York on both sides of the change to summer time (EST, then EDT): one second apart in UTC. The posting
      // time is the `captured` event's, not the later `adjusted` one that events[-1] would have read.
      'pay_001 AUTHORIZED 2026-03-08T06:59:59.000Z 2026-03-09T14:00:00.000Z 1234 USD US NY',
      'pay_002 AUTHORIZED 2026-03-08T07:00:00.000Z 2026-03-09T15:00:00.000Z 4107 USD US NY',
      // Pay_004 in Berlin after its change (CEST); pay_005 in London before it (GMT), its settlement and its
      // refund (element 2; the fee, element 1, is filtered out), each with its own posting time and local time.
      'pay_004 AUTHORIZED 2026-03-29T01:30:00.000Z 2026-03-30T09:00:00.000Z 2000 EUR DE -',
      'pay_005:0 AUTHORIZED 2026-03-29T00:30:00.000Z 2026-03-30T10:00:00.000Z 9999 GBP GB -',
      'pay_005:2 REFUND 2026-04-02T11:00:00.000Z 2026-04-02T11:00:00.000Z 9999 GBP GB -',
      'pay_006 AUTHORIZED 2026-03-29T01:30:00.000Z 2026-03-30T10:30:00.000Z 645 GBP GB -',
      // Melbourne on both sides of the end of summer time (AEDT +11, then AEST +10); the partial refund in AEST.
      'pay_007:0 AUTHORIZED 2026-04-04T14:30:00.000Z 2026-04-06T00:00:00.000Z 4500 AUD AU VIC',
      'pay_007:1 REFUND 2026-04-09T23:00:00.000Z 2026-04-10T01:00:00.000Z 500 AUD AU VIC',
      'pay_008 AUTHORIZED 2026-04-04T18:00:00.000Z 2026-04-06T01:00:00.000Z 380 AUD AU VIC',
      // Tokyo (country given as its numeric code 392); Texas settled by the profile's "states" (US-TX spans zones).
      'pay_009 AUTHORIZED 2026-03-08T01:00:00.000Z 2026-03-09T01:00:00.000Z 1200 JPY JP -',
      'pay_010 AUTHORIZED 2026-03-08T17:00:00.000Z 2026-03-09T18:00:00.000Z 975 USD US TX',
      // A standalone refund in Berlin before its change (CET): its posting time lives in the `refunded` event.
      'ref_003 REFUND 2026-03-29T00:30:00.000Z 2026-03-30T08:00:00.000Z 850 EUR DE -',
    ]);
    // One notification whole, exactly as received: the refund element of pay_005, read from the element and its parent.
    expect(got.find((t) => t.transactionId === 'pay_005:2')).toEqual({
      transactionId: 'pay_005:2',
      transactionType: 'REFUND',
      sourceCustomerId: 'C-3',
      sourceAccountId: 'A-3',
      paymentType: 'DEBIT',
      paymentMethodEntryType: 'ECOMMERCE',
      transactionTimestamp: '2026-04-02T11:00:00.000Z',
      transactionPostingTimestamp: '2026-04-02T11:00:00.000Z',
      paymentNetworkMCC: '5411',
      paymentNetworkMerchantIdType: 'MID',
      paymentNetworkMerchant: 'THAMES OUTFITTERS',
      paymentNetworkMerchantAddress1: '1 Main St',
      paymentNetworkMerchantCity: 'LONDON',
      paymentNetworkMerchantPostalCode: 'SW1A 1AA',
      paymentNetworkMerchantCountryCode: 'GB',
      paymentNetworkMerchantId: 'M-GB1',
      postedAmount: '9999',
      currencyCode: 'GBP',
    });
    // The optional template part: the unit where there is one, nothing (not a trailing space) where there is none.
    expect(got.find((t) => t.transactionId === 'pay_001')?.paymentNetworkMerchantAddress1).toBe(
      '12 W 31st St Unit 4',
    );
    // The two rejects say why, and name no guess: a US merchant without a state, a payment with nothing to notify.
    const lines = (await readFile(rejects, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => [l.line, l.errors[0].field, l.errors[0].message])).toEqual([
      [
        11,
        'transactionTimestamp',
        "first[1]: US has several time zones (America/Adak, America/Anchorage, America/Boise, America/Chicago … 29 zones): the merchant's state (merchant.region) decides, and this record has none",
      ],
      [12, '(record)', 'no element of elements whose type is ["settlement","refund"] (1 elements)'],
    ]);
  });
});

describe('map with an expanding profile', () => {
  it('--limit counts records: the last record’s refund is printed with its settlement; the last line counts both', async () => {
    const r = await runCliHere(['map', '--mapping', PROFILE, '--limit', '5', EXPORT]);
    expect(r.code, r.stderr).toBe(0);
    const ids = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).transactionId);
    expect(ids).toEqual(['pay_001', 'pay_002', 'ref_003', 'pay_004', 'pay_005:0', 'pay_005:2']);
    expect(r.stderr).toContain(
      'svc-ingest map: 5 read (+1 expanded), 6 mapped, 0 rejected (mapping tessera)',
    );
  });
});
