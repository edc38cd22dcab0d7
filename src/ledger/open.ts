// Opens the LedgerStore a LedgerRef names (ref.ts): PostgreSQL → the shared ledger (postgres/store.ts, loaded only
// then), a file → the ledger file (file/store.ts).
import { type FileLedgerStoreOptions, openFileLedgerStore } from './file/store.ts';
import type { LedgerRef } from './ref.ts';
import type { LedgerStore, OpenLedgerOptions } from './store.ts';

/** What either store may be given besides the seam's options (the PostgreSQL store ignores the file's). */
export type OpenStoreOptions = OpenLedgerOptions & Pick<FileLedgerStoreOptions, 'wrapHandle' | 'inFlight'>;

/**
 * The store of a ledger (a file, or PostgreSQL with its connection settings).
 * @example const store = await openLedgerStore(resolveLedger(config, flags.ledger), { mode: 'write', resume: true, runId, logger })
 */
export async function openLedgerStore(ref: LedgerRef, o: OpenStoreOptions): Promise<LedgerStore> {
  if (ref.kind === 'postgres') {
    const { openPgLedgerStore } = await import('./postgres/store.ts');
    const { wrapHandle: _, inFlight: _i, ...pg } = o;
    return openPgLedgerStore(ref, pg);
  }
  return openFileLedgerStore(ref.path, o);
}
