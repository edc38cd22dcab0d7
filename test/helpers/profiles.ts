// Mapping-profile fixtures: every required field as a constant, for tests that give rules to a few fields.

/** A rule for every required field (a constant), so a test profile only names the fields it is about. */
export const CONST_RULES: Readonly<Record<string, unknown>> = {
  transactionId: { const: 't-1' },
  transactionType: { const: 'AUTHORIZED' },
  sourceCustomerId: { const: 'c' },
  sourceAccountId: { const: 'a' },
  paymentType: { const: 'DEBIT' },
  paymentMethodEntryType: { const: 'CHIP' },
  transactionTimestamp: { const: '2025-10-09T18:20:33.000Z' },
  transactionPostingTimestamp: { const: '2025-10-09T18:20:33.000Z' },
  paymentNetworkMCC: { const: '5411' },
  paymentNetworkMerchantIdType: { const: 'MID' },
  paymentNetworkMerchant: { const: 'Shop' },
  paymentNetworkMerchantCity: { const: 'Tempe' },
  paymentNetworkMerchantState: { const: 'AZ' },
  paymentNetworkMerchantPostalCode: { const: '85281' },
  paymentNetworkMerchantCountryCode: { const: 'US' },
  paymentNetworkMerchantId: { const: 'm-1' },
  postedAmount: { const: '100' },
  currencyCode: { const: 'USD' },
};
