// Deterministic valid TransactionNotifications and canonical CSV/NDJSON text for tests.
import type { TransactionNotification } from '../../src/model/transaction.ts';

export function makeTx(i: number, prefix = 'tx'): TransactionNotification {
  const ts = new Date(Date.UTC(2026, 10, 20, 12, 0, 0) + i * 1000).toISOString();
  return {
    transactionId: `${prefix}-${String(i).padStart(8, '0')}`,
    transactionType: 'AUTHORIZED',
    sourceCustomerId: `cust-${String(i % 40).padStart(4, '0')}`,
    sourceAccountId: `acct-${String(i % 97).padStart(5, '0')}`,
    paymentType: 'DEBIT',
    paymentMethodEntryType: 'APPLE_PAY',
    transactionTimestamp: ts,
    transactionPostingTimestamp: ts,
    paymentNetworkMCC: '5812',
    paymentNetworkMerchantIdType: 'MID',
    paymentNetworkMerchant: 'BLUE BOTTLE COFFEE',
    paymentNetworkMerchantCity: 'Oakland',
    paymentNetworkMerchantState: 'CA',
    paymentNetworkMerchantPostalCode: '94607',
    paymentNetworkMerchantCountryCode: 'US',
    paymentNetworkMerchantId: `MID${String(i % 500).padStart(6, '0')}`,
    mobileIndicator: true,
    iin: '411111',
    last4: '1111',
    cardNetworkIdentifier: 4,
    postedAmount: String(100 + (i % 9000)),
    authorizationAmount: String(100 + (i % 9000)),
    currencyCode: 'USD',
    onlineIndicator: 'NOT_ONLINE',
  };
}

export const CANONICAL_COLUMNS = Object.keys(makeTx(0)) as Array<keyof TransactionNotification>;

export function csvOf(txs: TransactionNotification[]): string {
  const cols = CANONICAL_COLUMNS;
  const rows = txs.map((t) => cols.map((c) => String(t[c] ?? '')).join(','));
  return `${cols.join(',')}\n${rows.join('\n')}\n`;
}

export function ndjsonOf(txs: TransactionNotification[]): string {
  return `${txs.map((t) => JSON.stringify(t)).join('\n')}\n`;
}

export function range(n: number, from = 0): number[] {
  return Array.from({ length: n }, (_, k) => from + k);
}
