// The built-in processor profiles on their samples, through the real CLI (`svc-ingest map`): every field of
// every mapped record is pinned (values worked out by hand from the sample objects), and every reject line.
import { describe, expect, it } from 'vitest';
import { runCliHere } from '../helpers/cli.ts';

type Tx = Record<string, unknown>;

async function mapSample(
  mapping: string,
  file: string,
): Promise<{ txs: Tx[]; stderr: string; code: number | null }> {
  const r = await runCliHere(['map', '--mapping', mapping, `samples/${file}`]);
  const txs = r.stdout
    .trim()
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Tx);
  return { txs, stderr: r.stderr, code: r.code };
}

describe('stripe-issuing on samples/stripe-issuing.ndjson', () => {
  // What every Stripe record shares; each row below adds what differs.
  const base = (n: number, merchant: Tx): Tx => ({
    transactionId: `ipi_1SmplTx${String(n).padStart(6, '0')}`,
    transactionType: 'AUTHORIZED',
    sourceCustomerId: `ich_1SmplHold${String(n % 3).padStart(4, '0')}`,
    sourceAccountId: `ic_1SmplCard${String(n % 4).padStart(4, '0')}`,
    paymentType: 'PREPAID',
    paymentMethodEntryType: 'CARD',
    mobileIndicator: false,
    paymentNetworkMerchantIdType: 'MID',
    paymentNetworkMerchantCountryCode: 'US',
    currencyCode: 'USD',
    authorizationApprovalCode: `S${498100 + n}`,
    ...merchant,
  });
  const blueBottle = {
    paymentNetworkMCC: '5814',
    paymentNetworkMerchant: 'BLUE BOTTLE COFFEE',
    paymentNetworkMerchantCity: 'San Francisco',
    paymentNetworkMerchantState: 'CA',
    paymentNetworkMerchantPostalCode: '94102',
    paymentNetworkMerchantId: '1000300001',
  };
  const amazon = {
    paymentNetworkMCC: '5942',
    paymentNetworkMerchant: 'AMZN MKTP US',
    paymentNetworkMerchantCity: 'Seattle',
    paymentNetworkMerchantState: 'WA',
    paymentNetworkMerchantPostalCode: '98109',
    paymentNetworkMerchantId: '1000300007',
  };
  const time = (iso: string) => ({ transactionTimestamp: iso, transactionPostingTimestamp: iso });
  const expected: Tx[] = [
    { ...base(1, blueBottle), ...time('2025-10-01T15:00:00.000Z'), postedAmount: '1250' },
    {
      ...base(2, {
        paymentNetworkMCC: '5310',
        paymentNetworkMerchant: 'TARGET T-1234',
        paymentNetworkMerchantCity: 'Boston',
        paymentNetworkMerchantState: 'MA',
        paymentNetworkMerchantPostalCode: '02134',
        paymentNetworkMerchantId: '1000300002',
      }),
      ...time('2025-10-02T15:01:01.000Z'),
      paymentMethodEntryType: 'APPLE_PAY',
      mobileIndicator: true,
      postedAmount: '8437',
    },
    {
      ...base(3, {
        paymentNetworkMCC: '5941',
        paymentNetworkMerchant: 'REI CO-OP',
        paymentNetworkMerchantCity: 'Seattle',
        paymentNetworkMerchantState: 'WA',
        paymentNetworkMerchantPostalCode: '98103',
        paymentNetworkMerchantId: '1000300003',
      }),
      ...time('2025-10-03T15:00:22.000Z'),
      postedAmount: '12999',
    },
    {
      ...base(4, {
        paymentNetworkMCC: '5541',
        paymentNetworkMerchant: 'SHELL OIL 5744',
        paymentNetworkMerchantCity: 'Tempe',
        paymentNetworkMerchantState: 'AZ',
        paymentNetworkMerchantPostalCode: '85281',
        paymentNetworkMerchantId: '1000300004',
      }),
      ...time('2025-10-04T15:00:05.000Z'),
      paymentMethodEntryType: 'GOOGLE_PAY',
      mobileIndicator: true,
      cashBackAtPointOfSaleAmount: '2000',
      postedAmount: '4210',
    },
    {
      ...base(5, {
        paymentNetworkMCC: '4899',
        paymentNetworkMerchant: 'NETFLIX.COM',
        paymentNetworkMerchantCity: 'Los Gatos',
        paymentNetworkMerchantState: 'CA',
        paymentNetworkMerchantPostalCode: '95032',
        paymentNetworkMerchantId: '1000300005',
      }),
      ...time('2025-10-05T15:00:00.000Z'),
      postedAmount: '1549',
    },
    {
      ...base(6, {
        paymentNetworkMCC: '5411',
        paymentNetworkMerchant: 'WHOLE FOODS MKT',
        paymentNetworkMerchantCity: 'Austin',
        paymentNetworkMerchantState: 'TX',
        paymentNetworkMerchantPostalCode: '78701',
        paymentNetworkMerchantId: '1000300006',
      }),
      ...time('2025-10-06T15:00:13.000Z'),
      paymentMethodEntryType: 'SAMSUNG_PAY',
      mobileIndicator: true,
      postedAmount: '6723',
    },
    // Line 7: a merchant in London, without a state (required only where the country has states).
    {
      transactionId: 'ipi_1SmplTx000007',
      transactionType: 'AUTHORIZED',
      sourceCustomerId: 'ich_1SmplHold0001',
      sourceAccountId: 'ic_1SmplCard0003',
      paymentType: 'PREPAID',
      paymentMethodEntryType: 'CARD',
      transactionTimestamp: '2025-10-07T15:00:14.000Z',
      transactionPostingTimestamp: '2025-10-07T15:00:14.000Z',
      paymentNetworkMCC: '5812',
      paymentNetworkMerchantIdType: 'MID',
      paymentNetworkMerchant: 'PRET A MANGER',
      paymentNetworkMerchantCity: 'London',
      paymentNetworkMerchantPostalCode: 'SW1A 1AA',
      paymentNetworkMerchantCountryCode: 'GB',
      paymentNetworkMerchantId: '1000300009',
      mobileIndicator: false,
      postedAmount: '899',
      currencyCode: 'GBP',
      authorizationApprovalCode: 'S498107',
    },
    { ...base(8, amazon), ...time('2025-10-08T15:00:15.000Z'), postedAmount: '2599' },
    {
      ...base(9, amazon),
      ...time('2025-10-09T15:00:16.000Z'),
      transactionType: 'REFUND',
      postedAmount: '2599',
    },
    {
      ...base(11, {
        paymentNetworkMCC: '5814',
        paymentNetworkMerchant: 'CHIPOTLE 0917',
        paymentNetworkMerchantCity: 'Denver',
        paymentNetworkMerchantState: 'CO',
        paymentNetworkMerchantPostalCode: '80202',
        paymentNetworkMerchantId: '1000300008',
      }),
      ...time('2025-10-11T15:00:18.000Z'),
      postedAmount: '1388',
    },
    {
      ...base(12, blueBottle),
      ...time('2025-10-12T15:00:19.000Z'),
      paymentMethodEntryType: 'APPLE_PAY',
      mobileIndicator: true,
      postedAmount: '575',
    },
  ];

  it('maps every valid object to exactly the expected TransactionNotification; rejects lines 10, 13 (line 7, in London without a state, is sent)', async () => {
    const { txs, stderr, code } = await mapSample('stripe-issuing', 'stripe-issuing.ndjson');
    expect(code, stderr).toBe(2);
    expect(txs).toEqual(expected);
    expect(stderr.split('\n').filter((l) => l.startsWith('samples/'))).toEqual([
      'samples/stripe-issuing.ndjson:10: paymentNetworkMerchantPostalCode: required',
      'samples/stripe-issuing.ndjson:13: transactionId: duplicate transactionId ipi_1SmplTx000005 within this run; the first one is sent',
    ]);
    expect(stderr).toContain('svc-ingest map: 13 read, 11 mapped, 2 rejected (mapping stripe-issuing)');
  });
});

