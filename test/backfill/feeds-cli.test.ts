// Feeds sharing one PostgreSQL database stay apart, through the real CLI: each feed names its ledger (the URL's
// ?schema= or ledger.name), and one feed never sees, skips, claims or sends another's ids or partitions — `send` and
// `backfill`, in both orders. In one ledger, a backfill planned for one destination is never claimed by a worker
// sending to another.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Simulator } from '../../src/simulator/index.ts';
import { deliveryCounts, FAST, summary } from '../faults/helpers.ts';
import { dbName, plan, runWorker, workerSummary } from '../helpers/backfill.ts';
import { runCliHere } from '../helpers/cli.ts';
import { usePostgres } from '../helpers/postgres.ts';
import { useSimulator } from '../helpers/simulator.ts';
import { makeTx, ndjsonOf, range } from '../helpers/transactions.ts';

const pgs = usePostgres();
const simA = useSimulator({ seed: 31 }, 'reset');
const simB = useSimulator({ seed: 32 }, 'reset');

/** Feed A's 300 ids and feed B's 300, of which 150 are A's too (the ids overlap, the feeds do not). */
async function inputs(dir: string): Promise<{ a: string; b: string; idsA: string[]; idsB: string[] }> {
  const txA = range(300).map((i) => makeTx(i, 'fa'));
  const txB = [...range(150).map((i) => makeTx(i, 'fa')), ...range(150).map((i) => makeTx(i, 'fb'))];
  const a = join(dir, 'a.ndjson');
  const b = join(dir, 'b.ndjson');
  await writeFile(a, ndjsonOf(txA));
  await writeFile(b, ndjsonOf(txB));
  return { a, b, idsA: txA.map((t) => t.transactionId), idsB: txB.map((t) => t.transactionId) };
}

const feedUrl = (url: string, name: string) => `${url}?schema=${name}`;

