// The worker-pool path (the file split into chunks, read → map → validate on several threads) gives the same
// results as the inline path: same summary, same rejects with the same lines, same batches in the ledger, same
// deliveries, and it drains on SIGTERM. Small chunks over 3 threads, so every run crosses many boundaries.
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { runCliHere, startCli, summaryOf, waitFor } from '../helpers/cli.ts';
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
  // Quoted values, some across lines: chunk boundaries must fall between records only.
  for (let i = 0; i < 3000; i += 7) txs[i]!.paymentNetworkMerchant = `"Joe's Pizza, ""Inc."",\nBack ${i}"`;
  // A ragged row (a reject from the reader) in the middle.
  const text = csvOf(txs as never).replace(/\nwk-00002000,[^\n]*\n/, '\nwk-00002000,ragged\n');
  const file = join(dir, 'in.csv');
  await writeFile(file, text);
  return file;
}

/** Many chunks (about 20 kB each) on 3 threads. */
const POOL = { SVC_PREPARE_WORKER: 'on', SVC_PREPARE_CHUNK_BYTES: '20000', SVC_PREPARE_THREADS: '3' };

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

describe('prepare on a pool of worker threads', () => {
  it('matches the inline path: summary, reject lines, deliveries', async () => {
    const file = await input();
    const inline = await runCliHere(args('inline', file), { env: { SVC_PREPARE_WORKER: 'off' } });
    sim.reset();
    const worker = await runCliHere(args('worker', file), { env: POOL });
    expect(worker.code, worker.stderr).toBe(2);
    const pick = (r: typeof inline) => {
      const { durationMs: _d, runId: _r, ledger: _l, rejects: _j, ...rest } = summaryOf(r);
      return rest;
    };
    expect(pick(worker)).toEqual(pick(inline));
    expect(summaryOf(worker)).toMatchObject({ read: 3000, rejected: 4, sent: 2996 });
    const lines = async (name: string) =>
      (await readFile(join(dir, `${name}.rejects`), 'utf8'))
        .trim()
        .split('\n')
        .map((l) => {
          const { source, line, errors } = JSON.parse(l);
          return { source, line, errors };
        });
    expect(await lines('worker')).toEqual(await lines('inline'));
    // Record i starts on line 2 + i + (records before it with a two-line value).
    const at = (i: number) => 2 + i + Math.ceil(i / 7);
    expect((await lines('worker')).map((l) => l.line)).toEqual([at(10), at(1500), at(2000), at(2999)]);
    expect(sim.stats().transactions).toMatchObject({ distinct: 2996, duplicates: 0 });
    // The same batches (ids and line ranges), whatever order they were acknowledged in.
    const batches = async (name: string) =>
      (await readFile(join(dir, `${name}.ledger`), 'utf8'))
        .trim()
        .split('\n')
        .map((l) => {
          const { transactionIds, lines: range } = JSON.parse(l);
          return JSON.stringify([range, transactionIds]);
        })
        .sort();
    expect(await batches('worker')).toEqual(await batches('inline'));
  });

  it('drains on SIGTERM and the rerun completes without a duplicate', async () => {
    sim.setFaults({ latencyMs: 30 });
    const file = await input();
    const run = startCli([...args('sig', file).slice(0, -1), '--concurrency', '2', file], {
      env: POOL,
    });
    await waitFor(() => sim.stats().transactions.accepted >= 300, run.child);
    run.child.kill('SIGTERM');
    const r = await run.done;
    expect(r.code).toBe(143);
    const rerun = await runCliHere(args('sig', file), { env: POOL });
    expect(rerun.code).toBe(2);
    expect(sim.stats().transactions).toMatchObject({ distinct: 2996, duplicates: 0 });
  });
});
