// Issue 50, Musts 2, 6 and 8 for `mapping draft`, on two nested shapes of our own (neither the docs' example): a
// transfer feed whose merchant sits under counterparty.merchant and whose `creationDate` is its event history's last
// time (a later adjustment in some records), and a card-payment feed whose elements[] is a union by `category`.
// The draft never proposes the last event's time as it is, orders the two times, marks every guess, and lists
// candidate paths for every "?". Two more of our own: a card-payment union whose variants keep their fields under
// their own key (`elements[category=card_refund].card_refund.amount`), and webhooks with `data.activity[]` by kind.
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCliHere } from '../helpers/cli.ts';
import { issuerExport } from '../helpers/issuer-export.ts';

let dir = '';
const two = (n: number) => String(n).padStart(2, '0');

/** Shape 1: a transfer with an event history; every 5th record has a later interchangeAdjusted event. */
function transfers(n: number): unknown[] {
  return Array.from({ length: n }, (_, i) => {
    const day = two(1 + (i % 27));
    const events = [
      { type: 'authorized', at: `2026-04-${day}T10:00:00Z` },
      { type: 'captured', at: `2026-04-${day}T22:00:00Z` },
    ];
    if (i % 5 === 4) events.push({ type: 'interchangeAdjusted', at: `2026-05-${day}T03:00:00Z` });
    return {
      id: `tr_${i}`,
      account: { id: `acct_${i % 7}`, customer: `cust_${i % 7}` },
      amount: '12.34',
      currency: 'USD',
      counterparty: {
        merchant: {
          name: `SHOP ${i}`,
          mcc: '5411',
          mid: `M${i}`,
          city: 'AUSTIN',
          state: 'TX',
          postal: '78701',
          country: 'US',
        },
      },
      createdAt: `2026-04-${day}T10:00:00Z`,
      creationDate: (events.at(-1) as { at: string }).at,
      events,
    };
  });
}

/** Shape 2: a card payment whose posting time lives in its settlement element, the transaction time at the top. */
function payments(n: number): unknown[] {
  return Array.from({ length: n }, (_, i) => ({
    payment_id: `cp_${i}`,
    card_holder: { customer_id: `c${i % 3}`, account_id: `a${i % 3}` },
    posted_at: `2026-04-${two(1 + (i % 27))}T09:00:00Z`,
    transaction_time: `2026-04-${two(2 + (i % 27))}T09:00:00Z`,
    merchant: {
      name: `CAFE ${i}`,
      mcc: '5814',
      id: `MID${i}`,
      city: 'DENVER',
      state: 'CO',
      postal_code: '80202',
      country: 'US',
    },
    amount: { value: '4.50', currency: 'USD' },
  }));
}

/**
 * Shape 3: a card-payment feed whose `elements[]` is a union by `category`, each variant's fields under its own key
 * (`card_transaction.amount`, `card_refund.amount`); every 4th payment is a refund, every 6th carries a fee element.
 */
function unionPayments(n: number): unknown[] {
  return Array.from({ length: n }, (_, i) => {
    const refund = i % 4 === 3;
    const day = two(1 + (i % 27));
    const elements: unknown[] = [
      refund
        ? {
            category: 'card_refund',
            card_refund: { amount: 250 + i, refunded_at: `2026-06-${day}T12:00:00Z` },
          }
        : {
            category: 'card_transaction',
            card_transaction: { amount: 1000 + i, authorized_at: `2026-06-${day}T09:00:00Z` },
          },
    ];
    if (i % 6 === 5) elements.push({ category: 'fee', fee: { amount: 30, description: 'cross-border' } });
    return {
      payment_id: `up_${i}`,
      customer_id: `c${i % 5}`,
      account_id: `a${i % 5}`,
      currency: 'USD',
      created_at: `2026-06-${day}T08:59:00Z`,
      merchant: {
        name: `STORE ${i}`,
        mcc: '5999',
        mid: `MM${i}`,
        city: 'BOSTON',
        state: 'MA',
        postal: '02108',
        country: 'US',
      },
      elements,
    };
  });
}

/** Shape 4: a webhook per card activity, under `data`, its movements in `data.activity[]` by `kind` (purchase, return). */
function activityWebhooks(n: number): unknown[] {
  return Array.from({ length: n }, (_, i) => {
    const day = two(1 + (i % 27));
    const kind = i % 5 === 2 ? 'return' : 'purchase';
    return {
      event_id: `evt_${i}`,
      object: 'card_activity',
      data: {
        transaction_id: `ca_${i}`,
        cardholder: { id: `h${i % 4}`, account: `acc${i % 4}` },
        currency: 'EUR',
        authorized_at: `2026-07-${day}T10:00:00Z`,
        acceptor: {
          name: `BAKERY ${i}`,
          mcc: '5462',
          id: `A${i}`,
          city: 'PARIS',
          postal: '75001',
          country: 'FR',
        },
        activity: [{ kind, amount: '7.20', posted_at: `2026-07-${day}T18:00:00Z` }],
      },
    };
  });
}

/** The fields a draft leaves at `"from": "?"`. */
const unknowns = (f: Record<string, Record<string, unknown>>) =>
  Object.entries(f)
    .filter(([, r]) => typeof r === 'object' && r.from === '?')
    .map(([k]) => k);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-draft-nested-'));
});

async function draft(name: string, records: unknown[]): Promise<Record<string, Record<string, unknown>>> {
  const file = join(dir, `${name}.ndjson`);
  await writeFile(file, `${records.map((r) => JSON.stringify(r)).join('\n')}\n`);
  const r = await runCliHere(['mapping', 'draft', file]);
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { fields: Record<string, Record<string, unknown>> }).fields;
}

