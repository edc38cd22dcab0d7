// Connecting to the PostgreSQL ledger and checking its schema before any work: a database without the schema gets
// it (the first write), the schema this build writes is used, a newer one is refused, and an older one is refused
// with one line naming `ledger migrate` and the role that may run it — a run never upgrades a schema that exists
// (the restricted roles of a feed could not, and an upgrade may need a quiet window: docs/postgres.md).
import { SvcIngestError } from '../../errors.ts';
import type { Logger } from '../../log.ts';
import type { PgLedgerRef } from '../ref.ts';
import { connectPg, type PgDb } from './db.ts';
import {
  LATEST_VERSION,
  migrate,
  newerSchemaMessage,
  schemaVersion,
  settledSchemaVersion,
} from './migrations.ts';
import { resolvePgTarget } from './url.ts';

export interface ConnectLedgerOptions {
  logger: Logger;
  signal?: AbortSignal;
  /** A command that writes: a database without the schema gets it; else (read) nothing is created. */
  write: boolean;
}

/** The role that owns the ledger's schema (the one that ran its migrations), or null when unknown. */
async function schemaOwner(db: PgDb): Promise<string | null> {
  try {
    const r = await db.query<{ owner: string }>(
      'other',
      'SELECT pg_get_userbyid(nspowner) AS owner FROM pg_namespace WHERE nspname = $1',
      [db.schema],
    );
    return r.rows[0]?.owner ?? null;
  } catch {
    return null;
  }
}

/**
 * The one line of a run that finds the ledger's schema older than this build: exit 1, never retried by a scheduler
 * (running again changes nothing until someone migrates).
 * @example await pendingMigration(db, 3) // LEDGER_MIGRATION_PENDING: … has schema version 3, older than … run svc-ingest ledger migrate as feed_a_owner …
 */
export async function pendingMigration(db: PgDb, version: number): Promise<SvcIngestError> {
  const owner = await schemaOwner(db);
  const who = owner ? `as the schema's owner (role ${owner})` : "as the schema's owner";
  return new SvcIngestError(
    'LEDGER_MIGRATION_PENDING',
    `the ledger database ${db.location} has schema version ${version}, older than this svc-ingest's ` +
      `${LATEST_VERSION}: run svc-ingest ledger migrate ${who}, then svc-ingest ledger grant for the other roles`,
    { source: db.location, version, latest: LATEST_VERSION, ...(owner ? { owner } : {}) },
  );
}

/**
 * Connect to the ledger `ref` names, as its connection settings say, and check the schema: a database without one gets it when `write` (the first write creates it), an older
 * one is refused (LEDGER_MIGRATION_PENDING), a newer one too (LEDGER_READ). Returns the db and whether the schema
 * exists (read mode on an empty database: false).
 */
export async function connectLedgerDb(
  ref: PgLedgerRef,
  o: ConnectLedgerOptions,
): Promise<{ db: PgDb; hasSchema: boolean }> {
  const target = resolvePgTarget(ref.url, { connection: ref.connection });
  const db = await connectPg(target, { logger: o.logger, connection: ref.connection, signal: o.signal });
  try {
    const readVersion = (read: (d: PgDb) => Promise<number>) =>
      read(db).catch((err: unknown) => {
        throw db.fail('LEDGER_READ', 'cannot read the schema version of', err);
      });
    let version = await readVersion(schemaVersion);
    // Older than this build: unless another process is creating or migrating it right now (workers starting together
    // on an empty database), which is waited for.
    if (version > 0 && version < LATEST_VERSION) version = await readVersion(settledSchemaVersion);
    if (version > LATEST_VERSION)
      throw new SvcIngestError('LEDGER_READ', newerSchemaMessage(db.location, version));
    if (version === LATEST_VERSION) return { db, hasSchema: true };
    if (version > 0) throw await pendingMigration(db, version);
    if (!o.write) return { db, hasSchema: false };
    const r = await migrate(db);
    o.logger.info(
      { event: 'ledger.pg.migrated', ledger: db.location, from: r.from, to: r.to },
      'ledger schema created',
    );
    return { db, hasSchema: true };
  } catch (err) {
    await db.close().catch(() => {});
    throw db.fail(
      o.write ? 'LEDGER_WRITE' : 'LEDGER_READ',
      o.write ? 'cannot create the ledger schema in' : 'cannot read',
      err,
    );
  }
}
