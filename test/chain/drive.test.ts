// The chain driven end to end in memory: prepared records through dedupe, batching and a dry-run sink, over a
// real file ledger. Batches form exactly as if each record were checked alone; a reject cap stops reading and
// what was read and not sent is abandoned, so read = batched + skipped + rejected.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Batch } from '../../src/batch/batcher.ts';
import { createBatcher } from '../../src/batch/batcher.ts';
import { driveChain } from '../../src/chain/drive.ts';
import { defaultConfig } from '../../src/config/index.ts';
import { createDedupe } from '../../src/dedupe/dedupe.ts';
import { openLedgerStore } from '../../src/ledger/open.ts';
import { createLogger } from '../../src/log.ts';
import type { PreparedItem } from '../../src/prepare/choose.ts';
import { newCounters } from '../../src/record/counters.ts';
import { createRejecter, type RejectCaps } from '../../src/record/rejecter.ts';
import { nullRejectsWriter } from '../../src/record/rejects.ts';
import type { Sink } from '../../src/send/sink.ts';
import { OutageError } from '../../src/send/stop.ts';
import { createSpillingFingerprintSet } from '../../src/sorted-runs/fingerprint-set.ts';
import { fileRef } from '../helpers/ledger-ref.ts';

const logger = createLogger({ level: 'silent', pretty: false });
const tx = (n: number): PreparedItem => ({
  kind: 'tx',
  id: `t-${n}`,
  json: `{"transactionId":"t-${n}"}`,
  source: 'in.csv',
  line: n + 2,
});
const bad = (n: number): PreparedItem => ({
  kind: 'reject',
  source: 'in.csv',
  line: n + 2,
  errors: [{ field: 'postedAmount', message: 'required' }],
  record: {},
});

async function* chunksOf(items: PreparedItem[], size: number): AsyncGenerator<PreparedItem[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}

/** `perGroup`: records a group handed to the store may hold (the chain's room, as run.ts sizes it); `stopAt`: the
 * submit that refuses its batch as the dispatcher does when the service is down (abandons it, then throws). */
async function run(
  items: PreparedItem[],
  acked: string[],
  caps: Partial<RejectCaps> = {},
  perGroup = 50,
  stopAt = 0,
) {
  const path = join(mkdtempSync(join(tmpdir(), 'svc-drive-')), 'ledger.ndjson');
  writeFileSync(
    path,
    `${JSON.stringify({ ts: 't', batchId: 'b', status: 'acked', transactionIds: acked })}\n`,
  );
  const store = await openLedgerStore(fileRef(path), { mode: 'read', resume: true, runId: 'r', logger });
  const c = newCounters();
  const submitted: Batch[] = [];
  const abandoned: Batch[] = [];
  const sink: Sink = {
    submit: async (b) => {
      if (stopAt > 0 && submitted.length + 1 >= stopAt) {
        abandoned.push(b);
        throw new OutageError(1000);
      }
      submitted.push(b);
    },
    abandon: async (b) => void abandoned.push(b),
    drain: async () => {},
    stop() {},
    inFlight: 0,
  };
  const batcher = createBatcher(50, 'r');
  const dedupe: ReturnType<typeof createDedupe> = createDedupe({
    store,
    seen: createSpillingFingerprintSet(),
    room: () => perGroup - (dedupe.expected % 50),
    onSkipped: (n) => {
      c.skipped += n;
    },
  });
  const rejecter = createRejecter(nullRejectsWriter(), c, 'r', { ...defaultConfig().send, ...caps });
  const end = await driveChain(chunksOf(items, 7), {
    counters: c,
    rejecter,
    dedupe,
    batcher,
    sink,
    logger,
    stopRequested: () => null,
  });
  await store.close();
  return { c, submitted, abandoned, end, rejecter };
}

describe('driving the chain', () => {
  it('batches hold the same records as if each were checked alone, skipped ones left out', async () => {
    const items = Array.from({ length: 230 }, (_, i) => tx(i));
    items.splice(60, 0, tx(5)); // a duplicate within the run
    items.splice(100, 0, bad(999));
    const acked = Array.from({ length: 230 }, (_, i) => i)
      .filter((i) => i % 7 === 3)
      .map((i) => `t-${i}`);
    const { c, submitted, abandoned, end } = await run(items, acked);
    const expected = Array.from({ length: 230 }, (_, i) => i)
      .filter((i) => i % 7 !== 3)
      .map((i) => `t-${i}`);
    expect(submitted.flatMap((b) => b.items.map((i) => i.id))).toEqual(expected);
    expect(submitted.map((b) => b.items.length)).toEqual([50, 50, 50, 47]);
    expect(submitted.map((b) => b.id)).toEqual(['r-1', 'r-2', 'r-3', 'r-4']);
    expect(abandoned).toEqual([]);
    expect(end).toEqual({ interrupted: null, outage: false });
    expect(c).toMatchObject({ read: 232, rejected: 2, skipped: acked.length });
    expect(c.read).toBe(expected.length + c.skipped + c.rejected);
  });

  it('a reject cap stops reading; the valid records read and not sent are abandoned as one batch', async () => {
    const items = [
      ...Array.from({ length: 60 }, (_, i) => tx(i)),
      ...Array.from({ length: 500 }, (_, i) => bad(i)),
    ];
    const { c, submitted, abandoned, rejecter } = await run(items, [], {
      maxRejectPercent: 40,
      rejectSample: 100,
    });
    expect(rejecter.tooMany).toMatch(/^40 of the first 100 records were rejected/);
    expect(c.read).toBe(100);
    expect(submitted.map((b) => b.items.length)).toEqual([50]);
    expect(abandoned.map((b) => b.items.length)).toEqual([10]);
  });

  it('groups of four batches (a database ledger): a stop mid-group leaves every record read sent or abandoned, once', async () => {
    const items = Array.from({ length: 1_000 }, (_, i) => tx(i));
    const { c, submitted, abandoned, end } = await run(items, [], {}, 200, 2);
    expect(end.outage).toBe(true);
    expect(submitted.map((b) => b.items.length)).toEqual([50]);
    const ids = [...submitted, ...abandoned].flatMap((b) => b.items.map((i) => i.id));
    // The whole of what was read, each once: nothing of the group under way is lost at the stop.
    expect(ids.length).toBe(c.read);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(Array.from({ length: c.read }, (_, i) => `t-${i}`));
    expect(c.read).toBeGreaterThan(200);
  });
});
