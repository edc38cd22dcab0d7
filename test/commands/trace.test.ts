// `svc-ingest trace` through the real CLI against the simulator, on both ledgers (a file, a real PostgreSQL): a
// transaction rewarded and paid, one pending, one without a reward, one disputed by a ticket, one rejected, one
// failed, one never read — each its verdict and evidence, --json, and the exit status of each class.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { TransactionTrace } from '../../src/trace/trace.ts';
import { FAST, kindName, ledgerKinds, type Workdir, workdir } from '../faults/helpers.ts';
import { runCliHere } from '../helpers/cli.ts';
import { usePostgres } from '../helpers/postgres.ts';
import { useSimulator } from '../helpers/simulator.ts';
import { createTicket } from '../helpers/tickets.ts';
import { csvOf, makeTx } from '../helpers/transactions.ts';

const pgs = usePostgres();
const sim = useSimulator({ seed: 5, ticketDelayMs: 10 }, 'none');

/** One record per case: [transactionId, customer, overrides]. */
const RECORDS: Array<[string, string, Record<string, string>?]> = [
  ['can-csv-0001', 'cust-1000'], // a seeded redemption, settled long ago: paid
  ['NW20251011', 'C70000'], // a seeded redemption whose settlement run is ahead: pending
  ['900001', 'cust-1001'], // earns nothing
  ['900004', 'cust-1001'], // earns a redemption on receipt (the simulator's rule): pending
  ['900002', 'cust-1001'], // disputed by a ticket
  ['bad-0001', 'cust-1001', { postedAmount: '12.34' }], // rejected
  ['fail-0001', 'cust-1001'], // poisoned: fails every attempt
];

async function sendAll(w: Workdir): Promise<void> {
  const txs = RECORDS.map(([id, customer, over], i) => ({
    ...makeTx(i, 'tr'),
    transactionId: id,
    sourceCustomerId: customer,
    ...over,
  }));
  const file = join(w.dir, 'trace.csv');
  await writeFile(file, csvOf(txs));
  sim.setFaults({ poison: ['fail-0001'] });
  try {
    const r = await runCliHere(['send', ...FAST, '--batch-size', '1', '--max-retries', '1', file], {
      env: w.env(sim),
    });
    // Some records rejected and one batch failed: 3 wins.
    expect(r.code, r.stderr).toBe(3);
  } finally {
    sim.setFaults({ poison: [] });
  }
}

const trace = (w: Workdir, args: string[]) => runCliHere(['trace', ...args], { env: w.env(sim) });

async function traceJson(w: Workdir, args: string[]) {
  const r = await trace(w, [...args, '--json']);
  const out = JSON.parse(r.stdout) as { transactions: TransactionTrace[]; exitStatus: number };
  expect(out.exitStatus).toBe(r.code);
  return { code: r.code, out, stderr: r.stderr };
}

