// No batch leaves on claims the run may no longer hold: with a PostgreSQL ledger, a worker paused (or cut off from
// the database) past its lease may have had its claims taken over by another worker, which sends them.

import { LedgerLeaseError } from '../errors.ts';
import type { LedgerStore } from '../ledger/store.ts';
import type { DispatchSettings } from './options.ts';

/**
 * The dispatch settings with a check before each post: while `allowed()` resolves false, the post fails with
 * `refused()` and nothing is sent. `send` checks the store's claims (gatedOnClaims); `backfill work` checks that
 * its partition is still its own.
 * @example gatePost(settings, () => session.stillHeld(), () => new Error('not mine any more'))
 */
export function gatePost(
  d: DispatchSettings,
  allowed: () => Promise<boolean>,
  refused: () => Error,
): DispatchSettings {
  const post: DispatchSettings['post'] = async (txs, opts) => {
    if (!(await allowed())) throw refused();
    return d.post(txs, opts);
  };
  return { ...d, post };
}

/**
 * `send`'s dispatch settings with each post asking the store first (no query while the lease is fresh; see
 * LedgerStore.claimsHeld). Once another worker has taken over any of its claims (its lease had run out, and the
 * check in the database found them gone), every post fails with LEDGER_LEASE, which stops the run:
 * what was read and not sent is recorded as failed, and a rerun sends what no other worker did. The records
 * sent twice stay those already on the wire when the worker was paused: at most concurrency x batch size.
 * @example createDispatcher({ ...gatedOnClaims(settings, store), ...recorder })
 */
export function gatedOnClaims(d: DispatchSettings, store: LedgerStore): DispatchSettings {
  const claimsHeld = store.claimsHeld?.bind(store);
  if (claimsHeld === undefined) return d;
  return gatePost(
    d,
    claimsHeld,
    () =>
      new LedgerLeaseError(
        `this worker’s lease on the ledger ${store.location} ran out (the process was paused, or the database out of reach, for longer than ledger.leaseMs) and another worker took over some of its claims`,
      ),
  );
}
