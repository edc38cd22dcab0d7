// `svc-ingest reconcile` on a PostgreSQL ledger (the multi-host setup): named by --ledger postgres://… or by
// SVC_LEDGER_URL, the report is the one a ledger file gives for the same sends; by transaction (--from-run) too.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/index.ts';
import { earnsRedemption } from '../../src/simulator/index.ts';
import { configFor } from '../client/fixtures.ts';
import { workdir } from '../faults/helpers.ts';
import { runCliHere, summaryOf } from '../helpers/cli.ts';
import { usePostgres } from '../helpers/postgres.ts';
import { useSimulator } from '../helpers/simulator.ts';
import { csvOf, makeTx, range } from '../helpers/transactions.ts';

const pgs = usePostgres();
const sim = useSimulator({ seed: 37 }, 'none');
const FAST = ['--json', '--retry-base-ms', '1', '--retry-max-ms', '5', '--max-retries', '1'];

describe('reconcile on a PostgreSQL ledger', () => {
  it('--ledger postgres://… and SVC_LEDGER_URL: every redemption matched to its acked batch; --from-run too', async () => {
    const url = await pgs.createDatabase();
    const shown = pgs.urlWithoutPassword(url.split('/').pop() as string);
    const w = await workdir('reconcile-pg');
    const txs = range(60).map((i) => ({
      ...makeTx(i, 'rp'),
      sourceCustomerId: 'rp-a',
      sourceAccountId: 'acct-rp-a',
    }));
    const earned = txs.filter((t) => earnsRedemption(t.transactionId)).map((t) => t.transactionId);
    expect(earned.length).toBeGreaterThan(2);
    const file = join(w.dir, 'rp.csv');
    await writeFile(file, csvOf(txs));
    const env = { SVC_BASE_URL: sim.url, SVC_LEDGER_PATH: join(w.dir, 'not-there.ndjson') };
    const sent = await runCliHere(
      ['send', ...FAST, '--ledger', url, '--rejects', join(w.dir, 'r.ndjson'), file],
      {
        env,
      },
    );
    expect(summaryOf(sent)).toMatchObject({ sent: 60, ledger: shown });

    const byFlag = await runCliHere(['reconcile', '--customer', 'rp-a', '--ledger', url, '--json'], { env });
    expect(byFlag.code, byFlag.stderr).toBe(0);
    const report = JSON.parse(byFlag.stdout);
    expect(report.ledgers).toEqual([shown]);
    expect(report.totals).toMatchObject({
      customers: 1,
      redemptions: earned.length,
      matched: earned.length,
      unmatched: 0,
    });
    const acked = report.customers[0].items.map(
      (i: { transactionId: string; acked: { requestId: string } }) => [
        i.transactionId,
        typeof i.acked.requestId,
      ],
    );
    expect(acked.map(([id]: string[]) => id).sort()).toEqual([...earned].sort());
    expect(new Set(acked.map(([, t]: string[]) => t))).toEqual(new Set(['string']));
    expect(byFlag.stdout + byFlag.stderr).not.toContain(new URL(url).password);

    const byEnv = await runCliHere(['reconcile', '--customer', 'rp-a', '--json'], {
      env: { ...env, SVC_LEDGER_URL: url },
    });
    expect(byEnv.code, byEnv.stderr).toBe(0);
    expect(JSON.parse(byEnv.stdout).totals).toEqual(report.totals);

    const run = String(summaryOf(sent).runId);
    const byRun = await runCliHere(
      ['reconcile', '--customer', 'rp-a', '--from-run', run, '--ledger', url, '--json'],
      {
        env,
      },
    );
    const traced = JSON.parse(byRun.stdout);
    expect(traced.ledgers).toEqual([shown]);
    expect(traced.totals.transactions).toBe(60);
    // Every transaction of the run found acknowledged in the database: earned ones pending, the others none.
    const verdicts = traced.transactions.map((t: { verdict: string; acked: unknown }) => [
      t.verdict,
      t.acked !== null,
    ]);
    expect(verdicts.filter(([, acked]: [string, boolean]) => acked)).toHaveLength(60);
    expect(verdicts.filter(([v]: [string]) => v === 'reward-pending')).toHaveLength(earned.length);
    expect(verdicts.filter(([v]: [string]) => v === 'no-reward')).toHaveLength(60 - earned.length);
    const client = createClient(configFor(sim.url));
    const answer = await client.getRedemptions('rp-a');
    await client.close();
    expect(answer.redemptions.length).toBe(earned.length);
  });
});
