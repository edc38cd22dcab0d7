// `svc-ingest reconcile` through the real CLI against the simulator, on ledgers written by real `send` runs:
// matching with requestIds, several ledgers, customer sources (ids, list files, CSV column, exports through a
// mapping), bounded concurrency with cached sessions, reward totals, exit codes 0/1/2/3/4/5.

import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type SvcClient } from '../../src/client/index.ts';
import type { Redemption } from '../../src/client/models.ts';
import type { TransactionNotification } from '../../src/model/transaction.ts';
import { earnsRedemption } from '../../src/simulator/index.ts';
import { configFor } from '../client/fixtures.ts';
import { ROOT, runCliHere, summaryOf } from '../helpers/cli.ts';
import { NO_FAULTS, useSimulator } from '../helpers/simulator.ts';
import { csvOf, makeTx, range } from '../helpers/transactions.ts';

const sim = useSimulator({ seed: 31 }, 'none');
const FAST = ['--json', '--retry-base-ms', '1', '--retry-max-ms', '5', '--max-retries', '1'];

let dir: string;
let client: SvcClient;
/** rc-a's transactions, sent in two halves to two ledgers. */
let ledgerA1: string;
let ledgerA2: string;
/** rc-b's: accepted by the service directly, then failed (poison) in our own send. */
let ledgerB: string;
let txA: TransactionNotification[];
let txB: TransactionNotification[];
/** A seeded customer with catalog redemptions (their transactions are none of ours). */
let seeded: string;

/** Both ledgers of rc-a. */
const bothA = () => ['--ledger', ledgerA1, '--ledger', ledgerA2];
const txFor = (customer: string, prefix: string, n: number) =>
  range(n).map((i) => ({
    ...makeTx(i, prefix),
    sourceCustomerId: customer,
    sourceAccountId: `acct-${customer}`,
  }));

interface LedgerLine {
  status: string;
  batchId: string;
  requestId: string | null;
  transactionIds: string[];
  runId: string;
}
const linesOf = async (path: string): Promise<LedgerLine[]> =>
  (await readFile(path, 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));

async function send(file: string, ledger: string, extra: string[] = []) {
  const r = await runCliHere(
    ['send', ...FAST, ...extra, '--ledger', ledger, '--rejects', join(dir, 'rejects.ndjson'), file],
    {
      env: { SVC_BASE_URL: sim.url },
    },
  );
  return summaryOf(r);
}

const reconcile = (args: string[], env: Record<string, string> = {}) =>
  runCliHere(['reconcile', '--base-url', sim.url, ...args], {
    env: { SVC_LEDGER_PATH: join(dir, 'not-there.ndjson'), ...env },
  });

