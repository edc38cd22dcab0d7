// The worker-thread path (read → map → validate off the main thread) gives the same results as the inline
// path: same summary, same rejects with the same lines, same deliveries, and it drains on SIGTERM.
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { runCli, startCli, summaryOf, waitFor } from '../helpers/cli.ts';
import { useSimulator } from '../helpers/simulator.ts';
import { csvOf, makeTx, range } from '../helpers/transactions.ts';

const sim = useSimulator({ seed: 31 }, 'reset');
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-worker-'));
});

async function input(): Promise<string> {
  const txs = range(3000).map((i) => makeTx(i, 'wk')) as unknown as Array<Record<string, unknown>>;
  txs[10]!.postedAmount = '-5';
  txs[1500]!.paymentNetworkMCC = 'abcd';
  txs[2999]!.transactionId = 'wk-00000007';
  const file = join(dir, 'in.csv');
  await writeFile(file, csvOf(txs as never));
  return file;
}

const args = (name: string, file: string) => [
  'send',
  '--json',
  '--retry-base-ms',
  '1',
  '--ledger',
  join(dir, `${name}.ledger`),
  '--rejects',
  join(dir, `${name}.rejects`),
  '--base-url',
  sim.url,
  file,
];

describe('prepare on a worker thread', () => {
  it('matches the inline path: summary, reject lines, deliveries', async () => {
    const file = await input();
    const inline = await runCli(args('inline', file), { env: { SVC_PREPARE_WORKER: 'off' } });
    sim.reset();
    const worker = await runCli(args('worker', file), { env: { SVC_PREPARE_WORKER: 'on' } });
    expect(worker.code, worker.stderr).toBe(2);
    const pick = (r: typeof inline) => {
      const { durationMs: _d, runId: _r, ledger: _l, rejects: _j, ...rest } = summaryOf(r);
      return rest;
    };
    expect(pick(worker)).toEqual(pick(inline));
    expect(summaryOf(worker)).toMatchObject({ read: 3000, rejected: 3, sent: 2997 });
    const lines = async (name: string) =>
      (await readFile(join(dir, `${name}.rejects`), 'utf8'))
        .trim()
        .split('\n')
        .map((l) => {
          const { source, line, errors } = JSON.parse(l);
          return { source, line, errors };
        });
    expect(await lines('worker')).toEqual(await lines('inline'));
    expect((await lines('worker')).map((l) => l.line)).toEqual([12, 1502, 3001]);
    expect(sim.stats().transactions).toMatchObject({ distinct: 2997, duplicates: 0 });
  });

  it('drains on SIGTERM and the rerun completes without a duplicate', async () => {
    sim.setFaults({ latencyMs: 30 });
    const file = await input();
    const run = startCli([...args('sig', file).slice(0, -1), '--concurrency', '2', file], {
      env: { SVC_PREPARE_WORKER: 'on' },
    });
    await waitFor(() => sim.stats().transactions.accepted >= 300, run.child);
    run.child.kill('SIGTERM');
    const r = await run.done;
    expect(r.code).toBe(143);
    const rerun = await runCli(args('sig', file), { env: { SVC_PREPARE_WORKER: 'on' } });
    expect(rerun.code).toBe(2);
    expect(sim.stats().transactions).toMatchObject({ distinct: 2997, duplicates: 0 });
  });
});
