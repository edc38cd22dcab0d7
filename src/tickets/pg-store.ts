// Tickets in the ledger's PostgreSQL database, in the feed's own schema (`?schema=` / ledger.name; table
// ticket_events, made by the ledger's versioned migrations like every other table): one row per event, a repeated
// update refused by a unique key. One feed's role never reads another feed's tickets.
import { SvcIngestError } from '../errors.ts';
import { connectLedgerDb } from '../ledger/postgres/schema-check.ts';
import type { PgLedgerRef } from '../ledger/ref.ts';
import { maskDeep } from '../mask/index.ts';
import type { TicketEvent } from './state.ts';
import type { TicketStore, TicketStoreOptions } from './store-types.ts';

export async function openPgTicketStore(ref: PgLedgerRef, o: TicketStoreOptions): Promise<TicketStore> {
  // A write creates the schema in a database that has none; an older schema is refused (ledger migrate), and a read
  // of a database without one finds no tickets. The store takes at most 2 connections (fewer if ledger.poolMax is).
  const connection = { ...ref.connection, poolMax: Math.min(2, ref.connection.poolMax) };
  const { db, hasSchema: exists } = await connectLedgerDb(
    { ...ref, connection },
    {
      logger: o.logger,
      write: !o.readOnly,
    },
  );
  return {
    location: db.location,
    async append(event) {
      if (o.readOnly)
        throw new SvcIngestError('LEDGER_WRITE', `tickets store ${db.location} opened read-only`);
      try {
        const r = await db.query(
          'other',
          `INSERT INTO svc_ingest.ticket_events (source_ticket_id, kind, update_key, body)
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
      if (!exists) return [];
      try {
        const r = await db.query<{ body: TicketEvent }>(
          'other',
          'SELECT body FROM svc_ingest.ticket_events ORDER BY seq',
        );
        return r.rows.map((row) => row.body);
      } catch (err) {
        throw db.fail('LEDGER_READ', 'cannot read the tickets of', err);
      }
    },
    close: () => db.close(),
  };
}
