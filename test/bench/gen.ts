// Deterministic bench inputs: canonical CSV / NDJSON and Northwind-profile CSV rows, and acked ledgers.
// Row i is a pure function of i (no running state), so any range can be generated on its own.
// As a script: `node test/bench/gen.ts <kind> <rows> [start]` streams the rows to stdout.

import { createWriteStream, readFileSync } from 'node:fs';
import { mkdir, rename } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Writable } from 'node:stream';
import { TRANSACTION_FIELDS } from '../../src/client/models.ts';

/**
 * What to generate.
 * @example 'canonical-csv'
 */
export type DataKind = 'canonical-csv' | 'canonical-ndjson' | 'northwind-csv' | 'multi-event-ndjson';
export const DATA_KINDS: readonly DataKind[] = [
  'canonical-csv',
  'canonical-ndjson',
  'northwind-csv',
  'multi-event-ndjson',
];

/** All 34 fields, in the interface's order. */
const CANONICAL_FIELDS = Object.keys(TRANSACTION_FIELDS) as Array<keyof typeof TRANSACTION_FIELDS>;

const NORTHWIND_COLUMNS = [
  'TXN_REF',
  'AUTH_CODE',
  'CUST_NO',
  'ACCT_NO',
  'CARD_NUMBER',
  'TXN_DATE',
  'TXN_TIME',
  'POST_DATE',
  'POST_TIME',
  'AMOUNT_CENTS',
  'AUTH_AMOUNT_CENTS',
  'CURRENCY_NUM',
  'MCC',
  'MERCHANT_NAME',
  'MERCHANT_ADDR',
  'MERCHANT_CITY',
  'MERCHANT_STATE',
  'MERCHANT_ZIP',
  'MERCHANT_COUNTRY',
  'MID',
  'ENTRY_MODE',
  'DR_CR',
  'MOBILE_FLAG',
  'RECURRING_FLAG',
  'ECOM_FLAG',
] as const;

// [name, address, city, state abbreviation, state as some exports spell it, zip, mcc]
const MERCHANTS: ReadonlyArray<readonly [string, string, string, string, string, string, string]> = [
  ['Blue Bottle Coffee', '315 Linden St', 'San Francisco', 'CA', 'California', '94102', '5814'],
  ['Whole Foods Market', '10 Columbus Cir', 'New York', 'NY', 'NY', '10019', '5411'],
  ['Target T-1234', '789 Tremont St', 'Boston', 'MA', 'MA', '02134', '5310'],
  ['REI Co-op', '1700 45th St', 'Seattle', 'WA', 'WA', '98103', '5941'],
  ['Delta Air Lines', '1030 Delta Blvd', 'Atlanta', 'GA', 'Georgia', '30354', '3058'],
  ['Shell Oil 57442', '2200 S Lamar Blvd', 'Austin', 'TX', 'Texas', '78704', '5541'],
  ["Joe's Pizza, Inc.", '7 Carmine St', 'New York', 'NY', 'NY', '10014', '5812'],
  ['Walgreens #4411', '151 N State St', 'Chicago', 'IL', 'Illinois', '60601', '5912'],
  ['Home Depot 0612', '4100 Roswell Rd', 'Marietta', 'GA', 'GA', '30062', '5200'],
  ['Netflix.com', '121 Albright Way', 'Los Gatos', 'CA', 'CA', '95032', '4899'],
  ["Trader Joe's #552", '2001 Market St', 'Philadelphia', 'PA', 'Pennsylvania', '19103', '5411'],
  ['Chevron 0098312', '1400 Broadway', 'Denver', 'CO', 'CO', '80202', '5542'],
  ['Starbucks Store 22104', '1912 Pike Pl', 'Seattle', 'WA', 'Washington', '98101', '5814'],
  ['Best Buy 00187', '1717 Harrison St', 'Portland', 'OR', 'OR', '97201', '5732'],
  ['Marriott Downtown, Suite "A"', '250 Peachtree St', 'Atlanta', 'GA', 'GA', '30303', '7011'],
  ['CVS/pharmacy #7721', '88 Kearny St', 'San Francisco', 'CA', 'CA', '94108', '5912'],
];
const ENTRY = ['CHIP', 'CONTACTLESS', 'APPLE_PAY', 'GOOGLE_PAY', 'ECOMMERCE', 'MAGNETIC_STRIPE'] as const;
const NW_ENTRY = ['CHIP', 'CTLS', 'APPLEPAY', 'GPAY', 'ECOM', 'SWIPE'] as const;
const WALLET: Record<string, string> = { APPLE_PAY: '40010030273', GOOGLE_PAY: '40010075001' };
// Test IINs of the card brands (first digit = cardNetworkIdentifier).
const IINS = ['411111', '424242', '555555', '510510', '378282', '601111'] as const;
const BASE_MS = Date.UTC(2025, 9, 1, 5, 0, 0);

