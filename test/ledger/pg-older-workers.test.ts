// A worker of the previous version (schema 6) still running when its ledger is migrated to schema 7 — a backfill or
// a night whose hosts are upgraded one at a time. That version reads an id as acknowledged by its row alone
// (`acked_seq`) and takes a row's claim without numbering it; its claim statement is below, as it shipped. While such a
// worker may run, this version records its outcomes row by row, so the older one neither sends again what this one
// acknowledged nor has its claims read as over; once it has stopped, outcomes go back to one row per batch.
import { describe, expect, it } from 'vitest';
import type { BatchItem } from '../../src/batch/batcher.ts';
import { connectPg } from '../../src/ledger/postgres/db.ts';
import { MIGRATIONS, migrate } from '../../src/ledger/postgres/migrations.ts';
import { openPgLedgerStore } from '../../src/ledger/postgres/store.ts';
import { resolvePgTarget } from '../../src/ledger/postgres/url.ts';
import { createLogger } from '../../src/log.ts';
import { dbName } from '../helpers/backfill.ts';
import { runCliHere } from '../helpers/cli.ts';
import { pgConnection, pgRef } from '../helpers/ledger-ref.ts';
import { ids, items, outcome } from '../helpers/pg-outcomes.ts';
import { usePostgres } from '../helpers/postgres.ts';
import { SCHEMA6_CLAIM_SQL, SCHEMA6_REGISTER_SQL } from '../helpers/schema6.ts';

const pgs = usePostgres();
const logger = createLogger({ level: 'silent', pretty: false });
const open = (url: string, runId: string, heartbeatMs?: number) =>
  openPgLedgerStore(pgRef(url, { leaseMs: 60_000 }), {
    mode: 'write',
    resume: true,
    runId,
    logger,
    heartbeatMs,
  });

/**
 * A ledger at schema 6 with a worker of that version registered as it registered itself (no claims_from), its lease
 * `lease` from now, then migrated to 7 under it. Returns the database's name and that worker's number.
 */
async function migratedUnderAnOlderWorker(
  url: string,
  lease: string,
): Promise<{ db: string; older: number }> {
  const conn = await connectPg(resolvePgTarget(url), { logger, connection: pgConnection() });
  try {
    await migrate(
      conn,
      MIGRATIONS.filter((m) => m.version <= 6),
    );
    const [w] = await pgs.sql<{ worker_no: number }>(dbName(url), SCHEMA6_REGISTER_SQL, ['v6', 1, lease]);
    expect(await migrate(conn)).toMatchObject({ from: 6, to: 7 });
    return { db: dbName(url), older: w?.worker_no as number };
  } finally {
    await conn.close();
  }
}

/** A worker of the previous version registering on a ledger already at schema 7, as it registers (no claims_from). */
async function registerLate(db: string): Promise<number> {
  const [w] = await pgs.sql<{ worker_no: number }>(db, SCHEMA6_REGISTER_SQL, ['v6-late', 2, '1 hour']);
  return w?.worker_no as number;
}

/** What the older worker's claim statement leaves it to send, of `its`. */
async function olderClaims(db: string, older: number, its: readonly BatchItem[]): Promise<string[]> {
  const skipped = await pgs.sql<{ id: string; acked: boolean }>(db, SCHEMA6_CLAIM_SQL, [
    its.map((i) => i.id),
    older,
    true,
    1,
  ]);
  const out = new Set(skipped.map((r) => r.id));
  return its.map((i) => i.id).filter((id) => !out.has(id));
}

/** `ledger status`: the count of older workers in its JSON, and its text's line about them (if any). */
async function olderWorkersInStatus(url: string): Promise<{ json: unknown; line: string | undefined }> {
  const json = await runCliHere(['ledger', 'status', '--json', '--ledger', url]);
  const text = await runCliHere(['ledger', 'status', '--ledger', url]);
  expect([json.code, text.code], json.stderr + text.stderr).toEqual([0, 0]);
  return {
    json: JSON.parse(json.stdout).olderWorkers,
    line: text.stdout.split('\n').find((l) => l.includes('earlier svc-ingest')),
  };
}

const updatedRows = async (db: string): Promise<number> =>
  (
    await pgs.sql<{ n: number }>(
      db,
      `SELECT count(*)::int AS n FROM svc_ingest.transactions WHERE acked_seq IS NOT NULL OR claim_no IS NULL`,
    )
  )[0]?.n ?? -1;

