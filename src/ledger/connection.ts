// How a PostgreSQL ledger is reached, as one value: the ledger group of the settings table less its location.
import type { Config } from '../config/index.ts';

/** The setting that names a PostgreSQL ledger (env SVC_LEDGER_URL): its key, as refusals and notices say it. */
export const LEDGER_URL_KEY = 'ledger.url';

/**
 * The connection settings (password file, wait, pool size, plain-text rule, lease): every ledger.* setting but
 * where the ledger is (url, name). A LedgerRef of kind postgres carries one (ref.ts).
 */
export type PgConnection = Readonly<Omit<Config['ledger'], 'url' | 'name'>>;

/** The waits a PostgreSQL worker takes from its lease (ledger.leaseMs), each a share of it, decided here only. */
export interface LeaseWaits {
  /** Between two heartbeats: a third of the lease, at least 0.1 s. */
  heartbeatMs: number;
  /** Between two progress writes of a backfill partition: a third, at most 5 s. */
  progressMs: number;
  /** Between two looks at records in flight elsewhere (free at most one lease after their worker died): a tenth, 0.2–2 s. */
  settlePollMs: number;
  /** Between two looks at a worker id held on another host: a tenth, at most 1 s. */
  holderPollMs: number;
}

/** @example leaseWaits({ ...connection, leaseMs: 30_000 }) // { heartbeatMs: 10000, progressMs: 5000, settlePollMs: 2000, holderPollMs: 1000 } */
export function leaseWaits(c: PgConnection): LeaseWaits {
  const [third, tenth] = [Math.floor(c.leaseMs / 3), Math.floor(c.leaseMs / 10)];
  return {
    heartbeatMs: Math.max(100, third),
    progressMs: Math.min(5000, third),
    settlePollMs: Math.min(2000, Math.max(200, tenth)),
    holderPollMs: Math.min(1000, tenth),
  };
}
