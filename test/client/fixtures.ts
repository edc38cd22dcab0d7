// Test fixtures shared by the client and command tests: valid transactions and a config pointed at a simulator.

import { type Config, type ConfigFlags, loadConfig } from '../../src/config/index.ts';
import type { TransactionNotification } from '../../src/model/transaction.ts';

/** A transaction the simulator accepts. */
export function makeTransaction(i: number, customer = 'cust-0001'): TransactionNotification {
  return {
    transactionId: `tx-${i}`,
    transactionType: 'AUTHORIZED',
    sourceCustomerId: customer,
    sourceAccountId: 'acct-1',
    paymentType: 'DEBIT',
    paymentMethodEntryType: 'APPLE_PAY',
    transactionTimestamp: '2026-01-05T10:00:00.000Z',
    transactionPostingTimestamp: '2026-01-05T10:00:01.000Z',
    paymentNetworkMCC: '5411',
    paymentNetworkMerchantIdType: 'MID',
    paymentNetworkMerchant: 'Corner Shop',
    paymentNetworkMerchantCity: 'Phoenix',
    paymentNetworkMerchantState: 'AZ',
    paymentNetworkMerchantPostalCode: '85001',
    paymentNetworkMerchantCountryCode: 'US',
    paymentNetworkMerchantId: 'MID-0042',
    postedAmount: '500',
    currencyCode: 'USD',
  };
}

export function makeTransactions(n: number, from = 0): TransactionNotification[] {
  return Array.from({ length: n }, (_, k) => makeTransaction(from + k));
}

/** A config for a base URL, with an empty env (the developer's SVC_* must not leak into tests). */
export function configFor(baseUrl: string, flags: ConfigFlags = {}, env: NodeJS.ProcessEnv = {}): Config {
  return loadConfig({ env, flags: { baseUrl: { value: baseUrl, flag: '--base-url' }, ...flags } });
}

/** The error a promise rejects with (fails the test when it resolves). */
export async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection');
}