describe('lithic on samples/lithic.ndjson', () => {
  const base = (n: number, merchant: Tx, created: string, cleared: string, amount: string): Tx => ({
    transactionId: `7b1c0a2e-5d4f-4c1a-9e0b-${String(n).padStart(12, '0')}`,
    transactionType: 'AUTHORIZED',
    sourceCustomerId: `acct-${String(n % 3).padStart(4, '0')}-5f2e`,
    sourceAccountId: `card-${String(n % 4).padStart(4, '0')}-9a7c`,
    paymentType: 'DEBIT',
    paymentMethodEntryType: 'CHIP',
    transactionTimestamp: created,
    transactionPostingTimestamp: cleared,
    paymentNetworkMerchantIdType: 'MID',
    paymentNetworkMerchantCountryCode: 'US',
    mobileIndicator: false,
    cardNetworkIdentifier: 4,
    cardPresentIndicator: '1',
    recurringTransactionIndicator: false,
    onlineIndicator: 'NOT_ONLINE',
    authorizationAmount: amount,
    postedAmount: amount,
    currencyCode: 'USD',
    authorizationApprovalCode: String(300100 + n),
    acquirerReferenceNumber: `7461813${String(n).padStart(16, '0')}`,
    ...merchant,
  });
  const blueBottle = {
    paymentNetworkMCC: '5814',
    paymentNetworkMerchant: 'BLUE BOTTLE COFFEE',
    paymentNetworkMerchantAddress1: '315 LINDEN ST',
    paymentNetworkMerchantCity: 'SAN FRANCISCO',
    paymentNetworkMerchantState: 'CA',
    paymentNetworkMerchantPostalCode: '94102',
    paymentNetworkMerchantId: 'LITM00001',
  };
  const traderJoes = {
    paymentNetworkMCC: '5411',
    paymentNetworkMerchant: "TRADER JOE'S #552",
    paymentNetworkMerchantAddress1: '484 LEXINGTON PKWY',
    paymentNetworkMerchantCity: 'ST. PAUL',
    paymentNetworkMerchantState: 'MN',
    paymentNetworkMerchantPostalCode: '55102',
    paymentNetworkMerchantId: 'LITM00002',
  };
  const spotify = {
    paymentNetworkMCC: '5815',
    paymentNetworkMerchant: 'SPOTIFY USA',
    paymentNetworkMerchantAddress1: '150 GREENWICH ST',
    paymentNetworkMerchantCity: 'NEW YORK',
    paymentNetworkMerchantState: 'NY',
    paymentNetworkMerchantPostalCode: '10011',
    paymentNetworkMerchantId: 'LITM00003',
  };
  const cvs = {
    paymentNetworkMCC: '5912',
    paymentNetworkMerchant: 'CVS/PHARMACY #0917',
    paymentNetworkMerchantAddress1: '1 N CENTRAL AVE',
    paymentNetworkMerchantCity: 'PHOENIX',
    paymentNetworkMerchantState: 'AZ',
    paymentNetworkMerchantPostalCode: '85004',
    paymentNetworkMerchantId: 'LITM00004',
  };
  // A recurring card-not-present subscription: no onlineIndicator (cardholder REOCCURRING is neither).
  const subscription = {
    paymentMethodEntryType: 'CREDENTIAL_ON_FILE',
    cardPresentIndicator: '0',
    recurringTransactionIndicator: true,
    onlineIndicator: undefined,
  };
  const expected: Tx[] = [
    base(1, blueBottle, '2025-10-01T14:03:11.482Z', '2025-10-02T06:00:00.000Z', '1250'),
    {
      ...base(2, traderJoes, '2025-10-02T17:45:09.120Z', '2025-10-03T06:00:00.000Z', '5418'),
      paymentMethodEntryType: 'CONTACTLESS',
      mobileIndicator: true,
      cardNetworkIdentifier: 5,
    },
    // Its events list CLEARING first: the posting time is still the CLEARING event's.
    { ...base(3, spotify, '2025-10-03T08:00:02.000Z', '2025-10-04T06:00:00.000Z', '1199'), ...subscription },
    base(4, cvs, '2025-10-04T19:12:44.901Z', '2025-10-05T06:00:00.000Z', '2387'),
    {
      ...base(
        6,
        {
          paymentNetworkMCC: '4121',
          paymentNetworkMerchant: 'UBER *TRIP',
          paymentNetworkMerchantAddress1: '1515 3RD ST',
          paymentNetworkMerchantCity: 'SAN FRANCISCO',
          paymentNetworkMerchantState: 'CA',
          paymentNetworkMerchantPostalCode: '94103',
          paymentNetworkMerchantId: 'LITM00006',
        },
        '2025-10-06T23:59:59.999Z',
        '2025-10-07T06:00:00.000Z',
        '2875',
      ),
      paymentMethodEntryType: 'ECOMMERCE',
      mobileIndicator: true,
      cardPresentIndicator: '0',
      onlineIndicator: 'ONLINE',
    },
    {
      // A return: CREDIT polarity, a negative amount made positive, no AUTHORIZATION event.
      ...base(
        7,
        {
          paymentNetworkMCC: '5200',
          paymentNetworkMerchant: 'HOME DEPOT #4711',
          paymentNetworkMerchantAddress1: '2455 PACES FERRY RD',
          paymentNetworkMerchantCity: 'ATLANTA',
          paymentNetworkMerchantState: 'GA',
          paymentNetworkMerchantPostalCode: '30339',
          paymentNetworkMerchantId: 'LITM00005',
        },
        '2025-10-07T13:10:00.000Z',
        '2025-10-08T06:00:00.000Z',
        '4599',
      ),
      transactionType: 'REFUND',
      authorizationAmount: undefined,
      // stdout shows what the service gets (one rule, src/mask/index.ts): the ARN whole — 23 digits in one group are
      // one number, no card number, though a 13-19-digit window of them passes Luhn.
      acquirerReferenceNumber: '74618130000000000000007',
    },
    // Line 9: a merchant in London, without a state (required only where the country has states).
    {
      transactionId: '7b1c0a2e-5d4f-4c1a-9e0b-000000000009',
      transactionType: 'AUTHORIZED',
      sourceCustomerId: 'acct-0000-5f2e',
      sourceAccountId: 'card-0001-9a7c',
      paymentType: 'DEBIT',
      paymentMethodEntryType: 'CHIP',
      transactionTimestamp: '2025-10-09T12:01:00.000Z',
      transactionPostingTimestamp: '2025-10-10T06:00:00.000Z',
      paymentNetworkMCC: '5812',
      paymentNetworkMerchantIdType: 'MID',
      paymentNetworkMerchant: 'PRET A MANGER',
      paymentNetworkMerchantAddress1: '1 THE STRAND',
      paymentNetworkMerchantCity: 'LONDON',
      paymentNetworkMerchantPostalCode: 'SW1A 1AA',
      paymentNetworkMerchantCountryCode: 'GB',
      paymentNetworkMerchantId: 'LITM00007',
      mobileIndicator: false,
      cardNetworkIdentifier: 5,
      cardPresentIndicator: '1',
      recurringTransactionIndicator: false,
      authorizationAmount: '1099',
      postedAmount: '1099',
      currencyCode: 'GBP',
      onlineIndicator: 'NOT_ONLINE',
      authorizationApprovalCode: '300109',
      acquirerReferenceNumber: '74618130000000000000009',
    },
    // Maestro: the first digit could be 5 or 6, so cardNetworkIdentifier is left out.
    {
      ...base(10, traderJoes, '2025-10-10T18:20:33.250Z', '2025-10-11T06:00:00.000Z', '3310'),
      cardNetworkIdentifier: undefined,
    },
    {
      ...base(11, cvs, '2025-10-11T07:45:00.000Z', '2025-10-12T06:00:00.000Z', '829'),
      paymentMethodEntryType: 'MAGNETIC_STRIPE',
    },
    { ...base(12, spotify, '2025-11-03T08:00:02.000Z', '2025-11-04T06:00:00.000Z', '1199'), ...subscription },
  ].map((tx) => Object.fromEntries(Object.entries(tx).filter(([, v]) => v !== undefined)));

  it('maps every settled object to exactly the expected TransactionNotification; rejects lines 5, 8 (line 9, in London without a state, is sent)', async () => {
    const { txs, stderr, code } = await mapSample('lithic', 'lithic.ndjson');
    expect(code, stderr).toBe(2);
    expect(txs).toEqual(expected);
    expect(stderr.split('\n').filter((l) => l.startsWith('samples/'))).toEqual([
      'samples/lithic.ndjson:5: transactionType: unknown value "DECLINED DEBIT" (known: SETTLED DEBIT, SETTLED CREDIT); transactionPostingTimestamp: required',
      'samples/lithic.ndjson:8: transactionType: unknown value "PENDING DEBIT" (known: SETTLED DEBIT, SETTLED CREDIT); transactionPostingTimestamp: required',
    ]);
  });
});

