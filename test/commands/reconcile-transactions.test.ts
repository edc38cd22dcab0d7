// `reconcile` that explains: pending versus paid with the settlement run date, the stored tickets joined to each
// redemption, and reconciling from transactions (a run, a list of ids, an export) with trace's verdicts.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { TransactionTrace } from '../../src/trace/trace.ts';
import { FAST, type Workdir, workdir } from '../faults/helpers.ts';
import { runCliHere, summaryOf } from '../helpers/cli.ts';
import { useSimulator } from '../helpers/simulator.ts';
import { createTicket } from '../helpers/tickets.ts';
import { csvOf, makeTx } from '../helpers/transactions.ts';

const sim = useSimulator({ seed: 13, ticketDelayMs: 10 }, 'none');

let w: Workdir;
let runId: string;
let file: string;

beforeAll(async () => {
  w = await workdir('reconcile-tx');
  file = join(w.dir, 'export.csv');
  // 900004 earns a redemption on receipt (the simulator's rule), 900001 does not; can-csv-0001 has a seeded, paid one.
  const txs = [
    { ...makeTx(0), transactionId: '900004', sourceCustomerId: 'cust-1001' },
    { ...makeTx(1), transactionId: '900001', sourceCustomerId: 'cust-1001' },
    { ...makeTx(2), transactionId: 'can-csv-0001', sourceCustomerId: 'cust-1000' },
  ];
  await writeFile(file, csvOf(txs));
  const sent = await runCliHere(['send', ...FAST, file], { env: w.env(sim) });
  expect(sent.code, sent.stderr).toBe(0);
  runId = String(summaryOf(sent).runId);
  const ticket = await createTicket(w.env(sim), 'RT-1', 'cust-1001', '900004');
  expect(ticket.code, ticket.stderr).toBe(0);
}, 60_000);

const reconcile = (args: string[]) => runCliHere(['reconcile', ...args], { env: w.env(sim) });

describe('reconcile explains', () => {
  it('each redemption: its settlement run date, paid or pending, and the stored tickets about its transaction', async () => {
    const r = await reconcile(['--customer', 'cust-1001', '--customer', 'cust-1000', '--json']);
    // cust-1000's seeded pos-2025-0999 is unknown to this ledger: exit 2.
    expect(r.code, r.stderr).toBe(2);
    const report = JSON.parse(r.stdout);
    const items = report.customers.flatMap((c: { items: unknown[] }) => c.items);
    const earned = items.find((i: { transactionId: string }) => i.transactionId === '900004');
    expect(earned).toMatchObject({ reward: 'pending', matched: true, tickets: [{ sourceTicketId: 'RT-1' }] });
    expect(Date.parse(earned.rewardSettlementRunDate)).toBeGreaterThan(Date.now());
    const seeded = items.find((i: { transactionId: string }) => i.transactionId === 'can-csv-0001');
    expect(seeded).toMatchObject({ reward: 'paid', matched: true, tickets: [] });
    // cust-1000's three seeded redemptions (can-csv-0001, can-nd-0001, pos-2025-0999) paid; cust-1001's 900004 pending.
    expect(report.totals).toMatchObject({ paid: 3, pending: 1 });
    expect(report.totals.rewards.USD.pending).toBe(String(earned.amount.toFixed(2)));
    const text = await reconcile(['--customer', 'cust-1001']);
    expect(text.stdout).toMatch(
      /transaction 900004 .*reward PENDING \(approved; settlement run \S+\).*; ticket RT-1/,
    );
    expect(text.stdout).toMatch(/, \d+ paid, 1 pending;/);
  });

  it('from a run, from ids, from an export: one verdict per transaction, exit as trace', async () => {
    const verdicts = (stdout: string) =>
      Object.fromEntries(
        (JSON.parse(stdout).transactions as TransactionTrace[]).map((t) => [t.transactionId, t.verdict]),
      );
    const run = await reconcile([
      '--from-run',
      runId,
      '--customer',
      'cust-1001',
      '--customer',
      'cust-1000',
      '--json',
    ]);
    // 900001: no redemption of either customer names it, and with two customers its own is not known.
    expect(verdicts(run.stdout)).toEqual({
      '900004': 'disputed',
      '900001': 'reward-unchecked',
      'can-csv-0001': 'reward-paid',
    });
    expect(run.code).toBe(9);
    const one = await reconcile(['--from-run', runId, '--customer', 'cust-1001', '--json']);
    expect(verdicts(one.stdout)['900001']).toBe('no-reward');
    const ids = await reconcile([
      '--transaction',
      '900001',
      '--transaction',
      'ghost-1',
      '--customer',
      'cust-1001',
      '--json',
    ]);
    expect(verdicts(ids.stdout)).toEqual({ '900001': 'no-reward', 'ghost-1': 'not-read' });
    expect(ids.code).toBe(4);
    const exp = await reconcile(['--by-transaction', '--from-export', file, '--json']);
    const out = JSON.parse(exp.stdout);
    expect(out.totals).toEqual({
      transactions: 3,
      verdicts: { disputed: 1, 'no-reward': 1, 'reward-paid': 1 },
    });
    // Each transaction's customer is the export's own.
    expect(out.transactions.map((t: TransactionTrace) => t.customer)).toEqual([
      'cust-1001',
      'cust-1001',
      'cust-1000',
    ]);
    const none = await reconcile(['--from-run', 'no-such-run', '--customer', 'cust-1001']);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/no transactions/);
  });
});
