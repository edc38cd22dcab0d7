// The domain's one record: a TransactionNotification, its fields in interface order, and the required lists.

/**
 * One transaction as sent to POST /v2/data/transactions.
 * Amounts are strings of integer minor units (cents): $5.00 is "500".
 * @example { transactionId: 't-1', transactionType: 'AUTHORIZED', postedAmount: '500', ... }
 */
export interface TransactionNotification {
  transactionId: string;
  transactionType: string;
  sourceCustomerId: string;
  sourceAccountId: string;
  paymentType: string;
  paymentMethodEntryType: string;
  transactionTimestamp: string;
  transactionPostingTimestamp: string;
  paymentNetworkMCC: string;
  paymentNetworkMerchantIdType: string;
  paymentNetworkMerchant: string;
  paymentNetworkMerchantAddress1?: string;
  paymentNetworkMerchantAddress2?: string;
  paymentNetworkMerchantCity: string;
  paymentNetworkMerchantState: string;
  paymentNetworkMerchantPostalCode: string;
  paymentNetworkMerchantCountryCode: string;
  paymentNetworkMerchantId: string;
  mobileIndicator?: boolean;
  walletDescription?: string;
  cardNetworkIdentifier?: number;
  iin?: string;
  last4?: string;
  cardPresentIndicator?: string;
  recurringTransactionIndicator?: boolean;
  authorizationAmount?: string;
  cashBackAtPointOfSaleAmount?: string;
  postedAmount?: string;
  currencyCode?: string;
  onlineIndicator?: string;
  multipleClearingSequenceNumber?: string;
  multipleClearingSequenceCount?: string;
  authorizationApprovalCode?: string;
  acquirerReferenceNumber?: string;
}

/** Field names of TransactionNotification in interface order, with the JSON type each is sent as. */
export const TRANSACTION_FIELDS = {
  transactionId: 'string',
  transactionType: 'string',
  sourceCustomerId: 'string',
  sourceAccountId: 'string',
  paymentType: 'string',
  paymentMethodEntryType: 'string',
  transactionTimestamp: 'string',
  transactionPostingTimestamp: 'string',
  paymentNetworkMCC: 'string',
  paymentNetworkMerchantIdType: 'string',
  paymentNetworkMerchant: 'string',
  paymentNetworkMerchantAddress1: 'string',
  paymentNetworkMerchantAddress2: 'string',
  paymentNetworkMerchantCity: 'string',
  paymentNetworkMerchantState: 'string',
  paymentNetworkMerchantPostalCode: 'string',
  paymentNetworkMerchantCountryCode: 'string',
  paymentNetworkMerchantId: 'string',
  mobileIndicator: 'boolean',
  walletDescription: 'string',
  cardNetworkIdentifier: 'integer',
  iin: 'string',
  last4: 'string',
  cardPresentIndicator: 'string',
  recurringTransactionIndicator: 'boolean',
  authorizationAmount: 'string',
  cashBackAtPointOfSaleAmount: 'string',
  postedAmount: 'string',
  currencyCode: 'string',
  onlineIndicator: 'string',
  multipleClearingSequenceNumber: 'string',
  multipleClearingSequenceCount: 'string',
  authorizationApprovalCode: 'string',
  acquirerReferenceNumber: 'string',
} as const satisfies Record<keyof TransactionNotification, 'string' | 'boolean' | 'integer'>;

export type TransactionField = keyof TransactionNotification;

/** Fields the service's own documentation calls required (FACTS.md). */
export const REQUIRED_TRANSACTION_FIELDS: readonly TransactionField[] = [
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
];

/**
 * Fields we require: the service's own list (FACTS.md) plus postedAmount and currencyCode, because
 * an offer cannot be matched without the amount and its currency.
 */
export const REQUIRED_FIELDS: readonly TransactionField[] = [
  ...REQUIRED_TRANSACTION_FIELDS,
  'postedAmount',
  'currencyCode',
];
