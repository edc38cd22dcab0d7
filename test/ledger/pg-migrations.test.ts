// The ledger's schema on a real PostgreSQL: created on a fresh database, recorded with its version, a no-op when
// run again, applied once when several workers start together, migrated on first use, and a newer one refused.
import { describe, expect, it } from 'vitest';
import { connectPg } from '../../src/ledger/postgres/db.ts';
import { LEDGER_RELATIONS } from '../../src/ledger/postgres/grants.ts';
import {
  LATEST_VERSION,
  MIGRATIONS,
  type Migration,
  migrate,
  schemaVersion,
} from '../../src/ledger/postgres/migrations.ts';
import { connectLedgerDb } from '../../src/ledger/postgres/schema-check.ts';
import { openPgLedgerStore } from '../../src/ledger/postgres/store.ts';
import { resolvePgTarget } from '../../src/ledger/postgres/url.ts';
import { createLogger } from '../../src/log.ts';
import { pgConnection, pgRef } from '../helpers/ledger-ref.ts';
import { usePostgres } from '../helpers/postgres.ts';

const pgs = usePostgres();
const logger = createLogger({ level: 'silent', pretty: false });
const connect = (url: string) => connectPg(resolvePgTarget(url), { logger, connection: pgConnection() });
const dbName = (url: string) => url.split('/').pop() as string;