describe('a worker of the previous version still running after the migration to schema 7', () => {
  it('does not send again what this version acknowledged, and its claims of failed ids stay its own', async () => {
    const url = await pgs.createDatabase();
    const { db, older } = await migratedUnderAnOlderWorker(url, '1 hour');
    const store = await open(url, 'new');
    expect(store.session?.olderWorkers).toBe(true);
    const acked = items('a', 40);
    const failed = items('f', 10);
    const got = await store.admit([...acked, ...failed]);
    expect(got.send).toHaveLength(50);
    await store.record(outcome('b-acked', acked));
    await store.record(outcome('b-failed', failed, 'failed'));
    await store.close();

    // The older worker, reading the same input: only the failed ids are its to send.
    expect((await olderClaims(db, older, [...acked, ...failed])).sort()).toEqual(ids(failed));
    // Its claims are live claims for this version: another run skips them, it does not send them a second time.
    const next = await open(url, 'next');
    const again = await next.admit([...acked, ...failed]);
    await next.close();
    expect(again.send).toHaveLength(0);
    expect(again.skipped.filter((x) => x.reason === 'acked')).toHaveLength(40);
    expect(ids(again.skipped.filter((x) => x.reason === 'elsewhere').map((x) => x.item))).toEqual(
      ids(failed),
    );
    // `ledger status` says why outcomes go row by row, in its text and its JSON.
    expect(await olderWorkersInStatus(url)).toEqual({
      json: 1,
      line: 'workers of an earlier svc-ingest (ledger schema 6 or older) still running: 1; until they stop, outcomes are recorded row by row, as they read them',
    });
  });

  // The registration race: the older worker checked the schema before the migration committed and registered after
  // this worker last asked, so this run's first outcomes went out as batch rows alone.
  it('one that registers after this run asked gets the acknowledgements already recorded per batch, at the next record', async () => {
    const url = await pgs.createDatabase();
    const store = await open(url, 'new', 20);
    const db = dbName(url);
    expect(store.session?.olderWorkers).toBe(false);
    const early = items('e', 30);
    await store.admit(early);
    await store.record(outcome('early', early));
    expect(await updatedRows(db)).toBe(0);
    const older = await registerLate(db);
    for (let i = 0; i < 200 && !store.session?.olderWorkers; i++) await new Promise((r) => setTimeout(r, 10));
    expect(store.session?.olderWorkers).toBe(true);
    const late = items('l', 10);
    await store.admit(late);
    await store.record(outcome('late', late));
    expect(await updatedRows(db)).toBe(40);
    await store.close();
    // This worker's lease has ended: the older worker reads every id as acknowledged, none is its to send.
    expect(await olderClaims(db, older, [...early, ...late])).toEqual([]);
  });

  it('one that registers after the last heartbeat gets them at close', async () => {
    const url = await pgs.createDatabase();
    const store = await open(url, 'new');
    const db = dbName(url);
    const acked = items('a', 20);
    const failed = items('f', 5);
    await store.admit([...acked, ...failed]);
    await store.record(outcome('a', acked));
    await store.record(outcome('f', failed, 'failed'));
    const older = await registerLate(db);
    expect(store.session?.olderWorkers).toBe(false);
    await store.close();
    expect((await olderClaims(db, older, [...acked, ...failed])).sort()).toEqual(ids(failed));
    // Without an older worker, the close writes no row: the outcomes stay one row per batch.
    const quiet = await pgs.createDatabase();
    const s2 = await open(quiet, 'quiet');
    const its = items('q', 10);
    await s2.admit(its);
    await s2.record(outcome('q', its));
    await s2.close();
    expect(await updatedRows(dbName(quiet))).toBe(0);
  });

  it('once it has stopped, outcomes are one row per batch again; one gone for more than a day does not count', async () => {
    const url = await pgs.createDatabase();
    const { db } = await migratedUnderAnOlderWorker(url, '1 hour');
    const store = await open(url, 'new', 20);
    try {
      expect(store.session?.olderWorkers).toBe(true);
      const first = await store.admit(items('x', 10));
      await store.record(outcome('x', first.send));
      expect(await updatedRows(db)).toBe(10);
      // It stops (its close ends its lease): the next heartbeat sees it.
      await pgs.sql(
        db,
        `UPDATE svc_ingest.workers SET stopped_at = now(), lease_until = now() WHERE worker_id = 'v6'`,
      );
      for (let i = 0; i < 200 && store.session?.olderWorkers; i++)
        await new Promise((r) => setTimeout(r, 10));
      expect(store.session?.olderWorkers).toBe(false);
      expect(await olderWorkersInStatus(url)).toEqual({ json: undefined, line: undefined });
      const second = await store.admit(items('y', 10));
      await store.record(outcome('y', second.send));
      expect(await updatedRows(db)).toBe(10);
    } finally {
      await store.close();
    }

    // A process of that version killed two days ago (its lease never ended) is not waited for.
    const stale = await pgs.createDatabase();
    await migratedUnderAnOlderWorker(stale, '-2 days');
    const s2 = await open(stale, 'new');
    expect(s2.session?.olderWorkers).toBe(false);
    await s2.close();
  });
});