describe('mapping draft on nested exports', () => {
  it("a time that is the last event's, whose kind varies, is GUESSED and the posting time is a first by kind", async () => {
    const f = await draft('transfers', transfers(40));
    const posting = f.transactionPostingTimestamp as Record<string, unknown>;
    expect(posting.first).toEqual([{ from: 'events[type=captured].at', timestamp: true }]);
    expect(String(posting.description)).toContain(
      'TODO: GUESSED: creationDate is the time of the last element of events in 40 of 40 records, whose kind varies (type=captured 32, type=interchangeAdjusted 8)',
    );
    // The merchant under counterparty.merchant is found, at any depth.
    expect(JSON.stringify(f)).toContain('counterparty.merchant.name');
    // Every rule that is a guess says so; no "?" without its candidate paths.
    for (const [field, rule] of Object.entries(f))
      if (typeof rule === 'object' && rule.from === '?')
        expect(String(rule.description), field).toContain('candidate paths:');
  });

  it("the two times are ordered: the earlier is the transaction's", async () => {
    const f = await draft('payments', payments(30));
    const tx = JSON.stringify(f.transactionTimestamp);
    const post = JSON.stringify(f.transactionPostingTimestamp);
    // posted_at is a day before transaction_time in every record: the draft swaps them and says so.
    expect(tx).toContain('posted_at');
    expect(post).toContain('transaction_time');
    expect(tx).toContain('swapped');
  });

  it('a union by kind gets a first across its variants: no field that sits at a path is left "?"', async () => {
    const lines = (await readFile('test/fixtures/multi-event/export.ndjson', 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const me = await draft('multi-event', lines);
    // Its countries are written US, USA, DEU and 276: the country is converted, whatever the first record says.
    expect(me.paymentNetworkMerchantCountryCode).toMatchObject({ from: 'merchant.country', country: true });
    expect(me.postedAmount?.first).toEqual([
      { from: 'elements[type=settlement].amount', amount: true },
      { from: 'elements[type=refund].amount', amount: true },
    ]);
    // The type reads the kind of the same list, through an enum of the kinds; fee and hold are no transaction's.
    expect(me.transactionType?.first).toEqual([
      { from: 'elements[type=settlement].type', enum: { settlement: 'AUTHORIZED' } },
      { from: 'elements[type=refund].type', enum: { refund: 'REFUND' } },
    ]);
    expect(String(me.transactionType?.description)).toBe(
      'TODO: GUESSED: transactionType by the kind of elements[].type: first of settlement, refund, in 11 of 12 records; left out, no transaction\'s kind: fee, authorization_hold; 2 records hold several of them: one notification of the first ("expand" over elements makes one per element); check the order',
    );
    const union = await draft('union', unionPayments(48));
    expect((union.postedAmount?.first as Array<{ from: string }> | undefined)?.map((r) => r.from)).toEqual([
      'elements[category=card_transaction].card_transaction.amount',
      'elements[category=card_refund].card_refund.amount',
    ]);
    // The posting time read from one variant becomes a first over the variants' times.
    expect(
      (union.transactionPostingTimestamp?.first as Array<{ from: string }> | undefined)?.map((r) => r.from),
    ).toEqual([
      'elements[category=card_transaction].card_transaction.authorized_at',
      'elements[category=card_refund].card_refund.refunded_at',
    ]);
    const hooks = await draft('webhooks', activityWebhooks(40));
    expect(
      (hooks.transactionPostingTimestamp?.first as Array<{ from: string }> | undefined)?.map((r) => r.from),
    ).toEqual(['data.activity[kind=purchase].posted_at', 'data.activity[kind=return].posted_at']);
    expect((hooks.transactionType?.first as Array<{ from: string }> | undefined)?.map((r) => r.from)).toEqual(
      ['data.activity[kind=purchase].kind', 'data.activity[kind=return].kind'],
    );
    // Of several ids, the most specific name: data.transaction_id over data.cardholder.id and data.acceptor.id.
    expect(hooks.transactionId?.from).toBe('data.transaction_id');
    expect(hooks.sourceCustomerId?.from).toBe('data.cardholder.id');
    // What is left at "?" is what the records do not hold (docs/mapping.md lists the counts).
    const acme = await runCliHere(['mapping', 'draft', 'test/fixtures/acme/export.csv']);
    const left = {
      'multi-event': unknowns(me),
      acme: unknowns((JSON.parse(acme.stdout) as { fields: Record<string, Record<string, unknown>> }).fields),
      transfers: unknowns(await draft('t', transfers(40))),
      payments: unknowns(await draft('p', payments(30))),
      union: unknowns(union),
      webhooks: unknowns(hooks),
      issuer: unknowns(await draft('i', issuerExport(200))),
    };
    expect(left).toEqual({
      'multi-event': ['paymentType'],
      acme: ['paymentType'],
      transfers: ['paymentType', 'paymentMethodEntryType'],
      payments: ['transactionType', 'paymentType', 'paymentMethodEntryType'],
      union: ['paymentType', 'paymentMethodEntryType'],
      webhooks: ['paymentType', 'paymentMethodEntryType', 'paymentNetworkMerchantState'],
      issuer: ['paymentType', 'paymentMethodEntryType'],
    });
  });

  it('a currency in the records with none beside the amount is GUESSED (the cardholder\'s first), not left "?"', async () => {
    const r = await runCliHere(['mapping', 'draft', 'samples/lithic.ndjson']);
    const fields = (JSON.parse(r.stdout) as { fields: Record<string, Record<string, unknown>> }).fields;
    expect(unknowns(fields)).toEqual([]);
    expect(fields.currencyCode?.from).toBe('amounts.cardholder.currency');
    expect(String(fields.currencyCode?.description)).toMatch(
      /GUESSED.*other candidates: amounts\.settlement\.currency/,
    );
  });
});