describe('ledger schema migrations', () => {
  it('fresh database: applies every migration and records the version; again: a no-op', async () => {
    const url = await pgs.createDatabase();
    const db = await connect(url);
    try {
      expect(await schemaVersion(db)).toBe(0);
      const first = await migrate(db);
      expect(first).toEqual({
        from: 0,
        to: LATEST_VERSION,
        applied: MIGRATIONS.map((m) => ({ version: m.version, name: m.name })),
      });
      expect(await schemaVersion(db)).toBe(LATEST_VERSION);
      const tables = await pgs.sql(
        dbName(url),
        `SELECT table_name FROM information_schema.tables WHERE table_schema = 'svc_ingest' ORDER BY table_name`,
      );
      expect(tables.map((t) => t.table_name)).toEqual([
        'batches',
        'destinations',
        'inputs',
        'migrations',
        'partitions',
        'ticket_events',
        'transaction_states',
        'transactions',
        'workers',
      ]);
      // `ledger grant` knows every table of the schema (a migration that adds one adds it to grants.ts).
      expect([...LEDGER_RELATIONS].sort()).toEqual(tables.map((t) => t.table_name));
      expect(await migrate(db)).toEqual({ from: LATEST_VERSION, to: LATEST_VERSION, applied: [] });
      const rows = await pgs.sql(
        dbName(url),
        'SELECT version, name FROM svc_ingest.migrations ORDER BY version',
      );
      expect(rows).toEqual(MIGRATIONS.map((m) => ({ version: m.version, name: m.name })));
    } finally {
      await db.close();
    }
  });

  it('migration 5 moves the tickets of the shared schema svc_ingest_tickets into the default ledger only', async () => {
    const url = await pgs.createDatabase();
    const db = dbName(url);
    for (const schema of ['svc_ingest', 'feed_x']) {
      const c = await connect(`${url}?schema=${schema}`);
      try {
        await migrate(
          c,
          MIGRATIONS.filter((m) => m.version < 5),
        );
      } finally {
        await c.close();
      }
    }
    await pgs.sql(db, 'CREATE SCHEMA svc_ingest_tickets');
    await pgs.sql(
      db,
      `CREATE TABLE svc_ingest_tickets.events (seq bigserial PRIMARY KEY, source_ticket_id text NOT NULL, kind text NOT NULL,
         update_key text UNIQUE, body jsonb NOT NULL, stored_at timestamptz NOT NULL DEFAULT now())`,
    );
    await pgs.sql(
      db,
      `INSERT INTO svc_ingest_tickets.events (source_ticket_id, kind, update_key, body)
       VALUES ('7', 'create', NULL, '{"kind":"create"}'), ('7', 'update', 'k1', '{"kind":"update"}')`,
    );
    for (const schema of ['svc_ingest', 'feed_x']) {
      const c = await connect(`${url}?schema=${schema}`);
      try {
        expect(await migrate(c)).toMatchObject({ from: 4, to: LATEST_VERSION });
      } finally {
        await c.close();
      }
    }
    const count = async (schema: string) =>
      (await pgs.sql<{ n: number }>(db, `SELECT count(*)::int AS n FROM ${schema}.ticket_events`))[0]?.n;
    expect(await count('svc_ingest')).toBe(2);
    expect(await count('feed_x')).toBe(0);
  });

  it('workers migrating at the same time apply each migration once', async () => {
    const url = await pgs.createDatabase();
    const dbs = await Promise.all([1, 2, 3, 4].map(() => connect(url)));
    try {
      const results = await Promise.all(dbs.map((db) => migrate(db)));
      expect(results.filter((r) => r.applied.length > 0)).toHaveLength(1);
      expect((await pgs.sql(dbName(url), 'SELECT count(*)::int AS n FROM svc_ingest.migrations'))[0]?.n).toBe(
        MIGRATIONS.length,
      );
    } finally {
      await Promise.all(dbs.map((db) => db.close()));
    }
  });

  it('a later migration is applied on top; a failing one rolls back and leaves the version as it was', async () => {
    const url = await pgs.createDatabase();
    const db = await connect(url);
    try {
      await migrate(db);
      const next: Migration = {
        version: LATEST_VERSION + 1,
        name: 'test column',
        sql: 'ALTER TABLE svc_ingest.workers ADD COLUMN note text',
      };
      const broken: Migration = {
        version: LATEST_VERSION + 2,
        name: 'broken',
        sql: 'ALTER TABLE svc_ingest.nope ADD COLUMN x int',
      };
      await expect(migrate(db, [...MIGRATIONS, next, broken])).rejects.toThrow(/svc_ingest\.nope/);
      expect(await schemaVersion(db)).toBe(LATEST_VERSION + 1);
      expect(await migrate(db, [...MIGRATIONS, next])).toMatchObject({ applied: [] });
    } finally {
      await db.close();
    }
  });

  it('a store migrates on first use, and refuses a schema newer than it knows', async () => {
    const url = await pgs.createDatabase();
    const store = await openPgLedgerStore(pgRef(url), { mode: 'write', resume: true, runId: 'r', logger });
    await store.close();
    const db = await connect(url);
    try {
      expect(await schemaVersion(db)).toBe(LATEST_VERSION);
      await pgs.sql(
        dbName(url),
        `INSERT INTO svc_ingest.migrations (version, name, applied_by) VALUES (${LATEST_VERSION + 5}, 'future', 'x')`,
      );
      await expect(migrate(db)).rejects.toThrow(/schema version \d+, newer than this svc-ingest knows/);
    } finally {
      await db.close();
    }
    await expect(
      openPgLedgerStore(pgRef(url), { mode: 'write', resume: true, runId: 'r', logger }),
    ).rejects.toMatchObject({
      code: 'LEDGER_READ',
      message: expect.stringMatching(/newer than this svc-ingest knows .*upgrade svc-ingest/),
    });
  });
  it('a run starting while another creates the schema waits for it, instead of refusing a version in between', async () => {
    const url = await pgs.createDatabase();
    // A first run part-way through creating the schema: two migrations committed, the migrators' lock held.
    const first = await connectPg(resolvePgTarget(url), { logger, connection: pgConnection({ poolMax: 1 }) });
    try {
      await migrate(first, MIGRATIONS.slice(0, 2));
      await first.query('other', 'SELECT pg_advisory_lock(1937138537, 1835624306)');
      let settled = false;
      const second = connectLedgerDb(pgRef(url), { logger, write: true }).finally(() => {
        settled = true;
      });
      await new Promise((r) => setTimeout(r, 300));
      expect(settled).toBe(false);
      // The first run finishes (the lock is its session's: taken again by its own migrate) and lets go.
      await migrate(first);
      await first.query('other', 'SELECT pg_advisory_unlock(1937138537, 1835624306)');
      const { db, hasSchema } = await second;
      expect(hasSchema).toBe(true);
      expect(await schemaVersion(db)).toBe(LATEST_VERSION);
      await db.close();
    } finally {
      await first.close();
    }
  });
});
