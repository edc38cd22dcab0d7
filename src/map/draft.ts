// Proposes a mapping profile from a CSV header (and first row) or a first NDJSON object, by known column names.
import { REQUIRED_FIELDS, TRANSACTION_FIELDS, type TransactionField } from '../model/transaction.ts';

/** Names seen in processors' exports, lower case without punctuation (`merchant_data.city` → `merchantdatacity`). */
const KNOWN: Partial<Record<TransactionField, string[]>> = {
  transactionId: ['txnid', 'txnref', 'transactionref', 'transactionreference', 'id', 'token'],
  transactionType: ['txntype', 'type', 'kind'],
  sourceCustomerId: [
    'customerid',
    'custno',
    'customerno',
    'customernumber',
    'customer',
    'cardholder',
    'accounttoken',
  ],
  sourceAccountId: [
    'accountid',
    'acctno',
    'accountno',
    'accountnumber',
    'account',
    'customeraccount',
    'card',
    'cardtoken',
  ],
  paymentType: ['drcr', 'funding', 'fundingtype', 'cardtype'],
  paymentMethodEntryType: ['entrymode', 'posentrymode', 'posentrymodepan', 'entrytype'],
  transactionTimestamp: [
    'transactiontime',
    'txntimestamp',
    'txndatetime',
    'eventtime',
    'authtime',
    'created',
    'createdat',
  ],
  transactionPostingTimestamp: [
    'postingtimestamp',
    'postedtime',
    'postingtime',
    'posteddate',
    'postingdate',
    'settledat',
  ],
  paymentNetworkMCC: [
    'mcc',
    'merchantmcc',
    'merchantcategorycode',
    'cardacceptormcc',
    'merchantdatacategorycode',
    'merchantmcc',
  ],
  paymentNetworkMerchantIdType: ['merchantidtype', 'idtype', 'cardacceptoridtype'],
  paymentNetworkMerchant: [
    'merchantname',
    'merchantdataname',
    'merchantdescriptor',
    'merchant',
    'descriptor',
  ],
  paymentNetworkMerchantAddress1: [
    'merchantaddress',
    'merchantaddr',
    'merchantaddress1',
    'merchantstreetaddress',
  ],
  paymentNetworkMerchantCity: ['merchantcity', 'merchantdatacity', 'city'],
  paymentNetworkMerchantState: ['merchantstate', 'merchantdatastate', 'state'],
  paymentNetworkMerchantPostalCode: [
    'merchantzip',
    'merchantpostalcode',
    'merchantdatapostalcode',
    'zip',
    'postalcode',
  ],
  paymentNetworkMerchantCountryCode: [
    'merchantcountry',
    'merchantdatacountry',
    'merchantcountrycode',
    'country',
  ],
  paymentNetworkMerchantId: [
    'mid',
    'merchantid',
    'cardacceptormid',
    'merchantacceptorid',
    'merchantdatanetworkid',
  ],
  mobileIndicator: ['mobileflag', 'mobile'],
  iin: ['bin', 'cardbin'],
  last4: ['cardlast4', 'lastfour', 'lastfour4'],
  recurringTransactionIndicator: ['recurringflag', 'recurring'],
  authorizationAmount: ['authamount', 'authamountcents', 'authorizationamountcents'],
  cashBackAtPointOfSaleAmount: ['cashback', 'cashbackamount', 'amountdetailscashbackamount'],
  postedAmount: ['amountcents', 'amount', 'settledamount', 'transactionamount'],
  currencyCode: ['currency', 'currencynum', 'txncurrency'],
  onlineIndicator: ['ecomflag', 'channel'],
  authorizationApprovalCode: [
    'authcode',
    'authorizationcode',
    'approvalcode',
    'networkdataauthorizationcode',
  ],
  acquirerReferenceNumber: ['arn', 'acqrefnum'],
};
const PAN_NAMES = ['cardnumber', 'pan', 'cardno', 'primaryaccountnumber'];
/** Separate date and time columns, combined with a template. */
const DATE_TIME: Partial<Record<TransactionField, Array<[string, string]>>> = {
  transactionTimestamp: [
    ['txndate', 'txntime'],
    ['transactiondate', 'transactiontime'],
    ['date', 'time'],
  ],
  transactionPostingTimestamp: [
    ['postdate', 'posttime'],
    ['postingdate', 'postingtime'],
    ['posteddate', 'postedtime'],
  ],
};
const AMOUNTS = new Set<string>(['postedAmount', 'authorizationAmount', 'cashBackAtPointOfSaleAmount']);
const TIMES = new Set<string>(['transactionTimestamp', 'transactionPostingTimestamp']);

const norm = (s: string): string => s.toLowerCase().replace(/[^a-z0-9]/g, '');

