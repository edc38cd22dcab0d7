// Records in flight at another worker (runChainSettled, src/chain/settle.ts), on a real PostgreSQL ledger with two
// workers' stores and the simulator: the run waits for them and sends what the other worker lets go; a stop that
// comes while the run is still reading ends the run with its summary (the records skipped, as another run's to
// settle), not with the signal's reason thrown (which made `backfill work` exit 1 "unexpected error: partition
// lost" when its partition was taken over, and `send` the same on SIGTERM).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BatchItem } from '../../src/batch/batcher.ts';
import { runChainSettled, settlePollMs } from '../../src/chain/settle.ts';
import { createClient, type SvcClient } from '../../src/client/index.ts';
import { defaultConfig, loadConfig } from '../../src/config/index.ts';
import { openPgLedgerStore, type PgLedgerStore } from '../../src/ledger/postgres/store.ts';
import { type LedgerStore, observeAdmit } from '../../src/ledger/store.ts';
import { createLogger } from '../../src/log.ts';
import type { PreparedItem } from '../../src/prepare/choose.ts';
import { newCounters } from '../../src/record/counters.ts';
import { nullRejectsWriter } from '../../src/record/rejects.ts';
import { deliveryCounts } from '../faults/helpers.ts';
import { dispatchSettings } from '../helpers/dispatch.ts';
import { pgRef } from '../helpers/ledger-ref.ts';
import { usePostgres } from '../helpers/postgres.ts';
import { useSimulator } from '../helpers/simulator.ts';
import { makeTx, range } from '../helpers/transactions.ts';

const pgs = usePostgres();
const sim = useSimulator({ seed: 23 }, 'reset');
const logger = createLogger({ level: 'silent', pretty: false });
const SEND = defaultConfig().send;
let client: SvcClient;

beforeAll(() => {
  client = createClient(loadConfig({ env: {}, flags: { baseUrl: { value: sim.url, flag: '--base-url' } } }));
});
afterAll(async () => {
  await client.close();
});

const N = 20;
const txs = (tag: string) => range(N).map((i) => makeTx(i, tag));

type TxItem = Extract<PreparedItem, { kind: 'tx' }>;

function items(tag: string): TxItem[] {
  return txs(tag).map((t, i) => ({
    kind: 'tx',
    id: t.transactionId,
    json: JSON.stringify(t),
    source: 'in.ndjson',
    line: i + 1,
  }));
}

/** The same records as the ledger's admit takes them. */
const batchItems = (list: TxItem[]): BatchItem[] =>
  list.map(({ id, json, source, line }) => ({ id, json, source, line }));

async function* oneChunk(list: PreparedItem[]): AsyncGenerator<PreparedItem[]> {
  yield list;
}

/** A worker's store on the ledger at `url`, its lease short enough for the other to wait on it in a test. */
function store(url: string, worker: string): Promise<PgLedgerStore> {
  return openPgLedgerStore(pgRef(url, { leaseMs: 1500 }), {
    mode: 'write',
    resume: true,
    runId: `run-${worker}`,
    workerId: worker,
    logger,
  });
}

/** `s`, calling `found()` once an admit answers some records in flight elsewhere (the run's first pass found them). */
function finding(s: LedgerStore, found: () => unknown): LedgerStore {
  return observeAdmit(s, async (a) => {
    if (a.skipped.some((k) => k.reason === 'elsewhere')) await found();
  });
}

/** runChainSettled of `list` on `s`, as `send` runs it, with `signal`. */
function settle(url: string, s: LedgerStore, list: PreparedItem[], signal?: AbortSignal) {
  const counters = newCounters();
  const { settings } = dispatchSettings({}, { concurrency: 2, maxRetries: 2, retryBaseMs: 1, retryMaxMs: 5 });
  const end = runChainSettled(
    {
      chunks: oneChunk(list),
      store: s,
      runId: 'settle',
      counters,
      rejects: nullRejectsWriter(),
      caps: SEND,
      batching: { batchSize: 50 },
      dispatch: { post: (body, o) => client.postTransactionsJson(body, o), settings },
      profileName: 'canonical',
      logger,
      ...(signal ? { signal } : {}),
    },
    { pollMs: settlePollMs(pgRef(url, { leaseMs: 1500 })) },
  );
  return { counters, end };
}

/** Two workers' stores on a new ledger, A holding the claims of `tag`'s records (never sent), given to `body`. */
async function claimedByA(
  tag: string,
  body: (w: { url: string; a: PgLedgerStore; b: PgLedgerStore; list: TxItem[] }) => Promise<void>,
): Promise<void> {
  const url = await pgs.createDatabase();
  const [a, b] = [await store(url, 'A'), await store(url, 'B')];
  try {
    const list = items(tag);
    expect((await a.admit(batchItems(list))).send).toHaveLength(N);
    await body({ url, a, b, list });
  } finally {
    await a.close();
    await b.close();
  }
}

describe('records in flight at another worker', () => {
  it('are waited for, and sent once the other worker lets them go (its claims released)', () =>
    claimedByA('wait', async ({ url, a, b, list }) => {
      // Found in flight at A by B's first pass, then A stops without sending them: closing, it gives back the
      // claims it never sent, and B, waiting, sends those.
      let found = 0;
      const run = settle(
        url,
        finding(b, () => found++ === 0 && a.close()),
        list,
      );
      const end = await run.end;
      expect(end.interrupted).toBeNull();
      expect(found).toBeGreaterThan(0);
      expect(run.counters).toMatchObject({ read: N, sent: N, skipped: 0, failed: 0 });
      const ids = txs('wait').map((t) => t.transactionId);
      expect(deliveryCounts(sim, ids)).toEqual({ missing: 0, once: N, duplicated: 0, extra: 0 });
    }));

  it('a stop while the run still reads: the run ends with its summary, the records skipped, nothing thrown', () =>
    claimedByA('stop', async ({ url, b, list }) => {
      // The stop comes as B finds the records in flight at A (a backfill worker's partition taken over, a SIGTERM).
      const stop = new AbortController();
      const run = settle(
        url,
        finding(b, () => stop.abort('partition lost')),
        list,
        stop.signal,
      );
      const end = await run.end;
      expect(end.interrupted).toBe('partition lost');
      expect(run.counters).toMatchObject({ read: N, sent: 0, skipped: N, failed: 0 });
      expect(sim.stats().transactions.accepted).toBe(0);
    }));
});
