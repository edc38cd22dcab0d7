// Opens the LedgerStore a location names: `postgres://` / `postgresql://` → the shared PostgreSQL ledger
// (postgres/store.ts, loaded only then), anything else → the ledger file (file/store.ts).
import { type FileLedgerStoreOptions, openFileLedgerStore } from './file/store.ts';
import type { PgLedgerStoreOptions } from './postgres/store.ts';
import { isPostgresUrl } from './postgres/url.ts';
import type { LedgerStore, OpenLedgerOptions } from './store.ts';

/** What either store may be given besides the seam's options (each takes its own and ignores the rest). */
export type OpenStoreOptions = OpenLedgerOptions &
  Pick<FileLedgerStoreOptions, 'wrapHandle' | 'inFlight'> &
  Pick<PgLedgerStoreOptions, 'passwordFile' | 'leaseMs' | 'waitMs' | 'poolMax' | 'allowPlaintext'>;

/**
 * The store for a ledger location (a file path, or a postgres URL).
 * @example const store = await openLedgerStore(config.send.ledgerPath, { mode: 'write', resume: true, runId, logger })
 */
export async function openLedgerStore(location: string, o: OpenStoreOptions): Promise<LedgerStore> {
  if (isPostgresUrl(location)) {
    const { openPgLedgerStore } = await import('./postgres/store.ts');
    const { wrapHandle: _, inFlight: _i, ...pg } = o;
    return openPgLedgerStore(location, pg);
  }
  const { passwordFile: _p, leaseMs: _l, waitMs: _w, poolMax: _m, allowPlaintext: _a, ...file } = o;
  return openFileLedgerStore(location, file);
}
