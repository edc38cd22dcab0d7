// Issue 50, Musts 2, 6 and 8 for `mapping draft`, on two nested shapes of our own (neither the docs' example): a
// transfer feed whose merchant sits under counterparty.merchant and whose `creationDate` is its event history's last
// time (a later adjustment in some records), and a card-payment feed whose elements[] is a union by `category`.
// The draft never proposes the last event's time as it is, orders the two times, marks every guess, and lists
// candidate paths for every "?".
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCliHere } from '../helpers/cli.ts';

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
});
