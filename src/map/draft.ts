// Proposes a mapping profile from a CSV header (and first row) or a first NDJSON object, by known column names.
import { maskCardNumbers } from '../mask/index.ts';
import { CODE_LISTS, isCodeField } from '../model/code-lists.ts';
import { REQUIRED_FIELDS, TRANSACTION_FIELDS, type TransactionField } from '../model/transaction.ts';
import { candidatesForUnknown, lastEventTimes, orderTimes, settleZones } from './draft-check.ts';
import {
  CITY_STATE,
  CITY_STATE_ZIP,
  CODE_WORDS,
  locationShape,
  timeLayout,
  ZONE_COLUMNS,
} from './draft-guess.ts';
import {
  eventTimePaths,
  POSTING_KINDS,
  pairCurrency,
  presence,
  recordPaths,
  TXN_KINDS,
} from './draft-records.ts';
import { firstByKind, widenTimes } from './draft-union.ts';
import { fieldNeeds } from './field-needs.ts';
import { compileGetter } from './path.ts';

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
  paymentNetworkMerchantState: [
    'merchantstate',
    'merchantdatastate',
    'state',
    'merchantregion',
    'merchantprovince',
    'region',
    'province',
  ],
  paymentNetworkMerchantPostalCode: [
    'merchantzip',
    'merchantpostalcode',
    'merchantdatapostalcode',
    'zip',
    'postalcode',
    'merchantpostal',
    'postal',
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
    'merchantmid',
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
/** The zone a draft writes for local times nothing else names, marked GUESSED in its TODO. */
const GUESSED_ZONE = 'America/New_York';
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

/** A rule for `field` reading `from`, with the conversion its sample value suggests (`zone`: a zone column). */
function ruleFor(field: TransactionField, from: string, sample: unknown, zone?: string): Rule {
  const s = sample === undefined || sample === null ? '' : String(sample).trim();
  const todo = (why: string) => ({ description: `TODO: ${why}` });
  if (AMOUNTS.has(field)) {
    const abs = s.startsWith('-') ? { abs: true } : {};
    if (/^-?\d+$/.test(s) || /cents|minor/i.test(from))
      return { from, amount: { units: 'minor', ...abs }, ...todo('check the units (minor units assumed)') };
    return { from, amount: Object.keys(abs).length > 0 ? abs : true };
  }
  if (TIMES.has(field)) return timeRule(from, s, zone);
  if (field === 'currencyCode' && !/^[A-Z]{3}$/.test(s)) return { from, currency: true };
  // Always converted: one record's alpha-2 says nothing of the next (an export mixing `US`, `DEU` and `276` exists),
  // and the conversion takes alpha-2 as it is.
  if (field === 'paymentNetworkMerchantCountryCode') return { from, country: true };
  if (field === 'paymentNetworkMerchantState' && !/^[A-Z]{2,3}$/.test(s)) return { from, state: true };
  if (field === 'paymentNetworkMCC' && /^\d{1,3}$/.test(s)) return { from, zeroPad: 4 };
  const type = TRANSACTION_FIELDS[field];
  if (type === 'boolean') return { from, boolean: true };
  if (type === 'integer') return { from, integer: true };
  if (isCodeField(field)) return codeRule(field, from, s);
  return from;
}

/** A sample quoted in a TODO, any card number in it masked before it is quoted (JSON writes a tab as `\t`). */
function shown(s: string): string {
  return JSON.stringify(maskCardNumbers(s));
}

/** A timestamp rule from a sample's layout; a local time takes its zone from the zone column, if there is one. */
function timeRule(from: string, s: string, zone: string | undefined): Rule {
  const layout = timeLayout(s);
  if (layout === undefined)
    return {
      from,
      timestamp: true,
      description: `TODO: give the time's "format" and zone (sample ${shown(s)})`,
    };
  const format = layout.format === 'auto' ? {} : { format: layout.format };
  if (layout.zoned) return { from, timestamp: Object.keys(format).length > 0 ? format : true };
  if (zone !== undefined) return { from, timestamp: { ...format, zone: `{${zone}}` } };
  return {
    from,
    timestamp: { ...format, zone: GUESSED_ZONE },
    description: `TODO: GUESSED zone ${GUESSED_ZONE}: the export gives none for its local times (sample ${shown(s)}): give their zone, "{column}" of a zone column, or {"country": …, "state": …} of the merchant`,
  };
}

/** A code field: the sample already a code, or an enum of the words exports use for the codes, or a TODO. */
function codeRule(field: string, from: string, s: string): Rule {
  const codes = CODE_LISTS[field as keyof typeof CODE_LISTS];
  if (Object.hasOwn(codes, s)) return from;
  const words = CODE_WORDS[field];
  if (words !== undefined && Object.hasOwn(words, s.toLowerCase()))
    return {
      from,
      enum: words,
      description: `TODO: the usual words for ${field}; keep those of this export, add any other value it holds`,
    };
  return {
    from,
    description: `TODO: map every value of this column with "enum" to one of ${Object.keys(codes).join(', ')}`,
  };
}

/** A required field nothing matched: `"from": "?"` and what it needs. */
function unknown(field: TransactionField): Rule {
  return { from: '?', description: `TODO: no column matched; ${fieldNeeds(field)}` };
}

/**
 * A rule for a required field no column name matched, from the values: a date-time column, the other timestamp, a
 * "CITY, ST ZIP" column (taken apart by a match), a country implied by it.
 */
function byValue(
  field: TransactionField,
  paths: Map<string, unknown>,
  fields: Record<string, Rule>,
  zone: string | undefined,
): Rule | undefined {
  const sampleOf = (p: string) => {
    const v = paths.get(p);
    return typeof v === 'string' || typeof v === 'number' ? String(v) : '';
  };
  const taken = new Set(Object.values(fields).map((r) => (typeof r === 'string' ? r : r.from)));
  if (TIMES.has(field)) {
    const other = field === 'transactionTimestamp' ? 'transactionPostingTimestamp' : 'transactionTimestamp';
    const col = [...paths.keys()].find(
      (p) => !taken.has(p) && timeLayout(sampleOf(p)) !== undefined && !/^\d+$/.test(sampleOf(p)),
    );
    if (col !== undefined) return timeRule(col, sampleOf(col), zone);
    const done = fields[other];
    if (done !== undefined && typeof done !== 'string' && done.from !== '?')
      return { ...done, description: `TODO: no ${field} column: the ${other} column stands in` };
    return undefined;
  }
  if (field === 'currencyCode') {
    const dollars = [...paths.keys()].find((p) => /^[+-]?\$/.test(sampleOf(p).trim()));
    return dollars === undefined
      ? undefined
      : {
          const: 'USD',
          description: `TODO: GUESSED USD: no currency column; ${dollars} is written in dollars ($)`,
        };
  }
  const loc = [...paths.keys()].find((p) => locationShape(sampleOf(p)) !== undefined);
  if (loc === undefined) return undefined;
  const shape = locationShape(sampleOf(loc));
  const pattern = shape === 'city-state-zip' ? CITY_STATE_ZIP : CITY_STATE;
  const sample = shown(sampleOf(loc));
  const part = (group: string) => ({
    from: loc,
    match: { pattern, group },
    description: `TODO: ${group} of ${sample}, taken apart by the pattern; check it on more rows`,
  });
  if (field === 'paymentNetworkMerchantCity') return { ...part('city'), maxLength: 50 };
  if (field === 'paymentNetworkMerchantState') return { ...part('state'), state: true };
  if (field === 'paymentNetworkMerchantPostalCode' && shape === 'city-state-zip') return part('zip');
  if (field === 'paymentNetworkMerchantCountryCode')
    return { const: 'US', description: `TODO: no country column; ${sample} reads as a US address` };
  return undefined;
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
  /** More records (the first is `record`): NDJSON paths into arrays, first-of rules, ids that repeat. */
  records?: Record<string, unknown>[];
}): Record<string, unknown> {
  const records = src.records ?? [src.record];
  const paths =
    src.format === 'csv'
      ? new Map(Object.entries(src.record))
      : src.records !== undefined
        ? recordPaths(records)
        : leaves(src.record);
  const byNorm = new Map<string, string>();
  for (const p of paths.keys()) if (!byNorm.has(norm(p))) byNorm.set(norm(p), p);
  const fields: Record<string, Rule> = {};
  const zone = ZONE_COLUMNS.map((n) => byNorm.get(n)).find((p) => p !== undefined);
  for (const field of Object.keys(TRANSACTION_FIELDS) as TransactionField[]) {
    const names = [norm(field), ...(KNOWN[field] ?? [])];
    const from = names.map((n) => byNorm.get(n)).find((p) => p !== undefined);
    const pair = (DATE_TIME[field] ?? [])
      .map(([d, t]) => [byNorm.get(d), byNorm.get(t)])
      .find((p): p is [string, string] => p[0] !== undefined && p[1] !== undefined);
    if (from !== undefined) fields[field] = ruleFor(field, from, paths.get(from), zone);
    else if (pair !== undefined) {
      const sample = `${paths.get(pair[0]) ?? ''} ${paths.get(pair[1]) ?? ''}`;
      fields[field] = {
        template: `{${pair[0]}} {${pair[1]}}`,
        timestamp: true,
        description: `TODO: give the pattern ("format") and the zone of ${shown(sample)}`,
      };
    } else if (field === 'paymentNetworkMerchantIdType') fields[field] = { const: 'MID' };
    else if (REQUIRED_FIELDS.includes(field))
      fields[field] = byValue(field, paths, fields, zone) ?? unknown(field);
  }
  if (records.length > 1) fromRecords(fields, records, paths, byNorm, zone);
  settleZones(fields, GUESSED_ZONE);
  if (src.format === 'ndjson') lastEventTimes(fields, records, paths.keys());
  orderTimes(fields, records);
  if (src.format === 'ndjson') {
    const kindRule = (f: string, from: string, s: unknown) => ruleFor(f as TransactionField, from, s, zone);
    firstByKind(fields, records, paths, kindRule);
    widenTimes(fields, records, paths, kindRule);
    candidatesForUnknown(fields, paths.keys());
  }
  pairCurrency(fields, paths, ruleFor);
  const pan = PAN_NAMES.map((n) => byNorm.get(n)).find((p) => p !== undefined);
  return {
    name: src.name,
    description: `Draft made by svc-ingest mapping draft: check every rule (TODO marks the guesses), then svc-ingest mapping check.`,
    format: src.format,
    ...(pan !== undefined ? { pan: { from: pan, iinLength: 6 } } : {}),
    fields,
  };
}