describe('two feeds in one PostgreSQL database', () => {
  it.each([
    ['A then B', ['A', 'B']],
    ['B then A', ['B', 'A']],
  ])('send, %s: each feed sends all of its own records to its own service', async (_, order) => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-feeds-'));
    const url = await pgs.createDatabase();
    const { a, b, idsA, idsB } = await inputs(dir);
    const feeds = {
      // Feed A names its ledger in the URL, feed B in the configuration (env SVC_LEDGER_NAME).
      A: { sim: simA, args: ['--ledger', feedUrl(url, 'feed_a'), a], env: {} },
      B: { sim: simB, args: ['--ledger', url, b], env: { SVC_LEDGER_NAME: 'feed_b' } },
    } as const;
    for (const f of order as Array<'A' | 'B'>) {
      const feed = feeds[f];
      const r = await runCliHere(['send', ...FAST, ...feed.args], {
        env: {
          SVC_BASE_URL: feed.sim.url,
          SVC_REJECTS_PATH: join(dir, `rejects-${f}.ndjson`),
          ...feed.env,
        },
      });
      expect(r.code, r.stderr).toBe(0);
      expect(summary(r)).toMatchObject({ read: 300, sent: 300, skipped: 0 });
    }
    expect(deliveryCounts(simA, idsA)).toMatchObject({ missing: 0, duplicated: 0 });
    expect(deliveryCounts(simB, idsB)).toMatchObject({ missing: 0, duplicated: 0 });
    expect(simA.deliveries().size).toBe(300);
    expect(simB.deliveries().size).toBe(300);
    const counts = await pgs.sql(
      dbName(url),
      `SELECT (SELECT count(*)::int FROM feed_a.transaction_states WHERE state = 'acked') AS a,
              (SELECT count(*)::int FROM feed_b.transaction_states WHERE state = 'acked') AS b,
              to_regclass('svc_ingest.transactions') IS NULL AS no_default`,
    );
    expect(counts).toEqual([{ a: 300, b: 300, no_default: true }]);
  });

  it.each([
    ['A then B', ['A', 'B']],
    ['B then A', ['B', 'A']],
  ])('backfill, %s: a worker claims only its own feed’s partitions', async (_, order) => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-feeds-bf-'));
    const url = await pgs.createDatabase();
    const { a, b, idsA, idsB } = await inputs(dir);
    const feeds: Record<'A' | 'B', { sim: Simulator; url: string; file: string }> = {
      A: { sim: simA, url: feedUrl(url, 'feed_a'), file: a },
      B: { sim: simB, url: feedUrl(url, 'feed_b'), file: b },
    };
    // Both plan before either works: each feed's worker finds the other's plan in the same database.
    for (const f of ['A', 'B'] as const)
      await plan(feeds[f].url, [feeds[f].file], 4000, ['--base-url', feeds[f].sim.url]);
    for (const f of order as Array<'A' | 'B'>) {
      const r = await runWorker(feeds[f].url, `w-${f}`, { sim: feeds[f].sim, dir });
      expect(r.code, r.stderr).toBe(0);
      const s = workerSummary(r);
      expect(s).toMatchObject({ read: 300, sent: 300, skipped: 0 });
      expect(s.partitions.done).toBeGreaterThan(1);
    }
    expect(deliveryCounts(simA, idsA)).toMatchObject({ missing: 0, duplicated: 0 });
    expect(deliveryCounts(simB, idsB)).toMatchObject({ missing: 0, duplicated: 0 });
    expect(simA.deliveries().size).toBe(300);
    expect(simB.deliveries().size).toBe(300);
  });

  it('a role per feed with the grants of ledger grant sends on its own schema and cannot touch the other', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-feeds-role-'));
    const url = await pgs.createDatabase();
    const db = dbName(url);
    const { a, idsA } = await inputs(dir);
    for (const feed of ['feed_a', 'feed_b'])
      expect((await runCliHere(['ledger', 'migrate', '--ledger', feedUrl(url, feed)])).code).toBe(0);
    const role = `sender_${db}`.slice(0, 60);
    await pgs.sql(db, `CREATE ROLE ${role} LOGIN PASSWORD 'feed-a-secret'`);
    const granted = await runCliHere([
      'ledger',
      'grant',
      '--ledger',
      feedUrl(url, 'feed_a'),
      '--role',
      role,
      '--for',
      'send,read',
      '--apply',
      '--json',
    ]);
    expect(granted.code, granted.stderr).toBe(0);
    expect(JSON.parse(granted.stdout)).toMatchObject({ schema: 'feed_a', role, applied: true });
    const u = new URL(url);
    u.username = role;
    u.password = 'feed-a-secret';
    const env = { SVC_BASE_URL: simA.url, SVC_REJECTS_PATH: join(dir, 'rejects.ndjson') };
    const sent = await runCliHere(['send', ...FAST, '--ledger', feedUrl(u.toString(), 'feed_a'), a], { env });
    expect(sent.code, sent.stderr).toBe(0);
    expect(summary(sent)).toMatchObject({ sent: 300 });
    expect(deliveryCounts(simA, idsA)).toMatchObject({ missing: 0, duplicated: 0 });
    const status = await runCliHere([
      'ledger',
      'status',
      '--json',
      '--ledger',
      feedUrl(u.toString(), 'feed_a'),
    ]);
    expect(status.code, status.stderr).toBe(0);
    const other = await runCliHere(['send', ...FAST, '--ledger', feedUrl(u.toString(), 'feed_b'), a], {
      env,
    });
    expect(other.code).toBe(1);
    expect(other.stderr).toMatch(/permission denied/);
    expect(simA.deliveries().size).toBe(300);
  });

  it('one ledger, plans for A and for B: each destination’s worker does its own partitions and ends', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-feeds-two-'));
    const url = await pgs.createDatabase();
    const { a, b, idsA, idsB } = await inputs(dir);
    await plan(url, [a], 4000, ['--base-url', simA.url]);
    // Nothing acknowledged yet: nobody holds the ledger, B's plan needs no option.
    await plan(url, [b], 4000, ['--base-url', simB.url]);
    const wa = await runWorker(url, 'w-a', { sim: simA, dir });
    expect(wa.code, wa.stderr).toBe(0);
    expect(workerSummary(wa)).toMatchObject({ read: 300, sent: 300 });
    // Now A has acknowledged: a plan for yet another destination is refused without the option.
    const c = join(dir, 'c.ndjson');
    await writeFile(c, ndjsonOf(range(10).map((i) => makeTx(i, 'fc'))));
    const refused = await runCliHere([
      'backfill',
      'plan',
      '--ledger',
      url,
      '--base-url',
      'http://127.0.0.1:9/c',
      c,
    ]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('LEDGER_DESTINATION');
    const wb = await runWorker(url, 'w-b', { sim: simB, dir });
    expect(wb.code, wb.stderr).toBe(0);
    expect(workerSummary(wb)).toMatchObject({ read: 300, sent: 300, skipped: 0 });
    expect(deliveryCounts(simA, idsA)).toMatchObject({ missing: 0, duplicated: 0 });
    expect(deliveryCounts(simB, idsB)).toMatchObject({ missing: 0, duplicated: 0 });
    expect(simA.deliveries().size).toBe(300);
    expect(simB.deliveries().size).toBe(300);
  });

  it('one ledger, a backfill planned for A: a worker sending to B is refused, with or without --new-destination', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-feeds-one-'));
    const url = await pgs.createDatabase();
    const { a } = await inputs(dir);
    await plan(url, [a], 4000, ['--base-url', simA.url]);
    for (const extra of [[], ['--new-destination']]) {
      const r = await runWorker(url, 'w-b', { sim: simB, dir, args: extra });
      expect(r.code, r.stderr).toBe(1);
      const last = r.stderr.trim().split('\n').pop() ?? '';
      expect(last).toContain('LEDGER_DESTINATION');
      expect(last).toContain(simA.url);
      expect(last).toContain(simB.url);
    }
    expect(simB.deliveries().size).toBe(0);
    const open = await pgs.sql(
      dbName(url),
      `SELECT count(*)::int AS n FROM svc_ingest.partitions WHERE state = 'pending' AND claims = 0`,
    );
    expect((open[0] as { n: number }).n).toBeGreaterThan(1);
    // A's own worker then does it all.
    const r = await runWorker(url, 'w-a', { sim: simA, dir });
    expect(r.code, r.stderr).toBe(0);
    expect(simA.deliveries().size).toBe(300);
  });
});