/** A 32-bit mix of (i, salt): cheap, stateless and well spread. */
function mix(i: number, salt: number): number {
  let h = Math.imul(i ^ salt, 0x9e3779b1) ^ (i >>> 16);
  h = Math.imul(h ^ (h >>> 15), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * A 15-digit merchant id whose last digit makes it fail the Luhn check: one that passed would read as a card
 * number and be rejected (1 in 10 of them), and the bench measures valid rows.
 */
function notCardNumber(body: string): string {
  let sum = 0;
  for (let k = 0; k < body.length; k++) {
    let d = Number(body[body.length - 1 - k]);
    if (k % 2 === 0) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return body + String((10 - (sum % 10) + 1) % 10);
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

/** The transactionId of row i, shared by the inputs and the generated ledger. */
export function transactionId(i: number): string {
  return `tx-${pad(i, 10)}`;
}

function csvValue(v: string): string {
  return /[",\r\n]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v;
}

/** A Luhn-valid 16-digit test card number from an IIN. */
function cardNumber(iin: string, i: number): string {
  let body = iin + pad(mix(i, 77) % 1_000_000_000, 9);
  let sum = 0;
  for (let k = 0; k < 15; k++) {
    let d = body.charCodeAt(14 - k) - 48;
    if (k % 2 === 0) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  body += String((10 - (sum % 10)) % 10);
  return body;
}

/** The canonical record of row i, as strings the way a CSV export carries them ('' = absent). */
function canonicalValues(i: number): Record<(typeof CANONICAL_FIELDS)[number], string> {
  const h = mix(i, 1);
  const m = MERCHANTS[h % MERCHANTS.length] as (typeof MERCHANTS)[number];
  const entry = ENTRY[(h >>> 4) % ENTRY.length] as string;
  const iin = IINS[(h >>> 8) % IINS.length] as string;
  const t = BASE_MS + i * 1000 + ((h >>> 12) % 997);
  const cents = 100 + (mix(i, 2) % 49_900);
  const cashBack = h % 20 === 0 ? String(500 * (1 + (h % 4))) : '0';
  const online = entry === 'ECOMMERCE';
  return {
    transactionId: transactionId(i),
    transactionType: 'AUTHORIZED',
    sourceCustomerId: `cust-${pad(mix(i, 3) % 2_000_000, 7)}`,
    sourceAccountId: `acct-${pad(mix(i, 4) % 3_000_000, 7)}`,
    paymentType: h & 1 ? 'CREDIT' : 'DEBIT',
    paymentMethodEntryType: entry,
    transactionTimestamp: new Date(t).toISOString(),
    transactionPostingTimestamp: new Date(t + 86_400_000 + (h % 3600) * 1000).toISOString(),
    paymentNetworkMCC: m[6],
    paymentNetworkMerchantIdType: 'MID',
    paymentNetworkMerchant: m[0],
    paymentNetworkMerchantAddress1: m[1],
    paymentNetworkMerchantAddress2: h % 7 === 0 ? `Suite ${100 + (h % 900)}` : '',
    paymentNetworkMerchantCity: m[2],
    paymentNetworkMerchantState: m[3],
    paymentNetworkMerchantPostalCode: m[5],
    paymentNetworkMerchantCountryCode: 'US',
    paymentNetworkMerchantId: notCardNumber(`4455660${pad(mix(i, 5) % 10_000_000, 7)}`),
    mobileIndicator: WALLET[entry] ? 'Y' : 'N',
    walletDescription: WALLET[entry] ?? '',
    cardNetworkIdentifier: iin.slice(0, 1),
    iin,
    last4: pad(mix(i, 6) % 10_000, 4),
    cardPresentIndicator: online ? '0' : '1',
    recurringTransactionIndicator: h % 11 === 0 ? 'Y' : 'N',
    authorizationAmount: String(cents),
    cashBackAtPointOfSaleAmount: cashBack,
    postedAmount: String(cents),
    currencyCode: 'USD',
    onlineIndicator: online ? 'ONLINE' : 'NOT_ONLINE',
    multipleClearingSequenceNumber: '1',
    multipleClearingSequenceCount: '1',
    authorizationApprovalCode: pad(mix(i, 8) % 1_000_000, 6),
    acquirerReferenceNumber: `7461${pad(mix(i, 9) % 1_000_000, 6)}${pad(i % 10_000_000_000, 10)}`,
  };
}

const BOOLEAN_FIELDS = new Set(['mobileIndicator', 'recurringTransactionIndicator']);

function canonicalCsvRow(i: number): string {
  const v = canonicalValues(i);
  let line = '';
  for (let k = 0; k < CANONICAL_FIELDS.length; k++) {
    if (k > 0) line += ',';
    line += csvValue(v[CANONICAL_FIELDS[k] as (typeof CANONICAL_FIELDS)[number]]);
  }
  return `${line}\n`;
}

function canonicalNdjsonRow(i: number): string {
  const v = canonicalValues(i);
  const o: Record<string, unknown> = {};
  for (const f of CANONICAL_FIELDS) {
    const s = v[f];
    if (s === '') continue;
    if (BOOLEAN_FIELDS.has(f)) o[f] = s === 'Y';
    else if (f === 'cardNetworkIdentifier') o[f] = Number(s);
    else o[f] = s;
  }
  return `${JSON.stringify(o)}\n`;
}

function usDate(ms: number): [string, string] {
  const d = new Date(ms);
  return [
    `${pad(d.getUTCMonth() + 1, 2)}/${pad(d.getUTCDate(), 2)}/${d.getUTCFullYear()}`,
    `${pad(d.getUTCHours(), 2)}:${pad(d.getUTCMinutes(), 2)}:${pad(d.getUTCSeconds(), 2)}`,
  ];
}

function northwindCsvRow(i: number): string {
  const h = mix(i, 1);
  const m = MERCHANTS[h % MERCHANTS.length] as (typeof MERCHANTS)[number];
  const e = (h >>> 4) % NW_ENTRY.length;
  const iin = IINS[(h >>> 8) % IINS.length] as string;
  // Local (America/Chicago) wall-clock times; the profile converts them to UTC.
  const t = BASE_MS + i * 1000;
  const [txDate, txTime] = usDate(t);
  const [postDate, postTime] = usDate(t + 86_400_000);
  const cents = String(100 + (mix(i, 2) % 49_900));
  const pan = cardNumber(iin, i);
  const values = [
    `NW${pad(i, 10)}`,
    pad(mix(i, 8) % 1_000_000, 6),
    `C${pad(mix(i, 3) % 2_000_000, 7)}`,
    `A${pad(mix(i, 4) % 3_000_000, 7)}`,
    h % 5 === 0 ? `${pan.slice(0, 4)} ${pan.slice(4, 8)} ${pan.slice(8, 12)} ${pan.slice(12)}` : pan,
    txDate,
    txTime,
    postDate,
    postTime,
    cents,
    cents,
    '840',
    m[6],
    m[0],
    m[1],
    m[2],
    m[4],
    m[5],
    'USA',
    `NWM${pad(mix(i, 5) % 1_000_000_000, 9)}`,
    NW_ENTRY[e] as string,
    h & 1 ? 'C' : 'D',
    e === 2 || e === 3 ? 'Y' : 'N',
    h % 11 === 0 ? 'Y' : 'N',
    e === 4 ? 'Y' : 'N',
  ];
  let line = '';
  for (let k = 0; k < values.length; k++) {
    if (k > 0) line += ',';
    line += csvValue(values[k] as string);
  }
  return `${line}\n`;
}

/** The header line of a kind (with its newline), or '' for NDJSON. */
export function header(kind: DataKind): string {
  if (kind === 'canonical-csv') return `${CANONICAL_FIELDS.join(',')}\n`;
  if (kind === 'northwind-csv') return `${NORTHWIND_COLUMNS.join(',')}\n`;
  return '';
}

/**
 * The valid payments of test/fixtures/multi-event/export.ndjson (its first 10 lines: first-of posting times, zones
 * from the merchant, settlements and refunds expanded), row i being payment i % 10 under the id `<id>-<i>`: what
 * the new constructs of mapping profiles cost (dry-multi-event-ndjson, with test/fixtures/multi-event/profile.json).
 */
let payments: Array<Record<string, unknown>> | undefined;
function multiEventRow(i: number): string {
  payments ??= readFileSync(new URL('../fixtures/multi-event/export.ndjson', import.meta.url), 'utf8')
    .split('\n')
    .slice(0, 10)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const p = payments[i % payments.length] as Record<string, unknown>;
  return `${JSON.stringify({ ...p, id: `${p.id}-${i}` })}\n`;
}

/** Row i of a kind, with its newline. */
export function row(kind: DataKind, i: number): string {
  if (kind === 'canonical-csv') return canonicalCsvRow(i);
  if (kind === 'canonical-ndjson') return canonicalNdjsonRow(i);
  if (kind === 'multi-event-ndjson') return multiEventRow(i);
  return northwindCsvRow(i);
}

/** Write header + rows [start, start + rows) to a stream in ~1 MB writes, honouring back-pressure. */
export async function writeRows(
  out: Writable,
  kind: DataKind,
  rows: number,
  start = 0,
  withHeader = true,
): Promise<void> {
  let buf = withHeader ? header(kind) : '';
  const end = start + rows;
  for (let i = start; i < end; i++) {
    buf += row(kind, i);
    if (buf.length >= 1 << 20) {
      if (!out.write(buf)) await new Promise<void>((r) => out.once('drain', () => r()));
      buf = '';
    }
  }
  await new Promise<void>((resolve, reject) => {
    out.write(buf, (err) => (err ? reject(err) : resolve()));
  });
}

/** Write a data file atomically (a partial file from an interrupted bench is never reused). */
export async function writeDataFile(path: string, kind: DataKind, rows: number, start = 0): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.tmp`;
  const out = createWriteStream(tmp);
  await writeRows(out, kind, rows, start);
  await new Promise<void>((resolve, reject) =>
    out.end((err?: Error | null) => (err ? reject(err) : resolve())),
  );
  await rename(tmp, path);
}

/**
 * Write a ledger of acked batches of 50 covering transactionIds [0, ids), shaped as the writer's lines.
 * @example await writeAckedLedger('test/bench/.data/ledger-20M.ndjson', 20_000_000)
 */
export async function writeAckedLedger(path: string, ids: number, destination?: string): Promise<void> {
  const dest = destination === undefined ? '' : `,"destination":${JSON.stringify(destination)}`;
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.tmp`;
  const out = createWriteStream(tmp);
  let buf = '';
  let batch = 0;
  for (let first = 0; first < ids; first += 50) {
    const last = Math.min(ids, first + 50) - 1;
    const list: string[] = [];
    for (let i = first; i <= last; i++) list.push(`"${transactionId(i)}"`);
    const b = ++batch;
    buf +=
      `{"ts":"2026-11-20T02:00:00.000Z","batchId":"bench-${b}","status":"acked",` +
      `"requestId":"00000000-0000-4000-8000-${pad(b, 12)}","transactionIds":[${list.join(',')}],` +
      `"attempts":1,"httpStatus":200,"clientRequestId":"10000000-0000-4000-8000-${pad(b, 12)}",` +
      `"source":"exports/nightly.csv","lines":[${first + 2},${last + 2}],"runId":"bench0000"${dest}}\n`;
    if (buf.length >= 1 << 20) {
      if (!out.write(buf)) await new Promise<void>((r) => out.once('drain', () => r()));
      buf = '';
    }
  }
  out.write(buf);
  await new Promise<void>((resolve, reject) =>
    out.end((err?: Error | null) => (err ? reject(err) : resolve())),
  );
  await rename(tmp, path);
}

if (import.meta.main) {
  const [kind, rows, start] = process.argv.slice(2);
  if (!DATA_KINDS.includes(kind as DataKind) || !Number.isInteger(Number(rows))) {
    process.stderr.write(`usage: node test/bench/gen.ts <${DATA_KINDS.join('|')}> <rows> [start]\n`);
    process.exit(1);
  }
  process.stdout.on('error', () => process.exit(0));
  await writeRows(process.stdout, kind as DataKind, Number(rows), Number(start ?? 0));
}
