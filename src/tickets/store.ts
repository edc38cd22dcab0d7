// Where tickets are kept: a file next to the ledger (tickets.ndjson), or the ledger's PostgreSQL database — the
// same choice as the ledger's. Both keep the same events (state.ts) and apply a repeated update once.
import { dirname, join } from 'node:path';
import type { TicketWebhookUpdate } from '../client/models.ts';
import type { LedgerRef } from '../ledger/ref.ts';
import { foldTickets, type TicketRecord, updateKey } from './state.ts';
import type { TicketStore, TicketStoreOptions } from './store-types.ts';

export type { TicketStore, TicketStoreOptions } from './store-types.ts';

/** The tickets file of a ledger file: `tickets.ndjson` in the ledger's folder. */
export function ticketsPathOf(ledgerFile: string): string {
  return join(dirname(ledgerFile), 'tickets.ndjson');
}

/**
 * The ticket store that goes with a ledger (ref.ts): its PostgreSQL database, as the ref's connection settings
 * say, else the tickets file next to the ledger file.
 */
export async function openTicketStore(ledger: LedgerRef, o: TicketStoreOptions): Promise<TicketStore> {
  if (ledger.kind === 'postgres') {
    const { openPgTicketStore } = await import('./pg-store.ts');
    return openPgTicketStore(ledger, o);
  }
  const { openFileTicketStore } = await import('./file-store.ts');
  return openFileTicketStore(ticketsPathOf(ledger.path), o);
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
