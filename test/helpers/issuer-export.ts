// An issuing platform's NDJSON export as a bank gets it, for the warnings' two rates (issue 50): amounts signed
// from the account's side (a purchase is a debit, negative; a refund positive), local times written in one fixed
// offset all year (-07:00) with no offset in the value, merchants in several US states, and an event history per
// record whose last event is a later `interchangeAdjusted` in some records (so `events[-1]` is not the capture).

/** One record of the export. */
export interface IssuerRecord {
  id: string;
  account: { id: string; customer: string };
  kind: 'purchase' | 'refund';
  amount: string;
  currency: string;
  local_time: string;
  merchant: {
    name: string;
    mcc: string;
    id: string;
    city: string;
    state: string;
    postal: string;
    country: string;
  };
  events: Array<{ type: string; at: string }>;
}

const PLACES: Array<[string, string, string]> = [
  ['AUSTIN', 'TX', '78701'],
  ['DENVER', 'CO', '80202'],
  ['SEATTLE', 'WA', '98101'],
  ['NEW YORK', 'NY', '10001'],
  ['CHICAGO', 'IL', '60601'],
];

const two = (n: number) => String(n).padStart(2, '0');

/**
 * `n` records: every `refundEvery`th a refund, every `adjustEvery`th with a later interchangeAdjusted event.
 * @example issuerExport(200).map((r) => JSON.stringify(r)).join('\n')
 */
export function issuerExport(
  n: number,
  o: { refundEvery?: number; adjustEvery?: number } = {},
): IssuerRecord[] {
  const refundEvery = o.refundEvery ?? 9;
  const adjustEvery = o.adjustEvery ?? 17;
  const out: IssuerRecord[] = [];
  for (let i = 0; i < n; i++) {
    const refund = i % refundEvery === refundEvery - 1;
    const [city, state, postal] = PLACES[i % PLACES.length] as [string, string, string];
    const day = 1 + (i % 27);
    const hour = 8 + (i % 9);
    const local = `2026-05-${two(day)} ${two(hour)}:${two(i % 60)}:00`;
    // The events in UTC (the local time is -07:00): authorised at the local time, captured a day later.
    const authAt = `2026-05-${two(day)}T${two(hour + 7)}:${two(i % 60)}:00Z`;
    const capAt = `2026-05-${two(day + 1)}T${two(hour + 7)}:${two(i % 60)}:00Z`;
    const events = [
      { type: refund ? 'refund_initiated' : 'authorized', at: authAt },
      { type: refund ? 'refunded' : 'captured', at: capAt },
    ];
    if (i % adjustEvery === adjustEvery - 1)
      events.push({ type: 'interchangeAdjusted', at: `2026-06-${two(day)}T03:00:00Z` });
    const cents = 100 + ((i * 137) % 9900);
    const amount = `${refund ? '' : '-'}${Math.floor(cents / 100)}.${two(cents % 100)}`;
    out.push({
      id: `txn_${String(i).padStart(5, '0')}`,
      account: { id: `acct_${i % 40}`, customer: `cust_${i % 40}` },
      kind: refund ? 'refund' : 'purchase',
      amount,
      currency: 'USD',
      local_time: local,
      merchant: {
        name: `SHOP ${i % 50}`,
        mcc: '5411',
        id: `MID${1000 + (i % 50)}`,
        city,
        state,
        postal,
        country: 'US',
      },
      events,
    });
  }
  return out;
}

/** The export as NDJSON text. */
export const ndjson = (records: readonly unknown[]): string =>
  `${records.map((r) => JSON.stringify(r)).join('\n')}\n`;

/**
 * The right profile for the export: the type from `kind`, the amount's absolute value, the local time in the
 * export's fixed offset, the posting time from the capture (a refund's from its `refunded` event) by kind.
 */
export function issuerProfile(): Record<string, unknown> {
  return {
    name: 'issuer',
    format: 'ndjson',
    fields: {
      transactionId: 'id',
      transactionType: { from: 'kind', enum: { purchase: 'AUTHORIZED', refund: 'REFUND' } },
      sourceCustomerId: 'account.customer',
      sourceAccountId: 'account.id',
      paymentType: { const: 'DEBIT' },
      paymentMethodEntryType: { const: 'CHIP' },
      transactionTimestamp: {
        from: 'local_time',
        timestamp: { format: 'YYYY-MM-DD HH:mm:ss', zone: '-07:00' },
      },
      transactionPostingTimestamp: {
        first: [
          { from: 'events[type=captured].at', timestamp: true },
          { from: 'events[type=refunded].at', timestamp: true },
        ],
      },
      paymentNetworkMCC: 'merchant.mcc',
      paymentNetworkMerchantIdType: { const: 'MID' },
      paymentNetworkMerchant: 'merchant.name',
      paymentNetworkMerchantCity: 'merchant.city',
      paymentNetworkMerchantState: 'merchant.state',
      paymentNetworkMerchantPostalCode: 'merchant.postal',
      paymentNetworkMerchantCountryCode: 'merchant.country',
      paymentNetworkMerchantId: 'merchant.id',
      postedAmount: { from: 'amount', amount: { abs: true } },
      currencyCode: 'currency',
    },
  };
}
