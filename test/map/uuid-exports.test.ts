// Exports shaped like Marqeta's and Lithic's, whose transaction, card and account tokens are UUIDs: every valid
// record is mapped, none refused as a card number — including UUIDs whose digit groups on either side of their
// hyphens once formed a Luhn-valid 13-19-digit run (de6a90e9-8939-4827-8942-8fda87f2ec1f), which refused every
// transaction of a card holding such a token. Through the real CLI (`svc-ingest map`).
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { workdir } from '../faults/helpers.ts';
import { runCliHere } from '../helpers/cli.ts';
import { rng } from '../helpers/false-positives.ts';

/** UUIDs the old rule refused (issue 19), then seeded random v4 ones. */
const REFUSED_BEFORE = ['de6a90e9-8939-4827-8942-8fda87f2ec1f', 'fd0bcc70-5403-4000-8628-01eeec1f16c3'];
function uuids(seed: number): () => string {
  const next = rng(seed);
  const hex = (n: number) => Array.from({ length: n }, () => '0123456789abcdef'[next() % 16]).join('');
  let k = 0;
  return () =>
    REFUSED_BEFORE[k++] ?? `${hex(8)}-${hex(4)}-4${hex(3)}-${'89ab'[next() % 4]}${hex(3)}-${hex(12)}`;
}

const N = 1940;

/** A Marqeta-shaped profile: Core API transactions, card acceptor nested, tokens as UUIDs. */
const MARQETA = {
  name: 'marqeta-shaped',
  format: 'ndjson',
  fields: {
    transactionId: 'token',
    transactionType: { const: 'AUTHORIZED' },
    sourceCustomerId: 'user_token',
    sourceAccountId: 'card_token',
    paymentType: { const: 'DEBIT' },
    paymentMethodEntryType: { const: 'CHIP' },
    transactionTimestamp: { from: 'user_transaction_time', timestamp: true },
    transactionPostingTimestamp: { from: 'settlement_date', timestamp: true },
    paymentNetworkMCC: 'card_acceptor.mcc',
    paymentNetworkMerchantIdType: { const: 'MID' },
    paymentNetworkMerchant: 'card_acceptor.name',
    paymentNetworkMerchantCity: 'card_acceptor.city',
    paymentNetworkMerchantState: 'card_acceptor.state',
    paymentNetworkMerchantPostalCode: 'card_acceptor.zip',
    paymentNetworkMerchantCountryCode: { from: 'card_acceptor.country_code', country: true },
    paymentNetworkMerchantId: 'card_acceptor.mid',
    authorizationApprovalCode: 'approval_code',
    postedAmount: { from: 'amount', amount: true },
    currencyCode: 'currency_code',
  },
};

function marqeta(uuid: () => string, i: number): Record<string, unknown> {
  return {
    token: uuid(),
    user_token: uuid(),
    card_token: uuid(),
    type: 'authorization.clearing',
    state: 'COMPLETION',
    amount: 12.5 + (i % 50),
    currency_code: 'USD',
    user_transaction_time: '2025-10-01T14:03:11Z',
    settlement_date: '2025-10-02T00:00:00Z',
    approval_code: String(100000 + i),
    card_acceptor: {
      mid: `${String(100000000 + i)}000000`.slice(0, 15),
      mcc: '5814',
      name: 'BLUE BOTTLE COFFEE',
      city: 'SAN FRANCISCO',
      state: 'CA',
      zip: '94102',
      country_code: 'USA',
    },
  };
}

async function mapFile(args: string[]): Promise<{ mapped: number; rejected: number; stderr: string }> {
  const r = await runCliHere(['map', ...args]);
  const m = /(\d+) read, (\d+) mapped, (\d+) rejected/.exec(r.stderr);
  return { mapped: Number(m?.[2]), rejected: Number(m?.[3]), stderr: r.stderr };
}

describe('UUID tokens are not card numbers', () => {
  it(`Lithic-shaped: ${N} settled transactions with UUID tokens, every one mapped`, async () => {
    const w = await workdir('uuid-lithic');
    const template = JSON.parse(
      (await readFile('samples/lithic.ndjson', 'utf8')).split('\n')[0] as string,
    ) as Record<string, unknown>;
    const uuid = uuids(5);
    const lines: string[] = [];
    // The first card's token is one the old rule refused: each of its transactions was refused.
    const card = uuid();
    for (let i = 0; i < N; i++)
      lines.push(
        JSON.stringify({
          ...template,
          token: uuid(),
          account_token: uuid(),
          card_token: i < 20 ? card : uuid(),
        }),
      );
    const file = join(w.dir, 'lithic.ndjson');
    await writeFile(file, `${lines.join('\n')}\n`);
    const r = await mapFile(['--mapping', 'lithic', file]);
    expect(r.rejected, r.stderr).toBe(0);
    expect(r.mapped).toBe(N);
  });

  it(`Marqeta-shaped: ${N} transactions with UUID tokens, every one mapped`, async () => {
    const w = await workdir('uuid-marqeta');
    const profile = join(w.dir, 'marqeta.json');
    await writeFile(profile, JSON.stringify(MARQETA));
    const uuid = uuids(11);
    const file = join(w.dir, 'marqeta.ndjson');
    await writeFile(
      file,
      `${Array.from({ length: N }, (_, i) => JSON.stringify(marqeta(uuid, i))).join('\n')}\n`,
    );
    const r = await mapFile(['--mapping', profile, file]);
    expect(r.rejected, r.stderr).toBe(0);
    expect(r.mapped).toBe(N);
  });
});
