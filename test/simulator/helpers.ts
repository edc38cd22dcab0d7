// Shared bits of the simulator tests: a valid transaction factory, JSON requests, and a webhook receiver.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TransactionNotification } from '../../src/model/transaction.ts';

/** A valid TransactionNotification; `i` makes the id unique. */
export function makeTx(i: number, over: Partial<Record<string, unknown>> = {}): TransactionNotification {
  return {
    transactionId: `tx-${String(i).padStart(6, '0')}`,
    transactionType: 'AUTHORIZED',
    sourceCustomerId: 'cust-0001',
    sourceAccountId: 'acct-0001',
    paymentType: 'DEBIT',
    paymentMethodEntryType: 'APPLE_PAY',
    transactionTimestamp: '2026-11-20T10:00:00.000Z',
    transactionPostingTimestamp: '2026-11-20T12:30:00.000Z',
    paymentNetworkMCC: '5812',
    paymentNetworkMerchantIdType: 'MID',
    paymentNetworkMerchant: 'Blue Bottle Coffee',
    paymentNetworkMerchantAddress1: '1 Main St',
    paymentNetworkMerchantCity: 'Phoenix',
    paymentNetworkMerchantState: 'AZ',
    paymentNetworkMerchantPostalCode: '85004',
    paymentNetworkMerchantCountryCode: 'US',
    paymentNetworkMerchantId: '000123456789012',
    mobileIndicator: true,
    cardNetworkIdentifier: 4,
    iin: '411111',
    last4: '1111',
    postedAmount: '1250',
    authorizationAmount: '1250',
    cashBackAtPointOfSaleAmount: '0',
    currencyCode: 'USD',
    onlineIndicator: 'NOT_ONLINE',
    ...over,
  } as TransactionNotification;
}

export function batch(from: number, count: number): TransactionNotification[] {
  return Array.from({ length: count }, (_, k) => makeTx(from + k));
}

export interface JsonAnswer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

/** POST (or GET without body) and parse the JSON answer. */
export async function call(
  url: string,
  opts: {
    method?: string;
    body?: unknown;
    raw?: string;
    headers?: Record<string, string>;
    signal?: AbortSignal;
  } = {},
): Promise<JsonAnswer> {
  const method = opts.method ?? (opts.body !== undefined || opts.raw !== undefined ? 'POST' : 'GET');
  const init: RequestInit = {
    method,
    headers: { ...(method === 'POST' ? { 'content-type': 'application/json' } : {}), ...opts.headers },
  };
  if (opts.raw !== undefined) init.body = opts.raw;
  else if (opts.body !== undefined) init.body = JSON.stringify(opts.body);
  if (opts.signal) init.signal = opts.signal;
  const res = await fetch(url, init);
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
  };
}

export function postTx(
  base: string,
  txs: unknown[],
  headers: Record<string, string> = {},
): Promise<JsonAnswer> {
  return call(`${base}/v2/data/transactions`, { body: { transactions: txs }, headers });
}

/** Fields named by a ValidationException body. */
export function fields(body: Record<string, unknown>): string[] {
  return ((body.validationErrors as Array<{ field: string }> | undefined) ?? []).map((e) => e.field);
}

/** A webhook receiver on 127.0.0.1:0 collecting JSON bodies. */
export async function startReceiver(): Promise<{
  url: string;
  updates: Array<Record<string, unknown>>;
  waitFor(n: number, ms?: number): Promise<void>;
  close(): Promise<void>;
}> {
  const updates: Array<Record<string, unknown>> = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      updates.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    updates,
    async waitFor(n, ms = 5_000) {
      const until = Date.now() + ms;
      while (updates.length < n) {
        if (Date.now() > until) throw new Error(`waited for ${n} webhook updates, got ${updates.length}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    },
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}
