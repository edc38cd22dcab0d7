// LedgerRefs for tests that open a store, a session or a connection directly: the connection settings are the
// settings table's defaults (loadConfig with no env), with a test's own values over them.
import { loadConfig } from '../../src/config/index.ts';
import {
  connectionOf,
  type FileLedgerRef,
  type PgConnection,
  type PgLedgerRef,
} from '../../src/ledger/ref.ts';

/** The default connection settings (config/default.json), `over` them. */
export function pgConnection(over: Partial<PgConnection> = {}): PgConnection {
  return { ...connectionOf(loadConfig({ env: {} })), ...over };
}

/** A PostgreSQL ledger at `url`, as `--ledger` names it, with the default connection settings `over` them. */
export function pgRef(url: string, over: Partial<PgConnection> = {}): PgLedgerRef {
  return { kind: 'postgres', url, connection: pgConnection(over), from: '--ledger' };
}

/** A ledger file, as `--ledger` names it. */
export function fileRef(path: string): FileLedgerRef {
  return { kind: 'file', path, from: '--ledger' };
}
