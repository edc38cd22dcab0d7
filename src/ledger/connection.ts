// How a PostgreSQL ledger is reached, as one value: the ledger group of the settings table less its location.
import type { Config } from '../config/index.ts';

/** The setting that names a PostgreSQL ledger (env SVC_LEDGER_URL): its key, as refusals and notices say it. */
export const LEDGER_URL_KEY = 'ledger.url';

/**
 * The connection settings (password file, wait, pool size, plain-text rule, lease): every ledger.* setting but
 * where the ledger is (url, name). A LedgerRef of kind postgres carries one (ref.ts).
 */
export type PgConnection = Readonly<Omit<Config['ledger'], 'url' | 'name'>>;
