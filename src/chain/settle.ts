// Records the ledger store skips as in flight at another live worker ('elsewhere') are not settled yet: that worker
// may die before its outcome is recorded, and then nobody would send them (a backfill partition is marked done
// once). So a run keeps them aside and, once its own input is through, offers them again until each is
// acknowledged (skipped) or free again — its claim released, or its worker's lease run out — and then sent by this
// run. The file store never answers 'elsewhere': nothing is kept aside there.
import type { BatchItem } from '../batch/batcher.ts';
import { jsonOf } from '../client/body.ts';
import { leaseWaits } from '../ledger/connection.ts';
import type { LedgerRef } from '../ledger/ref.ts';
import { type LedgerStore, observeAdmit } from '../ledger/store.ts';
import type { PreparedItem } from '../prepare/prepare.ts';
import { newCounters } from '../record/counters.ts';
import { retried } from '../send/retried.ts';
import { type ChainRun, type ChainRunEnd, runChain } from './run.ts';

/** The store as the chain sees it, remembering what it skipped as in flight elsewhere. */
function deferring(store: LedgerStore): { store: LedgerStore; take(): BatchItem[] } {
  let kept: BatchItem[] = [];
  const wrapped = observeAdmit(store, (a) => {
    for (const s of a.skipped) if (s.reason === 'elsewhere') kept.push(s.item);
  });
  return {
    store: wrapped,
    take() {
      const out = kept;
      kept = [];
      return out;
    },
  };
}

export interface SettleOptions {
  /** Wait between two looks at the records in flight elsewhere. */
  pollMs: number;
}

/** How often to look again: a tenth of the lease (its claims are free at most one lease after its worker died), 0.2–2 s. */
export function settlePollMs(ledger: LedgerRef): number {
  // A ledger file has no lease: the longest poll.
  if (ledger.kind !== 'postgres') return 2000;
  return leaseWaits(ledger.connection).settlePollMs;
}

/** Records still in flight at another worker: the poll goes on. */
class StillElsewhere extends Error {}

async function* oneChunk(items: BatchItem[]): AsyncGenerator<PreparedItem[]> {
  yield items.map((i) => ({
    kind: 'tx',
    id: i.id,
    // Never batched here (the store skipped them), so still their JSON; jsonOf holds either way.
    json: jsonOf(i),
    source: i.source,
    line: i.line,
    codes: i.codes,
  }));
}

/**
 * Run the chain (runChain), then settle what it skipped as in flight elsewhere: every such record ends acknowledged
 * (counted skipped), or sent (or failed) by this run. Counted once: a record moves from skipped to sent when this
 * run sends it, so read = sent + skipped + failed + rejected holds. A dry run (no dispatch) does not wait: what is
 * in flight elsewhere is reported skipped. A stop (a signal, an outage) leaves the rest skipped: the other
 * worker holds them, or its claims run out and the next run sends them.
 * @example const end = await runChainSettled({ ...run, store }, { pollMs: 1000 })
 */
export async function runChainSettled(r: ChainRun, o: SettleOptions): Promise<ChainRunEnd> {
  const first = deferring(r.store);
  let end = await runChain({ ...r, store: first.store });
  let pending = first.take();
  if (pending.length > 0)
    r.logger.info(
      { event: 'ledger.elsewhere', records: pending.length },
      'records in flight at another worker: waiting for their outcome (acknowledged there, or sent here if it lets go)',
    );
  const stopped = () => end.interrupted || end.outage || end.tooManyRejects || r.signal?.aborted;
  // Stopped already (the signal came during the first pass): no wait. p-retry would throw the signal's reason
  // before its first attempt, and the run would end in that instead of its summary.
  if (pending.length === 0 || !r.dispatch || stopped()) return end;
  // Offered again every pollMs (the retry loop, constant waits: the policy of a poll) until none is left in flight
  // elsewhere, or the run stops; a signal ends the wait at once.
  await retried(
    async (attempt) => {
      if (attempt > 1 && !stopped()) {
        const again = deferring(r.store);
        const c = newCounters();
        end = await runChain({
          ...r,
          store: again.store,
          counters: c,
          chunks: oneChunk(pending),
          batchPrefix: `${r.batchPrefix ?? r.runId}-w${attempt - 1}`,
        });
        // They were counted skipped (elsewhere) by the first pass: now as this pass found them.
        const t = r.counters;
        t.skipped += c.skipped - c.read;
        t.sent += c.sent;
        t.failed += c.failed;
        t.batches += c.batches;
        t.failedBatches += c.failedBatches;
        t.retries += c.retries;
        t.splits += c.splits;
        pending = again.take();
      }
      if (pending.length > 0 && !stopped())
        throw new StillElsewhere(`${pending.length} record(s) in flight elsewhere`);
    },
    {
      retries: Number.POSITIVE_INFINITY,
      baseDelayMs: o.pollMs,
      maxDelayMs: o.pollMs,
      jitter: false,
      retryable: (err) => err instanceof StillElsewhere,
      signal: r.signal,
    },
  ).catch((err: unknown) => {
    // A stop while waiting leaves the rest skipped (see above); anything else is the chain's own failure.
    if (!(err instanceof StillElsewhere)) throw err;
  });
  return end;
}