describe('mappings', () => {
  it('lists every built-in profile with its description, and an unknown --mapping names them', async () => {
    const list = await runCliHere(['mappings', '--json']);
    expect(list.code, list.stderr).toBe(0);
    const profiles = JSON.parse(list.stdout) as Array<{ name: string; description: string; format?: string }>;
    expect(profiles.map((p) => p.name)).toEqual([
      'canonical',
      'harbor-ndjson',
      'lithic',
      'northwind-csv',
      'stripe-issuing',
    ]);
    for (const p of profiles) expect(p.description.length, p.name).toBeGreaterThan(20);
    expect(profiles.find((p) => p.name === 'lithic')?.format).toBe('ndjson');
    const text = await runCliHere(['mappings']);
    expect(text.stdout).toMatch(/^stripe-issuing +ndjson +Stripe Issuing Transaction objects/m);

    for (const cmd of [['send', '--dry-run'], ['map']]) {
      const r = await runCliHere([...cmd, '--mapping', 'stripe', 'samples/stripe-issuing.ndjson']);
      expect(r.code).toBe(1);
      expect(r.stderr.trim()).toBe(
        'svc-ingest: MAPPING_UNREADABLE: no mapping profile named "stripe"; built-in: canonical, harbor-ndjson, lithic, northwind-csv, stripe-issuing (svc-ingest mappings describes them), or give a path to a .json file',
      );
    }
  });
});
