// What each TransactionNotification field needs from an export, in a line: what `mapping check` says of a field a
// draft left at `"from": "?"`, and what the draft's TODO says.
import { CODE_LISTS, type CodeField, isCodeField } from '../model/code-lists.ts';
import type { TransactionField } from '../model/transaction.ts';

const NEEDS: Partial<Record<TransactionField, string>> = {
  transactionId:
    'a unique id per transaction: a column, or "hash": {"of": [columns]} of columns that identify it',
  sourceCustomerId: "the bank's customer id (a column, or a constant)",
  sourceAccountId: "the customer's account or card id, never the card number (a column)",
  transactionTimestamp:
    'when it happened: a date-time column (or "template": "{DATE} {TIME}") with "timestamp": {"format": …, "zone": … or "{tz column}"}',
  transactionPostingTimestamp:
    'when it posted: a date-time column with "timestamp" (the transaction time again if the export has no other)',
  paymentNetworkMCC: 'the merchant category code, 4 digits (a column; "zeroPad": 4 for 742)',
  paymentNetworkMerchantIdType: 'the kind of merchant id: "const": "MID"',
  paymentNetworkMerchant: 'the merchant name (a column, "maxLength": 100)',
  paymentNetworkMerchantCity:
    'the city: a column, or "split"/"match" of a "CITY, ST ZIP" column ("maxLength": 50)',
  paymentNetworkMerchantState:
    'the state abbreviation: a column with "state": true, or "match" of a "CITY, ST ZIP" column; "required": "where-states" for merchants abroad',
  paymentNetworkMerchantPostalCode: 'the postal code: a column, or "match" of a "CITY, ST ZIP" column',
  paymentNetworkMerchantCountryCode:
    'the ISO 3166 alpha-2 country: a column ("country": true converts USA or 840), or "const": "US"',
  paymentNetworkMerchantId: 'the merchant (card acceptor) id, ISO 8583 field 42 (a column)',
  postedAmount: 'the amount: a column with "amount": true (dollars) or {"units": "minor"} (cents)',
  currencyCode: 'the ISO 4217 currency: a column ("currency": true converts usd or 840), or "const": "USD"',
};

/**
 * What a field needs from an export, for a person writing the rule.
 * @example fieldNeeds('paymentType') // 'one of DEBIT, CREDIT, PREPAID: "const", or "enum" of a column'
 */
export function fieldNeeds(field: string): string {
  if (isCodeField(field))
    return `one of ${Object.keys(CODE_LISTS[field as CodeField]).join(', ')}: "const", or "enum" mapping a column's values to them`;
  return NEEDS[field as TransactionField] ?? 'a column, a template, or a constant';
}