/** Reward total in cents of some redemptions, as the report writes it. */
const dollars = (rs: Redemption[]) => {
  const cents = rs.reduce((n, r) => n + Math.round(r.amount * 100), 0);
  return `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-reconcile-'));
  client = createClient(configFor(sim.url));
  txA = txFor('rc-a', 'ra', 80);
  txB = txFor('rc-b', 'rb', 40);
  expect(txA.filter((t) => earnsRedemption(t.transactionId)).length).toBeGreaterThan(3);
  expect(txB.filter((t) => earnsRedemption(t.transactionId)).length).toBeGreaterThan(1);

  ledgerA1 = join(dir, 'a1.ndjson');
  ledgerA2 = join(dir, 'a2.ndjson');
  await writeFile(join(dir, 'a1.csv'), csvOf(txA.slice(0, 40)));
  await writeFile(join(dir, 'a2.csv'), csvOf(txA.slice(40)));
  expect(await send(join(dir, 'a1.csv'), ledgerA1)).toMatchObject({ sent: 40 });
  expect(await send(join(dir, 'a2.csv'), ledgerA2)).toMatchObject({ sent: 40 });

  // rc-b: the service has every transaction (posted around our ledger), our own send failed the earning ones.
  await client.postTransactions(txB, { requestId: 'outside-our-ledger' });
  const earnedB = txB.filter((t) => earnsRedemption(t.transactionId)).map((t) => t.transactionId);
  ledgerB = join(dir, 'b.ndjson');
  await writeFile(join(dir, 'b.csv'), csvOf(txB));
  sim.setFaults({ ...NO_FAULTS, poison: earnedB });
  // Batches of 2: no batch holds two earning ids, so each failed batch is split down to its poisoned record
  // whatever the timing (a batch of 4 with two of them, failing while no other batch was acknowledged, is
  // recorded whole by the dispatcher's outage rule: how often that happened depended on how fast answers came).
  expect(await send(join(dir, 'b.csv'), ledgerB, ['--batch-size', '2'])).toMatchObject({
    failed: earnedB.length,
  });
  sim.setFaults(NO_FAULTS);

  for (let c = 1; c <= 40; c++) {
    const id = `cust-${String(c).padStart(4, '0')}`;
    if ((await client.getRedemptions(id, { lookbackWindowInDays: 396 })).redemptions.length > 0) {
      seeded = id;
      break;
    }
  }
});
afterAll(async () => {
  await client?.close();
});

describe('reconcile: matching', () => {
  it('matches each redemption to the acked batch and service requestId that carried it; totals; exit 0', async () => {
    const r = await reconcile(['--customer', 'rc-a', ...bothA(), '--json']);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    const answer = await client.getRedemptions('rc-a');
    const earned = txA.filter((t) => earnsRedemption(t.transactionId)).map((t) => t.transactionId);
    expect(answer.redemptions.map((x) => x.transactionId).sort()).toEqual([...earned].sort());
    const n = earned.length;
    const total = dollars(answer.redemptions);
    expect(report.totals).toEqual({
      customers: 1,
      customersFailed: 0,
      redemptions: n,
      matched: n,
      unmatched: 0,
      // Earned on receipt, paid by the settlement run a week later: pending until then.
      paid: 0,
      pending: n,
      rewards: { USD: { total, matched: total, unmatched: '0.00', paid: '0.00', pending: total } },
    });
    expect(report.ledgers).toEqual([ledgerA1, ledgerA2]);
    const lines = [
      ...(await linesOf(ledgerA1)).map((l) => ({ l, ledger: ledgerA1 })),
      ...(await linesOf(ledgerA2)).map((l) => ({ l, ledger: ledgerA2 })),
    ];
    expect(report.ledgerLines).toBe(lines.length);
    const [c] = report.customers;
    expect(c).toMatchObject({ sourceCustomerId: 'rc-a', redemptions: n, matched: n, unmatched: 0 });
    expect(c.requestId).toMatch(/^[0-9a-f-]{36}$/);
    for (const item of c.items) {
      const carrier = lines.find(
        ({ l }) => l.status === 'acked' && l.transactionIds.includes(item.transactionId),
      );
      expect(carrier, item.transactionId).toBeDefined();
      const want = answer.redemptions.find((x) => x.redemptionId === item.redemptionId) as Redemption;
      expect(item).toEqual({
        redemptionId: want.redemptionId,
        transactionId: want.transactionId,
        adId: want.adId,
        merchantName: answer.ads[want.adId]?.merchantName,
        amount: want.amount,
        currency: 'USD',
        redemptionDate: want.redemptionDate,
        rewardSettlementRunDate: want.rewardSettlementRunDate,
        reward: 'pending',
        matched: true,
        acked: {
          requestId: carrier?.l.requestId,
          batchId: carrier?.l.batchId,
          ts: expect.any(String),
          runId: carrier?.l.runId,
          ledger: carrier?.ledger,
        },
        failed: null,
        tickets: [],
      });
      expect(Date.parse(want.rewardSettlementRunDate ?? '')).toBeGreaterThan(Date.now());
    }
  });

  it('reads every --ledger given: with one of the two, the other half is unmatched (exit 2)', async () => {
    const r = await reconcile(['--customer', 'rc-a', '--ledger', ledgerA1, '--json']);
    expect(r.code).toBe(2);
    const report = JSON.parse(r.stdout);
    const inA2 = txA
      .slice(40)
      .filter((t) => earnsRedemption(t.transactionId))
      .map((t) => t.transactionId);
    const unmatched = report.customers[0].items.filter((i: { matched: boolean }) => !i.matched);
    expect(unmatched.map((i: { transactionId: string }) => i.transactionId).sort()).toEqual([...inA2].sort());
    expect(report.totals.unmatched).toBe(inA2.length);
    expect(report.totals.matched + report.totals.unmatched).toBe(report.totals.redemptions);
    for (const i of unmatched) expect([i.acked, i.failed]).toEqual([null, null]);
  });

  it('an unmatched redemption names the failed ledger line of its transaction, or none; table and NDJSON', async () => {
    const args = ['--customer', 'rc-b', '--customer', seeded, '--ledger', ledgerB, '--lookback-days', '396'];
    const r = await reconcile([...args, '--ndjson']);
    expect(r.code).toBe(2);
    const [b, s] = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const earnedB = txB.filter((t) => earnsRedemption(t.transactionId)).map((t) => t.transactionId);
    const failedLines = (await linesOf(ledgerB)).filter((l) => l.status === 'failed');
    expect(b).toMatchObject({ sourceCustomerId: 'rc-b', redemptions: earnedB.length, matched: 0 });
    for (const i of b.items) {
      const line = failedLines.find((l) => l.transactionIds.includes(i.transactionId));
      expect(i.acked).toBeNull();
      expect(i.failed).toMatchObject({ batchId: line?.batchId, ledger: ledgerB });
      expect(i.failed.error).toMatch(/HTTP 500/);
    }
    const seededAnswer = await client.getRedemptions(seeded, { lookbackWindowInDays: 396 });
    expect(s).toMatchObject({
      sourceCustomerId: seeded,
      redemptions: seededAnswer.redemptions.length,
      matched: 0,
      unmatched: seededAnswer.redemptions.length,
      rewards: { USD: { total: dollars(seededAnswer.redemptions), matched: '0.00' } },
    });
    for (const i of s.items) expect([i.acked, i.failed]).toEqual([null, null]);

    const text = await reconcile(args);
    expect(text.code).toBe(2);
    expect(text.stdout).toMatch(/^customer\s+redemptions\s+matched\s+unmatched\s+rewards\s+requestId$/m);
    expect(text.stdout).toMatch(
      new RegExp(
        `^rc-b\\s+${earnedB.length}\\s+0\\s+${earnedB.length}\\s+USD \\d+\\.\\d\\d\\s+[0-9a-f-]{36}$`,
        'm',
      ),
    );
    for (const id of earnedB) {
      expect(text.stdout).toMatch(
        new RegExp(`transaction ${id} .*UNMATCHED: no acked ledger line; last failed .*HTTP 500`),
      );
    }
    for (const x of seededAnswer.redemptions) {
      expect(text.stdout).toContain(`${x.redemptionId}  transaction ${x.transactionId}`);
    }
    expect(text.stdout).toContain('UNMATCHED: unknown to the ledger');
    expect(text.stdout).toMatch(
      /^total: 2 customer\(s\), \d+ redemption\(s\), 0 matched, \d+ unmatched, \d+ paid, \d+ pending; rewards USD /m,
    );
  });

  it('a customer who cannot be checked is reported with its error, the others still are: exit 3', async () => {
    const r = await reconcile(['--customer', 'rc-a', '--customer', 'never-enrolled', ...bothA(), '--json']);
    expect(r.code).toBe(3);
    const report = JSON.parse(r.stdout);
    expect(report.totals).toMatchObject({ customers: 2, customersFailed: 1, unmatched: 0 });
    expect(report.customers[1]).toMatchObject({
      sourceCustomerId: 'never-enrolled',
      redemptions: 0,
      items: [],
      error: { code: 'SEND_HTTP', status: 400 },
    });
    expect(report.customers[1].error.message).toContain('Customer not enrolled');
    expect(report.customers[0]).toMatchObject({ sourceCustomerId: 'rc-a', unmatched: 0 });
  });
});

describe('reconcile: where the customers come from', () => {
  const ids = (stdout: string) =>
    JSON.parse(stdout).customers.map((c: { sourceCustomerId: string }) => c.sourceCustomerId);

  it('ids given, a list file (comments, blanks, CRLF, repeats), a CSV column: each customer once, in order', async () => {
    const list = join(dir, 'customers.txt');
    await writeFile(list, '# nightly list\r\nrc-b\r\n\r\n  rc-a  \r\nrc-b\r\n');
    const csv = join(dir, 'customers.csv');
    await writeFile(csv, `name,sourceCustomerId\nB,rc-b\nS,${seeded}\nA,rc-a\nZ,rc-z\n`);
    const r = await reconcile([
      '--customer',
      'rc-a',
      '--customer',
      'rc-a',
      '--customers-from',
      list,
      '--customers-from',
      csv,
      ...bothA(),
      '--ledger',
      ledgerB,
      '--lookback-days',
      '396',
      '--json',
    ]);
    // rc-z is enrolled by nothing: it cannot be checked (exit 3 wins over the unmatched ones).
    expect(r.code, r.stderr).toBe(3);
    expect(ids(r.stdout)).toEqual(['rc-a', 'rc-b', seeded, 'rc-z']);

    const other = join(dir, 'enrolled.csv');
    await writeFile(other, 'CUST,x\nrc-a,1\n');
    const named = await reconcile(['--customers-from', other, '--column', 'CUST', ...bothA(), '--json']);
    expect(named.code, named.stderr).toBe(0);
    expect(ids(named.stdout)).toEqual(['rc-a']);
    const wrong = await reconcile(['--customers-from', other, '--column', 'NOPE', '--ledger', ledgerA1]);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr.trim()).toBe(
      `svc-ingest: INPUT_HEADER_MISSING_COLUMN: ${other}: no column "NOPE" (columns: CUST, x)`,
    );
  });

  it('every sourceCustomerId of an export read through its mapping profile (valid records only)', async () => {
    // The Northwind sample: its customers are enrolled by sending it; rows 9, 18 and 25 are invalid on purpose.
    const sample = join(ROOT, 'samples/northwind.csv');
    const nw = join(dir, 'northwind.ndjson');
    expect(await send(sample, nw, ['--mapping', 'northwind-csv'])).toMatchObject({ sent: 27, rejected: 3 });
    const rejects = (await readFile(join(dir, 'rejects.ndjson'), 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .filter((j) => j.source === sample);
    const badLines = new Set(rejects.map((j: { line: number }) => j.line));
    expect(badLines).toEqual(new Set([9, 18, 25]));
    const rows = parse(await readFile(sample), { columns: true, relax_column_count: true }) as Array<
      Record<string, string>
    >;
    const want = [
      ...new Set(rows.filter((_, k) => !badLines.has(k + 2)).map((row) => row.CUST_NO as string)),
    ];
    expect(want.length).toBeGreaterThan(5);

    const r = await reconcile([
      '--from-export',
      sample,
      '--mapping',
      'northwind-csv',
      '--ledger',
      nw,
      '--json',
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(ids(r.stdout)).toEqual(want);
    const report = JSON.parse(r.stdout);
    expect(report.totals).toMatchObject({ customers: want.length, customersFailed: 0, unmatched: 0 });
    expect(r.stderr).toContain('3 rejected record(s) ignored');

    // Through the canonical profile, from two exports (rc-a's halves): one customer.
    const two = await reconcile([
      '--from-export',
      join(dir, 'a1.csv'),
      '--from-export',
      join(dir, 'a2.csv'),
      ...bothA(),
      '--json',
    ]);
    expect(two.code, two.stderr).toBe(0);
    expect(ids(two.stdout)).toEqual(['rc-a']);
  });

  it('an export whose header lacks a column its profile needs is an error (exit 1), as for send', async () => {
    const bad = join(dir, 'no-customer-column.csv');
    const txt = csvOf(txA.slice(0, 3)).replace('sourceCustomerId', 'customer');
    await writeFile(bad, txt);
    const r = await reconcile(['--from-export', bad, ...bothA()]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(
      `svc-ingest: INPUT_HEADER_MISSING_COLUMN: ${bad}: header lacks column sourceCustomerId needed by mapping canonical`,
    );
  });

  it('no customers in the sources: exit 4; no source at all or --column alone: exit 1', async () => {
    const empty = join(dir, 'none.txt');
    await writeFile(empty, '# nobody today\n\n');
    const r = await reconcile(['--customers-from', empty, '--ledger', ledgerA1]);
    expect(r.code).toBe(4);
    expect(r.stderr.trim()).toBe('svc-ingest: no customers: the customer sources given hold none (exit 4)');
    const none = await reconcile(['--ledger', ledgerA1]);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain(
      'USAGE_INVALID: no customers: give --customer, --customers-from or --from-export',
    );
    const col = await reconcile(['--customer', 'rc-a', '--column', 'x', '--ledger', ledgerA1]);
    expect(col.code).toBe(1);
    expect(col.stderr).toContain('--column names the column of --customers-from tables');
  });
});

describe('reconcile: ledgers, the service, concurrency', () => {
  it('a mistyped --ledger or a directory is an error before any call; the configured ledger is the default', async () => {
    const before = sim.stats().requests.total;
    const typo = join(dir, 'a1.ndjsn');
    const r = await reconcile(['--customer', 'rc-a', '--ledger', ledgerA1, '--ledger', typo]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(`svc-ingest: LEDGER_READ: ledger ${typo}: no such file`);
    await mkdir(join(dir, 'ledger-dir'), { recursive: true });
    const d = await reconcile(['--customer', 'rc-a', '--ledger', join(dir, 'ledger-dir')]);
    expect(d.code).toBe(1);
    expect(d.stderr.trim()).toBe(
      `svc-ingest: LEDGER_PATH_INVALID: ledger ${join(dir, 'ledger-dir')} is a directory; name a regular file, or a path where one can be created`,
    );
    const def = await reconcile(['--customer', 'rc-a']);
    expect(def.code).toBe(1);
    expect(def.stderr).toContain(`ledger ${join(dir, 'not-there.ndjson')}: no such file`);
    expect(sim.stats().requests.total).toBe(before);

    const viaEnv = await reconcile(['--customer', 'rc-a', '--json'], { SVC_LEDGER_PATH: ledgerA1 });
    expect(viaEnv.code).toBe(2);
    expect(JSON.parse(viaEnv.stdout).ledgers).toEqual([ledgerA1]);
  });

  it('service unavailable: exit 5, one line naming the URL; with --json a JSON error on stdout', async () => {
    const server = createServer();
    await new Promise<void>((res) => server.listen(0, '127.0.0.1', () => res()));
    const port = (server.address() as AddressInfo).port;
    await new Promise<void>((res) => server.close(() => res()));
    const url = `http://127.0.0.1:${port}`;
    const r = await runCliHere([
      'reconcile',
      '--base-url',
      url,
      '--customer',
      'rc-a',
      '--customer',
      'rc-b',
      '--ledger',
      ledgerA1,
      '--json',
    ]);
    expect(r.code).toBe(5);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr.trim()).toMatch(
      new RegExp(
        `^svc-ingest: SEND_UNAVAILABLE: service unavailable: POST ${url}/v2/session/startSession: connection refused \\(ECONNREFUSED\\)$`,
      ),
    );
    const out = JSON.parse(r.stdout);
    expect(out.error.code).toBe('SEND_UNAVAILABLE');
    expect(out.error.message).toContain(url);
    // --ndjson is a machine output too: the same error object.
    const nd = await runCliHere([
      'reconcile',
      '--base-url',
      url,
      '--customer',
      'rc-a',
      '--ledger',
      ledgerA1,
      '--ndjson',
    ]);
    expect(nd.code).toBe(5);
    expect(JSON.parse(nd.stdout).error.code).toBe('SEND_UNAVAILABLE');
  });

  it('--concurrency bounds the calls in flight; each customer gets one session and one redemptions call', async () => {
    sim.reset();
    sim.setFaults({ ...NO_FAULTS, latencyMs: 40 });
    try {
      const customers = range(8).map((i) => `cust-${String(i + 1).padStart(4, '0')}`);
      const args = customers.flatMap((c) => ['--customer', c]);
      const r = await reconcile([
        ...args,
        '--customer',
        customers[0] as string,
        '--concurrency',
        '2',
        '--ledger',
        ledgerA1,
        '--json',
      ]);
      expect([0, 2]).toContain(r.code);
      expect(
        JSON.parse(r.stdout).customers.map((c: { sourceCustomerId: string }) => c.sourceCustomerId),
      ).toEqual(customers);
      const s = sim.stats();
      expect(s.requests.byPath['/v2/session/startSession']).toBe(8);
      expect(s.requests.byPath['/v2/customerProfile/getCustomerAdRedemptions']).toBe(8);
      expect(s.maxInFlight).toBe(2);

      sim.reset();
      const wide = await reconcile([...args, '--concurrency', '8', '--ledger', ledgerA1, '--json']);
      expect([0, 2]).toContain(wide.code);
      expect(sim.stats().maxInFlight).toBeGreaterThan(2);
      const bad = await reconcile([...args, '--concurrency', '0', '--ledger', ledgerA1]);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain('--concurrency: expected an integer 1..64, got 0');
    } finally {
      sim.setFaults(NO_FAULTS);
    }
  });
});