const fromOf = (r: Rule | undefined): string | undefined =>
  r === undefined ? undefined : typeof r === 'string' ? r : typeof r.from === 'string' ? r.from : undefined;

/**
 * What many records tell: a field whose path some records lack gets a first-of rule over the paths that hold the
 * same thing in the others (names of KNOWN, event times by kind); an id whose values repeat says so.
 */
function fromRecords(
  fields: Record<string, Rule>,
  records: Record<string, unknown>[],
  paths: Map<string, unknown>,
  byNorm: Map<string, string>,
  zone: string | undefined,
): void {
  const getters = new Map<string, (r: Record<string, unknown>) => unknown>();
  const get = (p: string) => {
    let g = getters.get(p);
    if (g === undefined) {
      try {
        g = compileGetter(p);
      } catch {
        g = (r) => r[p];
      }
      getters.set(p, g);
    }
    return g;
  };
  const n = records.length;
  for (const field of Object.keys(TRANSACTION_FIELDS) as TransactionField[]) {
    const chosen = fromOf(fields[field]);
    const named = [norm(field), ...(KNOWN[field] ?? [])]
      .map((k) => byNorm.get(k))
      .filter((p): p is string => p !== undefined);
    const events = TIMES.has(field)
      ? eventTimePaths(paths.keys(), field === 'transactionPostingTimestamp' ? POSTING_KINDS : TXN_KINDS)
      : [];
    // A time column found by its values alone comes after those the names and the events' kinds say.
    const picked = chosen && chosen !== '?' ? [chosen] : [];
    const candidates = [
      ...new Set(TIMES.has(field) ? [...named, ...events, ...picked] : [...picked, ...named, ...events]),
    ];
    if (candidates.length === 0) continue;
    const seen = presence(records, candidates, get);
    if (field === 'transactionId' && chosen !== undefined && chosen !== '?') {
      const s = seen.get(chosen);
      if (s !== undefined && s.repeats > 0) {
        const unique = candidates.find((c) => seen.get(c)?.present === n && seen.get(c)?.repeats === 0);
        fields[field] =
          unique !== undefined
            ? {
                from: unique,
                description: `TODO: ${chosen} repeats in ${s.repeats} of ${n} records; ${unique} does not`,
              }
            : {
                from: chosen,
                description: `TODO: NOT UNIQUE: ${chosen} repeats in ${s.repeats} of ${n} records: derive an id ("hash") or expand an array ("expand")`,
              };
      }
      continue;
    }
    // Sources in order, each covering records the ones before it miss.
    const order = candidates.filter((c) => (seen.get(c)?.present ?? 0) > 0);
    const uncovered = new Set(records.keys());
    const used: string[] = [];
    for (const c of order) {
      const s = seen.get(c) as { absentIn: Set<number> };
      const adds = [...uncovered].some((i) => !s.absentIn.has(i));
      if (!adds) continue;
      used.push(c);
      for (const i of [...uncovered]) if (!s.absentIn.has(i)) uncovered.delete(i);
    }
    if (used.length < 2) {
      if ((chosen === undefined || chosen === '?') && used.length === 1 && REQUIRED_FIELDS.includes(field))
        fields[field] = ruleFor(field, used[0] as string, paths.get(used[0] as string), zone);
      continue;
    }
    fields[field] = {
      first: used.map((c) => ruleFor(field, c, paths.get(c), zone)),
      description: `TODO: first of ${used.join(', ')}: each holds ${field} in records the ones before it lack (${n - uncovered.size} of ${n} covered); check the order`,
    };
  }
}