/** Scalar leaves of an object as dotted paths (arrays are left alone), at most 4 levels deep. */
function leaves(o: Record<string, unknown>, prefix = '', depth = 0, out = new Map<string, unknown>()) {
  for (const [k, v] of Object.entries(o)) {
    const p = prefix + k;
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      if (depth < 3) leaves(v as Record<string, unknown>, `${p}.`, depth + 1, out);
    } else if (!Array.isArray(v)) out.set(p, v);
  }
  return out;
}

type Rule = string | Record<string, unknown>;

/** A rule for `field` reading `from`, with the conversion its sample value suggests. */
function ruleFor(field: TransactionField, from: string, sample: unknown): Rule {
  const s = sample === undefined || sample === null ? '' : String(sample).trim();
  const todo = (why: string) => ({ description: `TODO: ${why}` });
  if (AMOUNTS.has(field)) {
    const abs = s.startsWith('-') ? { abs: true } : {};
    if (/^-?\d+$/.test(s) || /cents|minor/i.test(from))
      return { from, amount: { units: 'minor', ...abs }, ...todo('check the units (minor units assumed)') };
    return { from, amount: Object.keys(abs).length > 0 ? abs : true };
  }
  if (TIMES.has(field)) {
    if (/^\d{9,11}$/.test(s)) return { from, timestamp: { format: 'unix-s' } };
    if (/^\d{12,14}$/.test(s)) return { from, timestamp: { format: 'unix-ms' } };
    if (/^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i.test(s))
      return { from, timestamp: true };
    return { from, timestamp: true, ...todo(`check the time format and zone (sample ${JSON.stringify(s)})`) };
  }
  if (field === 'currencyCode' && !/^[A-Z]{3}$/.test(s)) return { from, currency: true };
  if (field === 'paymentNetworkMerchantCountryCode' && !/^[A-Z]{2}$/.test(s)) return { from, country: true };
  if (field === 'paymentNetworkMerchantState' && !/^[A-Z]{2,3}$/.test(s)) return { from, state: true };
  if (field === 'paymentNetworkMCC' && /^\d{1,3}$/.test(s)) return { from, zeroPad: 4 };
  const type = TRANSACTION_FIELDS[field];
  if (type === 'boolean') return { from, boolean: true };
  if (type === 'integer') return { from, integer: true };
  if (['transactionType', 'paymentType', 'paymentMethodEntryType', 'onlineIndicator'].includes(field))
    return {
      from,
      case: 'upper',
      ...todo('map the source values with "enum" if they are not the service\'s codes'),
    };
  return from;
}

/**
 * A draft profile document for a source: CSV header + first row, or the first NDJSON object. Known column
 * names are matched (exact name, then the names in KNOWN); a required field nothing matched gets
 * `"from": "?"` and a TODO description, so `svc-ingest mapping check` points at it.
 * @example draftProfile({ name: 'mine', format: 'csv', record: { TXN_ID: '1', AMOUNT: '12.50' } })
 */
export function draftProfile(src: {
  name: string;
  format: 'csv' | 'ndjson';
  record: Record<string, unknown>;
}): Record<string, unknown> {
  const paths = src.format === 'csv' ? new Map(Object.entries(src.record)) : leaves(src.record);
  const byNorm = new Map<string, string>();
  for (const p of paths.keys()) if (!byNorm.has(norm(p))) byNorm.set(norm(p), p);
  const fields: Record<string, Rule> = {};
  for (const field of Object.keys(TRANSACTION_FIELDS) as TransactionField[]) {
    const names = [norm(field), ...(KNOWN[field] ?? [])];
    const from = names.map((n) => byNorm.get(n)).find((p) => p !== undefined);
    const pair = (DATE_TIME[field] ?? [])
      .map(([d, t]) => [byNorm.get(d), byNorm.get(t)])
      .find((p): p is [string, string] => p[0] !== undefined && p[1] !== undefined);
    if (from !== undefined) fields[field] = ruleFor(field, from, paths.get(from));
    else if (pair !== undefined) {
      const sample = `${paths.get(pair[0]) ?? ''} ${paths.get(pair[1]) ?? ''}`;
      fields[field] = {
        template: `{${pair[0]}} {${pair[1]}}`,
        timestamp: true,
        description: `TODO: give the pattern ("format") and the zone of ${JSON.stringify(sample)}`,
      };
    } else if (field === 'paymentNetworkMerchantIdType') fields[field] = { const: 'MID' };
    else if (REQUIRED_FIELDS.includes(field))
      fields[field] = {
        from: '?',
        description: 'TODO: no column matched; name the column, or use const / default',
      };
  }
  const pan = PAN_NAMES.map((n) => byNorm.get(n)).find((p) => p !== undefined);
  return {
    name: src.name,
    description: `Draft made by svc-ingest mapping draft: check every rule (TODO marks the guesses), then svc-ingest mapping check.`,
    format: src.format,
    ...(pan !== undefined ? { pan: { from: pan, iinLength: 6 } } : {}),
    fields,
  };
}
