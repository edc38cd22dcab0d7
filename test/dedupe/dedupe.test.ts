// The dedupe stage on a real file ledger: within-run duplicates refused, acked ids skipped through admit(),
// groups that never overfill the batch under way, items handed back in input order.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BatchItem } from '../../src/batch/batcher.ts';
import { createDedupe } from '../../src/dedupe/dedupe.ts';
import { openLedgerStore } from '../../src/ledger/open.ts';
import { createLogger } from '../../src/log.ts';
import { createSpillingFingerprintSet } from '../../src/sorted-runs/fingerprint-set.ts';
import { fileRef } from '../helpers/ledger-ref.ts';

const logger = createLogger({ level: 'silent', pretty: false });
const item = (id: string): BatchItem => ({
  id,
  json: `{"transactionId":"${id}"}`,
  source: 'in.csv',
  line: 2,
});

async function ledgerWith(acked: string[]) {
  const path = join(mkdtempSync(join(tmpdir(), 'svc-dedupe-')), 'ledger.ndjson');
  writeFileSync(
    path,
    `${JSON.stringify({ ts: 't', batchId: 'b', status: 'acked', transactionIds: acked })}\n`,
  );
  return openLedgerStore(fileRef(path), { mode: 'read', resume: true, runId: 'r', logger });
}

describe('dedupe stage', () => {
  it('refuses a repeated id, skips acked ids, passes the rest in order as the very items offered', async () => {
    const store = await ledgerWith(['t-2', 't-4']);
    const skipped: Array<[number, string]> = [];
    const d = createDedupe({
      store,
      seen: createSpillingFingerprintSet(),
      room: () => 50,
      onSkipped: (n, reason) => skipped.push([n, reason]),
    });
    const offered = ['t-1', 't-2', 't-3', 't-1', 't-4', 't-5'].map(item);
    expect(offered.map((i) => d.offer(i))).toEqual([true, true, true, false, true, true]);
    expect(d.full).toBe(false);
    const sent = await d.admit();
    expect(sent.map((i) => i.id)).toEqual(['t-1', 't-3', 't-5']);
    expect(sent[0]).toBe(offered[0]);
    expect(skipped).toEqual([[2, 'acked']]);
    expect(await d.admit()).toEqual([]);
    await store.close();
  });

  it('a group is full when it would fill the batch under way', async () => {
    const store = await ledgerWith([]);
    let pending = 47;
    const d = createDedupe({ store, seen: createSpillingFingerprintSet(), room: () => 50 - pending });
    d.offer(item('a'));
    d.offer(item('b'));
    expect(d.full).toBe(false);
    d.offer(item('c'));
    expect(d.full).toBe(true);
    expect((await d.admit()).length).toBe(3);
    pending = 0;
    expect(d.full).toBe(false);
    await store.close();
  });
});
