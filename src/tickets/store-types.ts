// The ticket store's interface, shared by its two implementations (file-store.ts, pg-store.ts).
import type { Logger } from '../log.ts';
import type { TicketEvent } from './state.ts';

/**
 * A durable log of ticket events.
 * @example const s = await openTicketStore(resolveLedger(config, opts.ledger), o); await s.append(e); await s.close()
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
  /** Read only: a missing file or table is an empty store, nothing is created. */
  readOnly?: boolean;
}
