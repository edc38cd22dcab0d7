// docs/mapping.md's worked example, run exactly: test/fixtures/acme/export.csv (card numbers, dollar amounts, local
// times with a zone column, "CITY, ST ZIP", chip/contactless/ecom) through test/fixtures/acme/profile.json, with no
// preprocessing; the draft of the same export, what mapping check says of it, and the code lists at work.
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCliHere, summaryOf } from '../helpers/cli.ts';
import { useSimulator } from '../helpers/simulator.ts';

const EXPORT = 'test/fixtures/acme/export.csv';
const PROFILE = 'test/fixtures/acme/profile.json';
// A service that refuses any code outside the code lists: a profile that passes it sends only known codes.
const sim = useSimulator({ seed: 23, strictCodes: true }, 'reset');
let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-acme-'));
});

const lines = (s: string) => s.split('\n').filter((l) => l !== '');

describe('the worked example of docs/mapping.md', () => {
  it('docs/mapping.md shows the fixture: its first rows, and its profile as it is', async () => {
    const md = await readFile('docs/mapping.md', 'utf8');
    const example = md.slice(md.indexOf('## A worked example'));
    const blocks = [...example.matchAll(/^```(\w*)\n([\s\S]*?)^```/gm)];
    const csv = (await readFile(EXPORT, 'utf8')).split('\n');
    expect(blocks[0]?.[2]).toBe(`${csv.slice(0, 6).join('\n')}\n`);
    const shown = JSON.parse(blocks[1]?.[2] as string);
    const { description: _, ...fixture } = JSON.parse(await readFile(PROFILE, 'utf8'));
    expect(shown).toEqual(fixture);
  });

  it('maps every record to the right UTC instant, place, amount, codes and card fields', async () => {
    const r = await runCliHere(['map', '--mapping', PROFILE, EXPORT]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('svc-ingest map: 8 read, 8 mapped, 0 rejected (mapping acme)\n');
    const txs = lines(r.stdout).map((l) => JSON.parse(l));
    const pick = (t: Record<string, unknown>) =>
      [
        t.transactionId,
        t.transactionTimestamp,
        t.postedAmount,
        t.paymentNetworkMerchantCity,
        t.paymentNetworkMerchantState,
        t.paymentNetworkMerchantPostalCode,
        t.paymentMethodEntryType,
        t.onlineIndicator,
        t.cardPresentIndicator,
        t.iin,
        t.last4,
        t.transactionType,
      ].join(' ');
    expect(txs.map(pick)).toEqual([
      // 14:03:22 in Chicago (CST in November)
      'A-1001 2026-11-20T20:03:22.000Z 1234 AUSTIN TX 78701 CHIP NOT_ONLINE 1 411111 1111 AUTHORIZED',
      // 18:03:58 PST is the next day in UTC
      'A-1002 2026-02-13T02:03:58.000Z 120400 SAN JOSE CA 95128 CONTACTLESS NOT_ONLINE 1 555555 4444 AUTHORIZED',
      // Denver on both sides of the change to summer time: 01:59:59 MST, then 03:00:00 MDT, one second apart
      'A-1003 2026-03-08T08:59:59.000Z 850 DENVER CO 80202 CHIP NOT_ONLINE 1 401288 1881 AUTHORIZED',
      'A-1004 2026-03-08T09:00:00.000Z 4107 DENVER CO 80205 CONTACTLESS NOT_ONLINE 1 401288 1881 AUTHORIZED',
      // an offset, and an abbreviation
      'A-1005 2026-07-04T13:15:00.000Z 9999 NEW YORK NY 10001 ECOMMERCE ONLINE 0 601111 1117 AUTHORIZED',
      'A-1006 2026-07-05T14:00:00.000Z 1999 NEW YORK NY 10001 ECOMMERCE ONLINE 0 601111 1117 REFUND',
      // the same wall-clock time in MST and PDT is the same instant
      'A-1007 2026-11-01T08:30:00.000Z 6320 PHOENIX AZ 85034 CHIP NOT_ONLINE 1 378282 0005 AUTHORIZED',
      'A-1008 2026-11-01T08:30:00.000Z 575 SEATTLE WA 98101-1234 CONTACTLESS NOT_ONLINE 1 555555 4444 AUTHORIZED',
    ]);
    expect(r.stdout).not.toMatch(/4111 ?1111 ?1111 ?1111|5555555555554444/);
  });

  it('is sent whole to a service refusing unknown codes; the summary counts the codes sent', async () => {
    const ledger = join(dir, 'ledger.ndjson');
    const base = ['send', '--base-url', sim.url, '--ledger', ledger, '--mapping', PROFILE, EXPORT];
    const r = await runCliHere([...base.slice(0, 1), '--json', ...base.slice(1)]);
    expect(r.code, r.stderr).toBe(0);
    const s = summaryOf(r) as unknown as Record<string, unknown>;
    expect(s).toMatchObject({ read: 8, sent: 8, failed: 0, rejected: 0 });
    expect(s.codes).toEqual({
      transactionType: { AUTHORIZED: 7, REFUND: 1 },
      paymentType: { DEBIT: 8 },
      paymentMethodEntryType: { CHIP: 3, CONTACTLESS: 3, ECOMMERCE: 2 },
      paymentNetworkMerchantIdType: { MID: 8 },
      onlineIndicator: { NOT_ONLINE: 6, ONLINE: 2 },
      cardPresentIndicator: { '1': 6, '0': 2 },
    });
    expect(sim.stats().transactions.accepted).toBe(8);
  });

  it('mapping draft recognises the times, the zone column, dollars, "CITY, ST ZIP" and the entry-mode words', async () => {
    const d = await runCliHere(['mapping', 'draft', EXPORT]);
    expect(d.code, d.stderr).toBe(0);
    const fields = JSON.parse(d.stdout).fields;
    expect(fields.transactionTimestamp).toEqual({
      from: 'TXN_DATETIME',
      timestamp: { format: 'M/D/YYYY H:mm:ss', zone: '{TZ}' },
    });
    expect(fields.transactionPostingTimestamp).toMatchObject({ from: 'TXN_DATETIME' });
    expect(fields.postedAmount).toEqual({ from: 'AMOUNT', amount: true });
    expect(fields.currencyCode).toMatchObject({ const: 'USD' });
    expect(fields.paymentNetworkMerchantCity).toMatchObject({ from: 'LOCATION', match: { group: 'city' } });
    expect(fields.paymentNetworkMerchantState).toMatchObject({ match: { group: 'state' }, state: true });
    expect(fields.paymentNetworkMerchantPostalCode).toMatchObject({ match: { group: 'zip' } });
    expect(fields.paymentNetworkMerchantCountryCode).toMatchObject({ const: 'US' });
    expect(fields.paymentMethodEntryType.enum).toMatchObject({
      chip: 'CHIP',
      contactless: 'CONTACTLESS',
      ecom: 'ECOMMERCE',
    });
    expect(fields.transactionType.enum).toMatchObject({ purchase: 'AUTHORIZED', refund: 'REFUND' });
    // Never the old `"case": "upper"`, which made ECOM and PURCHASE.
    expect(d.stdout).not.toContain('"case"');
    // What is left to write, listed with what it needs.
    const draft = join(dir, 'draft.json');
    await writeFile(draft, d.stdout);
    const c = await runCliHere(['mapping', 'check', draft, EXPORT]);
    expect(c.code).toBe(1);
    expect(c.stdout).toContain(
      'still to be written (1 field at "from": "?"):\n    paymentType: one of DEBIT, CREDIT, PREPAID: "const", or "enum" mapping a column\'s values to them\n',
    );
    // With it written, the draft maps every record of the export.
    const doc = JSON.parse(d.stdout);
    doc.fields.paymentType = { const: 'DEBIT' };
    await writeFile(draft, JSON.stringify(doc));
    const m = await runCliHere(['map', '--mapping', draft, EXPORT]);
    expect(m.code, m.stderr).toBe(0);
    expect(lines(m.stdout)).toHaveLength(8);
  });

  it('codes outside the lists: mapping check and map name them, the summary shows them, a strict service refuses them', async () => {
    const doc = JSON.parse(await readFile(PROFILE, 'utf8'));
    doc.fields.paymentMethodEntryType = { from: 'ENTRY_MODE', case: 'upper' };
    doc.fields.transactionType = { from: 'TYPE', case: 'upper' };
    const upper = join(dir, 'upper.json');
    await writeFile(upper, JSON.stringify(doc));
    const c = await runCliHere(['mapping', 'check', upper, EXPORT]);
    expect(c.code, c.stderr).toBe(0);
    expect(lines(c.stderr)).toEqual([
      `svc-ingest: warning: ${EXPORT}: transactionType: "PURCHASE" is not a known transactionType (known: AUTHORIZED, REFUND) (7 of 8 records)`,
      `svc-ingest: warning: ${EXPORT}: paymentMethodEntryType: "ECOM" is not a known paymentMethodEntryType (known: APPLE_PAY, GOOGLE_PAY, SAMSUNG_PAY, CHIP, CONTACTLESS, MAGNETIC_STRIPE, MANUAL, ECOMMERCE, CREDENTIAL_ON_FILE, CARD, OTHER) (2 of 8 records)`,
    ]);
    const m = await runCliHere(['map', '--mapping', upper, EXPORT]);
    expect(m.stderr).toContain('svc-ingest: warning: paymentMethodEntryType: "ECOM" is not a known');
    // A constant outside the lists is named by its JSON path at once.
    doc.fields.paymentType = { const: 'CHECKING' };
    await writeFile(upper, JSON.stringify(doc));
    const k = await runCliHere(['mapping', 'check', upper]);
    expect(k.stderr).toContain(
      'svc-ingest: warning: fields.paymentType.const: "CHECKING" is not a known paymentType (known: DEBIT, CREDIT, PREPAID)',
    );
    // The dry run's summary (stderr, as on a terminal) shows ECOM beside the others; the strict service refuses every batch holding one.
    const dry = await runCliHere(['send', '--dry-run', '--mapping', upper, EXPORT]);
    expect(dry.stderr).toContain(
      'codes to send: paymentMethodEntryType CHIP 3, CONTACTLESS 3, ECOM 2 (unknown)',
    );
    const sent = await runCliHere([
      'send',
      '--json',
      '--base-url',
      sim.url,
      '--ledger',
      join(dir, 'upper-ledger.ndjson'),
      '--retry-base-ms',
      '1',
      '--mapping',
      upper,
      EXPORT,
    ]);
    expect(sent.code).toBe(3);
    expect(summaryOf(sent)).toMatchObject({ read: 8, sent: 0, failed: 8 });
  });
});
