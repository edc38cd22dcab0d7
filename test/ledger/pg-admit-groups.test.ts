// A `send` on the PostgreSQL ledger hands the store groups of several batches (the store's `admitBatches`): one
// claim statement for the ids of about four batches, where the file ledger's groups stay one batch each. Batches
// still form exactly as before (50 records each, the last one the rest), every record is delivered once, and the
// rerun skips them all through the same groups. New ids are claimed by a plain INSERT; one that another worker
// inserts meanwhile undoes that statement, and the group is claimed again through ON CONFLICT.
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { BatchItem } from '../../src/batch/batcher.ts';
import { openPgLedgerStore } from '../../src/ledger/postgres/store.ts';
import { createLogger } from '../../src/log.ts';
import { deliveryCounts, FAST, workdir, writeNdjson } from '../faults/helpers.ts';
import { runCliHere, summaryOf } from '../helpers/cli.ts';
import { pgRef } from '../helpers/ledger-ref.ts';
import { usePostgres } from '../helpers/postgres.ts';
import { useSimulator } from '../helpers/simulator.ts';

const pgs = usePostgres();
const sim = useSimulator({ seed: 33 }, 'reset');

/** The store's own count of admit() calls and statements, from its closing log line. */
function closedLine(stderr: string): { admits: number; trips: { admit: number; record: number } } {
  const line = stderr
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .find((l) => l.event === 'ledger.pg.closed');
  expect(line, stderr).toBeDefined();
  return line as unknown as { admits: number; trips: { admit: number; record: number } };
}

describe('send on the PostgreSQL ledger: admit groups of several batches', () => {
  it('claims about four batches per admit, batches of 50 as before, every record once', async () => {
    const url = await pgs.createDatabase();
    const db = url.split('/').pop() as string;
    const w = await workdir('pg-admit-groups');
    const file = join(w.dir, 'in.ndjson');
    const ids = await writeNdjson(file, 1010, 'grp');
    const args = ['send', ...FAST, '--concurrency', '4', '--ledger', url, file];
    const env = w.env(sim, { SVC_LOG_LEVEL: 'info' });

    const first = await runCliHere(args, { env });
    expect(first.code, first.stderr).toBe(0);
    expect(summaryOf(first)).toMatchObject({ read: 1010, sent: 1010, skipped: 0, failed: 0 });
    expect(deliveryCounts(sim, ids)).toMatchObject({ missing: 0, duplicated: 0, extra: 0 });
    // 21 batches: 1010 records in groups of 200 (the last 10 at the end of the input) = 6 admit() calls, where
    // groups of one batch made 21; coalescing can only lower the statements below that.
    const c = closedLine(first.stderr);
    expect(c.admits).toBe(6);
    expect(c.trips.admit).toBeLessThanOrEqual(6);
    const sizes = await pgs.sql<{ n: number; k: number }>(
      db,
      `SELECT cardinality(transaction_ids) AS n, count(*)::int AS k FROM svc_ingest.batches
       WHERE status = 'acked' GROUP BY 1 ORDER BY 1`,
    );
    expect(sizes).toEqual([
      { n: 10, k: 1 },
      { n: 50, k: 20 },
    ]);

    const rerun = await runCliHere(args, { env });
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(summaryOf(rerun)).toMatchObject({ read: 1010, sent: 0, skipped: 1010 });
    expect(closedLine(rerun.stderr).admits).toBe(6);
    expect(deliveryCounts(sim, ids)).toMatchObject({ missing: 0, duplicated: 0, extra: 0 });
  });
});

describe('the claim of new ids', () => {
  const logger = createLogger({ level: 'silent', pretty: false });
  const items = (ids: string[]): BatchItem[] =>
    ids.map((id, i) => ({ id, json: '{}', source: 'in.csv', line: i + 2 }));

  it('an id another worker inserts while the claim waits is skipped as elsewhere; the rest are claimed', async () => {
    const url = await pgs.createDatabase();
    const a = await openPgLedgerStore(pgRef(url, { leaseMs: 60_000 }), {
      mode: 'write',
      resume: true,
      runId: 'a',
      logger,
    });
    const b = await openPgLedgerStore(pgRef(url, { leaseMs: 60_000 }), {
      mode: 'write',
      resume: true,
      runId: 'b',
      logger,
    });
    const other = new pg.Client({ connectionString: url });
    await other.connect();
    try {
      // Worker b's claim of x-1, not yet committed: a's plain INSERT of x-1 waits for it, then finds it taken.
      await other.query('BEGIN');
      await other.query(
        `INSERT INTO svc_ingest.transactions (transaction_id, destination_no, claim_worker, claim_no, updated_at)
         VALUES ('x-1', 1, $1, nextval('svc_ingest.batch_seq'), now())`,
        [b.session?.workerNo],
      );
      const admitted = a.admit(items(['x-0', 'x-1', 'x-2']));
      await new Promise((r) => setTimeout(r, 300));
      await other.query('COMMIT');
      const got = await admitted;
      expect(got.send.map((i) => i.id)).toEqual(['x-0', 'x-2']);
      expect(got.skipped.map((s) => [s.item.id, s.reason])).toEqual([['x-1', 'elsewhere']]);
      expect(a.stats().claimRetries).toBe(1);
      // Ids with a row (acked, claimed, failed) and new ones in one group: the same answers as before.
      await a.record({
        batchId: 'b0',
        runId: 'a',
        status: 'acked',
        requestId: 'q',
        clientRequestId: 'c',
        attempts: 1,
        httpStatus: 200,
        items: items(['x-0']),
      });
      const mixed = await a.admit(items(['x-0', 'x-1', 'x-2', 'x-3']));
      expect(mixed.send.map((i) => i.id)).toEqual(['x-2', 'x-3']);
      expect(mixed.skipped.map((s) => [s.item.id, s.reason])).toEqual([
        ['x-0', 'acked'],
        ['x-1', 'elsewhere'],
      ]);
      expect(a.stats().claimRetries).toBe(1);
    } finally {
      await other.end();
      await a.close();
      await b.close();
    }
  });
});