for (const kind of ledgerKinds(pgs)) {
  describe(`trace [${kindName(kind)} ledger]`, () => {
    let w: Workdir;
    beforeAll(async () => {
      w = await workdir('trace', kind);
      await sendAll(w);
      const ticket = await createTicket(w.env(sim), `TR-${kindName(kind)}`, 'cust-1001', '900002');
      expect(ticket.code, ticket.stderr).toBe(0);
    }, 60_000);

    it('paid: acknowledged (when, batch, requestId, source and lines) and the redemption with its settlement run (exit 0)', async () => {
      const { code, out } = await traceJson(w, ['can-csv-0001', '--customer', 'cust-1000']);
      expect(code).toBe(0);
      const [t] = out.transactions;
      expect(t).toMatchObject({
        transactionId: 'can-csv-0001',
        verdict: 'reward-paid',
        exitStatus: 0,
        customer: 'cust-1000',
        acked: { status: 'acked', source: join(w.dir, 'trace.csv'), lines: [2, 2] },
        reward: {
          state: 'paid',
          redemptionId: 'rdm-sample-01',
          adId: '100001',
          merchantName: 'Blue Bottle Coffee',
        },
        failed: null,
        rejected: [],
        tickets: [],
      });
      expect(t?.acked?.requestId).toMatch(/^[0-9a-f-]{36}$/);
      expect(t?.acked?.batchId).toBeTruthy();
      expect(Date.parse(t?.reward?.rewardSettlementRunDate ?? '')).toBeLessThan(Date.now());
      const text = await trace(w, ['can-csv-0001', '--customer', 'cust-1000']);
      expect(text.code).toBe(0);
      expect(text.stdout).toMatch(/^can-csv-0001: REWARD-PAID \(exit 0\)/m);
      expect(text.stdout).toContain(`requestId ${t?.acked?.requestId}`);
      expect(text.stdout).toMatch(/reward: {3}paid: redemption rdm-sample-01, amount \d+\.\d\d/);
    });

    it('pending (a seeded one and one earned on receipt): exit 6; no reward (yet): exit 7', async () => {
      const seeded = await traceJson(w, ['NW20251011', '--customer', 'C70000']);
      expect(seeded.code).toBe(6);
      expect(seeded.out.transactions[0]).toMatchObject({
        verdict: 'reward-pending',
        reward: { state: 'pending' },
      });
      const earned = await traceJson(w, ['900004', '--customer', 'cust-1001']);
      expect(earned.code).toBe(6);
      expect(Date.parse(earned.out.transactions[0]?.reward?.rewardSettlementRunDate ?? '')).toBeGreaterThan(
        Date.now(),
      );
      const none = await traceJson(w, ['900001', '--customer', 'cust-1001']);
      expect(none.code).toBe(7);
      expect(none.out.transactions[0]).toMatchObject({
        verdict: 'no-reward',
        reward: null,
        rewardError: null,
      });
    });

    it('disputed: the stored ticket naming it, read back from the service (exit 8); its customer comes from the ticket', async () => {
      // The simulator closes the ticket after two short delays; trace reads it back until then.
      let t: TransactionTrace | undefined;
      for (let i = 0; i < 50; i++) {
        const { code, out } = await traceJson(w, ['900002']);
        expect(code).toBe(8);
        t = out.transactions[0];
        if (t?.tickets[0]?.phase === 'closed') break;
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(t).toMatchObject({
        verdict: 'disputed',
        customer: 'cust-1001',
        tickets: [
          { sourceTicketId: `TR-${kindName(kind)}`, phase: 'closed', svcTicketId: expect.any(Number) },
        ],
      });
      expect(t?.tickets[0]?.resolutionType).toMatch(/^No Credit: /);
    });

    it('rejected (file, line, reasons; exit 2), failed (last error, resent next run; exit 3), never read (exit 4)', async () => {
      const rejected = await traceJson(w, ['bad-0001']);
      expect(rejected.code).toBe(2);
      expect(rejected.out.transactions[0]).toMatchObject({
        verdict: 'rejected',
        acked: null,
        rejected: [{ source: join(w.dir, 'trace.csv'), line: 7, errors: [{ field: 'postedAmount' }] }],
      });
      const failed = await traceJson(w, ['fail-0001']);
      expect(failed.code).toBe(3);
      expect(failed.out.transactions[0]).toMatchObject({
        verdict: 'failed',
        acked: null,
        failed: { status: 'failed' },
      });
      expect(failed.out.transactions[0]?.failed?.error).toMatch(/HTTP 500/);
      expect(failed.out.transactions[0]?.summary).toMatch(/the next send resends it/);
      const ghost = await traceJson(w, ['never-sent-1']);
      expect(ghost.code).toBe(4);
      expect(ghost.out.transactions[0]).toMatchObject({
        verdict: 'not-read',
        acked: null,
        failed: null,
        rejected: [],
      });
    });

    it('several ids: one verdict each, in the order given; the most severe class decides the exit status', async () => {
      const all = await traceJson(w, [
        'can-csv-0001',
        '900001',
        'fail-0001',
        'bad-0001',
        '--customer',
        'cust-1000',
      ]);
      expect(all.out.transactions.map((t) => t.verdict)).toEqual([
        'reward-paid',
        'no-reward',
        'failed',
        'rejected',
      ]);
      // rejected (2) outranks failed (3), which outranks the reward classes.
      expect(all.code).toBe(2);
      const unchecked = await traceJson(w, ['900001']);
      expect(unchecked.code).toBe(9);
      expect(unchecked.out.transactions[0]?.rewardError).toMatch(/--customer/);
    });
  });
}

describe('trace: could not run, service unavailable', () => {
  it('exit 1 for a missing ledger or rejects file; exit 5 with the ledger verdicts when the service is down', async () => {
    const w = await workdir('trace-errors');
    const missing = await runCliHere(['trace', 'x', '--ledger', join(w.dir, 'nope.ndjson')], {
      env: w.env(sim),
    });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/LEDGER_READ: ledger .*nope\.ndjson: no such file/);
    await writeFile(w.ledger, '');
    const rejects = await runCliHere(['trace', 'x', '--rejects', join(w.dir, 'nope.ndjson')], {
      env: w.env(sim),
    });
    expect(rejects.code).toBe(1);
    const down = await runCliHere(
      ['trace', 'x', '--customer', 'cust-1000', '--json', '--base-url', 'http://127.0.0.1:9'],
      {
        env: w.env(sim),
      },
    );
    expect(down.code).toBe(5);
    const out = JSON.parse(down.stdout);
    expect(out.transactions[0].verdict).toBe('not-read');
    expect(out.error.code).toBe('SEND_UNAVAILABLE');
  });
});
