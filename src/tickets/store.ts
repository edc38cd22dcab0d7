// Where tickets are kept: a file next to the ledger (tickets.ndjson), or the ledger's PostgreSQL database — the
// same choice as the ledger's. Both keep the same events (state.ts) and apply a repeated update once.
import { dirname, join } from 'node:path';
import type { TicketWebhookUpdate } from '../client/models.ts';
import { isPostgresUrl } from '../ledger/postgres/url.ts';
import type { Logger } from '../log.ts';
import { foldTickets, type TicketEvent, type TicketRecord, updateKey } from './state.ts';

/**
 * A durable log of ticket events.
 * @example const s = await openTicketStore('ledger/transactions.ndjson', o); await s.append(e); await s.close()
 */
export interface TicketStore {
  /** The tickets file, or the database (without credentials). */
  readonly location: string;
  /**
   * Appends one event; resolves once it is durable (fsync / commit). An `update` whose key is already stored is
   * not appended again (false).
   */
  append(event: TicketEvent): Promise<boolean>;
  /** Every event, in the order stored. */
  events(): Promise<TicketEvent[]>;
  close(): Promise<void>;
}

export interface TicketStoreOptions {
  logger: Logger;
  /** A PostgreSQL ledger's password file, wait and plain-text rule (ledger.*). */
  passwordFile?: string | undefined;
  waitMs?: number;
  allowPlaintext?: boolean;
  /** Read only: a missing file or table is an empty store, nothing is created. */
  readOnly?: boolean;
}

/** The tickets file of a ledger file: `tickets.ndjson` in the ledger's folder. */
export function ticketsPathOf(ledgerPath: string): string {
  return join(dirname(ledgerPath), 'tickets.ndjson');
}

/**
 * The ticket store that goes with a ledger: its PostgreSQL database for a postgres:// ledger, else the tickets
 * file next to the ledger file.
 */
export async function openTicketStore(ledger: string, o: TicketStoreOptions): Promise<TicketStore> {
  if (isPostgresUrl(ledger)) {
    const { openPgTicketStore } = await import('./pg-store.ts');
    return openPgTicketStore(ledger, o);
  }
  const { openFileTicketStore } = await import('./file-store.ts');
  return openFileTicketStore(ticketsPathOf(ledger), o);
}

/**
 * Stores a webhook update (once): the key counts the ticket's submissions so far, so the same Error after a
 * resubmission is kept. Resolves with false for a repeated delivery.
 */
export async function storeUpdate(
  store: TicketStore,
  update: TicketWebhookUpdate,
  ts: string,
): Promise<boolean> {
  const id = String(update.sourceTicketId);
  const known = foldTickets(await store.events()).get(id);
  return store.append({
    kind: 'update',
    sourceTicketId: id,
    ts,
    key: updateKey(update, known?.submissions ?? 0),
    update,
  });
}

/** Every ticket of a store. */
export async function loadTickets(store: TicketStore): Promise<Map<string, TicketRecord>> {
  return foldTickets(await store.events());
}
