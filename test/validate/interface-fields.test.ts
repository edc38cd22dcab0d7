// The transaction's fields against the interface document's TransactionNotification table, written out here (not
// taken from src/model), and the required list the tool enforces (the interface leaves it open; docs/mapping.md),
// also literal: a field renamed or dropped in the model fails here, and a missing required field is refused by name.
import { describe, expect, it } from 'vitest';
import { REQUIRED_FIELDS, TRANSACTION_FIELDS } from '../../src/model/transaction.ts';
import { validateTransaction } from '../../src/validate/validate.ts';
import { makeTransaction } from '../client/fixtures.ts';

/** The interface's table, in its order, with its types (integer as number). */
const INTERFACE: Array<[string, string]> = [
  ['transactionId', 'string'],
  ['transactionType', 'string'],
  ['sourceCustomerId', 'string'],
  ['sourceAccountId', 'string'],
  ['paymentType', 'string'],
  ['paymentMethodEntryType', 'string'],
  ['transactionTimestamp', 'string'],
  ['transactionPostingTimestamp', 'string'],
  ['paymentNetworkMCC', 'string'],
  ['paymentNetworkMerchantIdType', 'string'],
  ['paymentNetworkMerchant', 'string'],
  ['paymentNetworkMerchantAddress1', 'string'],
  ['paymentNetworkMerchantAddress2', 'string'],
  ['paymentNetworkMerchantCity', 'string'],
  ['paymentNetworkMerchantState', 'string'],
  ['paymentNetworkMerchantPostalCode', 'string'],
  ['paymentNetworkMerchantCountryCode', 'string'],
  ['paymentNetworkMerchantId', 'string'],
  ['mobileIndicator', 'boolean'],
  ['walletDescription', 'string'],
  ['cardNetworkIdentifier', 'number'],
  ['iin', 'string'],
  ['last4', 'string'],
  ['cardPresentIndicator', 'string'],
  ['recurringTransactionIndicator', 'boolean'],
  ['authorizationAmount', 'string'],
  ['cashBackAtPointOfSaleAmount', 'string'],
  ['postedAmount', 'string'],
  ['currencyCode', 'string'],
  ['onlineIndicator', 'string'],
  ['multipleClearingSequenceNumber', 'string'],
  ['multipleClearingSequenceCount', 'string'],
  ['authorizationApprovalCode', 'string'],
  ['acquirerReferenceNumber', 'string'],
];

const REQUIRED = [
  'transactionId',
  'transactionType',
  'sourceCustomerId',
  'sourceAccountId',
  'paymentType',
  'paymentMethodEntryType',
  'transactionTimestamp',
  'transactionPostingTimestamp',
  'paymentNetworkMCC',
  'paymentNetworkMerchantIdType',
  'paymentNetworkMerchant',
  'paymentNetworkMerchantCity',
  'paymentNetworkMerchantState',
  'paymentNetworkMerchantPostalCode',
  'paymentNetworkMerchantCountryCode',
  'paymentNetworkMerchantId',
  'postedAmount',
  'currencyCode',
];

describe('TransactionNotification: the interface’s fields', () => {
  it('the model has the interface’s 34 fields, in its order, with its types', () => {
    expect(Object.entries(TRANSACTION_FIELDS).map(([f, t]) => [f, t === 'integer' ? 'number' : t])).toEqual(
      INTERFACE,
    );
  });

  it('the required list, and each required field missing is refused by its name', () => {
    expect([...REQUIRED_FIELDS]).toEqual(REQUIRED);
    for (const field of REQUIRED) {
      const tx = { ...makeTransaction(1) } as Record<string, unknown>;
      delete tx[field];
      expect(
        validateTransaction(tx, REQUIRED_FIELDS).map((e) => e.field),
        field,
      ).toContain(field);
    }
  });
});
