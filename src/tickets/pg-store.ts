// Tickets in the ledger's PostgreSQL database, in a schema of their own (svc_ingest_tickets, created on first use,
// apart from the ledger's migrations): one row per event, a repeated update refused by a unique key.
import { SvcIngestError } from '../errors.ts';
import { connectPg, type PgDb } from '../ledger/postgres/db.ts';
import { resolvePgTarget } from '../ledger/postgres/url.ts';
import { maskDeep } from '../mask.ts';
import type { TicketEvent } from './state.ts';
import type { TicketStore, TicketStoreOptions } from './store-types.ts';

const SCHEMA = `
CREATE SCHEMA IF NOT EXISTS svc_ingest_tickets;
CREATE TABLE IF NOT EXISTS svc_ingest_tickets.events (
  seq bigserial PRIMARY KEY,
  source_ticket_id text NOT NULL,
  kind text NOT NULL,
  update_key text UNIQUE,
  body jsonb NOT NULL,
  stored_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS events_ticket ON svc_ingest_tickets.events (source_ticket_id, seq);`;

async function hasTable(db: PgDb): Promise<boolean> {
  const r = await db.query<{ t: string | null }>(
    'other',
    "SELECT to_regclass('svc_ingest_tickets.events')::text AS t",
  );
  return r.rows[0]?.t != null;
}

export async function openPgTicketStore(url: string, o: TicketStoreOptions): Promise<TicketStore> {
  const target = resolvePgTarget(url, o.passwordFile ? { passwordFile: o.passwordFile } : {});
  const db = await connectPg(target, {
    logger: o.logger,
    maxConnections: Math.min(2, o.poolMax ?? 2),
    ...(o.waitMs !== undefined ? { waitMs: o.waitMs } : {}),
    ...(o.allowPlaintext !== undefined ? { allowPlaintext: o.allowPlaintext } : {}),
  });
  let exists: boolean;
  try {
    if (!o.readOnly) {
      // Two processes creating it at once: the advisory lock makes the second wait and find it made.
      await db.withClient(async (c) => {
        await c.query('SELECT pg_advisory_lock(hashtext($1))', ['svc_ingest_tickets']);
        try {
          await c.query(SCHEMA);
        } finally {
          await c.query('SELECT pg_advisory_unlock(hashtext($1))', ['svc_ingest_tickets']);
        }
      });
      exists = true;
    } else exists = await hasTable(db);
  } catch (err) {
    await db.close().catch(() => {});
    throw db.fail('LEDGER_WRITE', 'cannot prepare the tickets table in', err);
  }
  return {
    location: db.location,
    async append(event) {
      if (o.readOnly)
        throw new SvcIngestError('LEDGER_WRITE', `tickets store ${db.location} opened read-only`);
      try {
        const r = await db.query(
          'other',
          `INSERT INTO svc_ingest_tickets.events (source_ticket_id, kind, update_key, body)
           VALUES ($1, $2, $3, $4::jsonb) ON CONFLICT (update_key) DO NOTHING RETURNING seq`,
          [
            event.sourceTicketId,
            event.kind,
            event.kind === 'update' ? event.key : null,
            JSON.stringify(maskDeep(event)),
          ],
        );
        return (r.rowCount ?? 0) > 0;
      } catch (err) {
        throw db.fail('LEDGER_WRITE', 'cannot store a ticket event in', err);
      }
    },
    async events() {
      if (!exists) exists = await hasTable(db);
      if (!exists) return [];
      try {
        const r = await db.query<{ body: TicketEvent }>(
          'other',
          'SELECT body FROM svc_ingest_tickets.events ORDER BY seq',
        );
        return r.rows.map((row) => row.body);
      } catch (err) {
        throw db.fail('LEDGER_READ', 'cannot read the tickets of', err);
      }
    },
    close: () => db.close(),
  };
}
