// Poison records: a record the service keeps refusing fails alone (split in halves), within a stated request bound —
// on the file ledger and on the PostgreSQL ledger.
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCliHere } from '../helpers/cli.ts';
import { usePostgres } from '../helpers/postgres.ts';
import { useSimulator } from '../helpers/simulator.ts';
import { makeTx, ndjsonOf, range } from '../helpers/transactions.ts';
import {
  deliveryCounts,
  FAST,
  idsWith,
  kindName,
  ledgerKinds,
  report,
  STACK,
  settles,
  summary,
  workdir,
} from './helpers.ts';

/**
 * The bound on extra requests when one poison record sits in a batch of n (dispatcher.ts): the batch is halved
 * down to the record, at most ⌈log2 n⌉ levels, two sub-batches a level, each at most splitRetries + 1 attempts.
 */
function extraBound(n: number, splitRetries: number): number {
  return 2 * Math.ceil(Math.log2(n)) * (splitRetries + 1);
}

const sim = useSimulator({ seed: 66 }, 'reset');
const pgs = usePostgres();
const KINDS = ledgerKinds(pgs).map((kind) => [kindName(kind), kind] as const);

const sends = () => sim.stats().requests.byPath['/v2/data/transactions'] ?? 0;

describe.each(KINDS)(
  'poison records (simulator: any batch holding the id gets 500, always) [%s ledger]',
  (kindLabel, kind) => {
    const cases = [
      { name: '500 records, concurrency 4', records: 500, poisonAt: 123, concurrency: 4, maxRetries: 3 },
      { name: '500 records, concurrency 1', records: 500, poisonAt: 321, concurrency: 1, maxRetries: 3 },
      {
        name: 'a single batch of 20 (the whole run)',
        records: 20,
        poisonAt: 7,
        concurrency: 4,
        maxRetries: 3,
      },
    ];
    for (const c of cases) {
      it(`${c.name}: the poison record fails alone with its own error; the rest acked once; exit 3`, async () => {
        const w = await workdir('poison', kind);
        const txs = range(c.records).map((i) => makeTx(i, 'pz'));
        const poison = txs[c.poisonAt]!.transactionId;
        const file = join(w.dir, 'in.ndjson');
        await writeFile(file, ndjsonOf(txs));
        sim.setFaults({ poison: [poison] });
        const splitRetries = 1;
        const r = await runCliHere(
          [
            'send',
            ...FAST,
            '--concurrency',
            String(c.concurrency),
            '--max-retries',
            String(c.maxRetries),
            '--split-retries',
            String(splitRetries),
            file,
          ],
          { env: w.env(sim) },
        );
        expect(r.code, r.stderr).toBe(3);
        expect(r.stderr).not.toMatch(STACK);
        const s = summary(r);
        expect(s).toMatchObject({ read: c.records, sent: c.records - 1, failed: 1, failedBatches: 1 });
        expect(settles(s)).toBe(true);

        const { rows, bad } = await w.readLedger();
        expect(bad).toBe(0);
        const failed = rows.filter((l) => l.status === 'failed');
        expect(failed).toHaveLength(1);
        expect(failed[0]!.transactionIds).toEqual([poison]);
        expect(failed[0]!.httpStatus).toBe(500);
        expect(failed[0]!.error).toMatch(/500|Internal/);
        expect(failed[0]!.attempts).toBe(splitRetries + 1);
        expect(idsWith(rows, 'acked').size).toBe(c.records - 1);

        const others = txs.map((t) => t.transactionId).filter((id) => id !== poison);
        expect(deliveryCounts(sim, others)).toEqual({
          missing: 0,
          once: others.length,
          duplicated: 0,
          extra: 0,
        });
        expect(sim.deliveries().get(poison) ?? 0).toBe(0);

        // Requests: one per clean batch, maxRetries + 1 for the poisoned batch, then the split's extra requests.
        const batchSize = Math.min(50, c.records);
        const batches = Math.ceil(c.records / 50);
        const extra = sends() - (batches - 1) - (c.maxRetries + 1);
        const bound = extraBound(batchSize, splitRetries);
        expect(extra).toBeGreaterThan(0);
        expect(extra).toBeLessThanOrEqual(bound);
        report(`poison (500) [${kindLabel} ledger]: ${c.name}`, {
          records: c.records,
          acked: s.sent,
          failed: s.failed,
          splits: s.splits,
          extraRequests: extra,
          bound,
          duplicates: 0,
          exit: r.code,
        });
      });
    }
  },
);

describe.each(KINDS)(
  'a 400 ValidationException from the service for one record [%s ledger]',
  (kindLabel, kind) => {
    // No record passes our validation and fails the simulator's (the simulator is as strict as we are or
    // looser), so a small real server plays a stricter service: it refuses any batch holding a marked id.
    let server: Server;
    let url: string;
    const refused = new Set<string>();
    const delivered = new Map<string, number>();
    let requests = 0;

    beforeAll(async () => {
      server = createServer((req, res) => {
        // send's connection check (HEAD) is answered as a service would answer a method it does not serve.
        if (req.method !== 'POST') {
          res.writeHead(405, { allow: 'POST' }).end();
          return;
        }
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          requests++;
          const requestId = randomUUID();
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
            transactions: Array<{ transactionId: string }>;
          };
          const bad = body.transactions.findIndex((t) => refused.has(t.transactionId));
          res.setHeader('content-type', 'application/json');
          if (bad >= 0) {
            res.statusCode = 400;
            res.end(
              JSON.stringify({
                type: 'ValidationException',
                title: 'Validation failed',
                status: 400,
                validationErrors: [
                  { field: `transactions[${bad}].paymentNetworkMerchantId`, message: 'unknown merchant' },
                ],
                requestId,
              }),
            );
            return;
          }
          for (const t of body.transactions)
            delivered.set(t.transactionId, (delivered.get(t.transactionId) ?? 0) + 1);
          res.end(JSON.stringify({ requestId }));
        });
      });
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    });

    it('is not retried, is split down to the record, which fails alone with the 400 in the ledger; exit 3', async () => {
      const w = await workdir('poison400', kind);
      const txs = range(200).map((i) => makeTx(i, 'v4'));
      const marked = txs[77]!.transactionId;
      refused.add(marked);
      const file = join(w.dir, 'in.ndjson');
      await writeFile(file, ndjsonOf(txs));
      const r = await runCliHere(['send', ...FAST, '--concurrency', '2', file], {
        env: { ...w.env(sim), SVC_BASE_URL: url },
      });
      expect(r.code, r.stderr).toBe(3);
      const s = summary(r);
      expect(s).toMatchObject({ read: 200, sent: 199, failed: 1, retries: 0 });
      const { rows } = await w.readLedger();
      const failed = rows.filter((l) => l.status === 'failed');
      expect(failed).toHaveLength(1);
      expect(failed[0]).toMatchObject({ transactionIds: [marked], httpStatus: 400, attempts: 1 });
      expect(failed[0]!.error).toMatch(/Validation/);
      expect(delivered.size).toBe(199);
      expect([...delivered.values()].every((n) => n === 1)).toBe(true);
      // 4 batches, one attempt each (a 400 is final), plus at most 2·⌈log2 50⌉ single-attempt sub-batches.
      const extra = requests - 4;
      expect(extra).toBeLessThanOrEqual(extraBound(50, 0));
      report(`poison (400 ValidationException) [${kindLabel} ledger]`, {
        records: 200,
        acked: s.sent,
        failed: s.failed,
        extraRequests: extra,
        bound: extraBound(50, 0),
        exit: r.code,
      });
    });
  },
);
