// The file LedgerStore behind the seam the chain talks to: admit() against the ledger's acked lines, record()
// writing today's line byte for byte, read mode (a dry run) and the lock, on real files in a temp folder.
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BatchItem } from '../../src/batch/batcher.ts';
import { openFileLedgerStore } from '../../src/ledger/file/store.ts';
import { openLedgerStore } from '../../src/ledger/open.ts';
import { createLogger } from '../../src/log.ts';
import { fileRef } from '../helpers/ledger-ref.ts';

const logger = createLogger({ level: 'silent', pretty: false });
const tmp = () => mkdtempSync(join(tmpdir(), 'svc-file-store-'));
const items = (ids: string[]): BatchItem[] =>
  ids.map((id, i) => ({ id, json: `{"transactionId":"${id}"}`, source: 'in.csv', line: i + 2 }));
const open = (path: string, over: { mode?: 'read' | 'write'; resume?: boolean } = {}) =>
  openLedgerStore(fileRef(path), { mode: 'write', resume: true, runId: 'r1', logger, ...over });

describe('file LedgerStore', () => {
  it('records one line per outcome, key for key as the ledger format has it, mode 0600', async () => {
    const path = join(tmp(), 'ledger.ndjson');
    const store = await open(path);
    expect(store.location).toBe(path);
    await store.record({
      batchId: 'r1-1',
      runId: 'r1',
      status: 'acked',
      requestId: 'req-1',
      clientRequestId: 'c-1',
      attempts: 1,
      httpStatus: 200,
      items: items(['a', 'b']),
    });
    await store.record({
      batchId: 'r1-2',
      runId: 'r1',
      status: 'failed',
      requestId: null,
      clientRequestId: '',
      attempts: 0,
      httpStatus: null,
      error: 'not sent: interrupted',
      items: items(['c']),
    });
    await store.close();
    await store.close(); // idempotent
    const lines = readFileSync(path, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => Object.keys(l))).toEqual([
      [
        'ts',
        'batchId',
        'status',
        'requestId',
        'transactionIds',
        'attempts',
        'httpStatus',
        'clientRequestId',
        'source',
        'lines',
        'runId',
      ],
      [
        'ts',
        'batchId',
        'status',
        'requestId',
        'transactionIds',
        'attempts',
        'httpStatus',
        'error',
        'clientRequestId',
        'source',
        'lines',
        'runId',
      ],
    ]);
    expect(lines[0]).toMatchObject({
      status: 'acked',
      requestId: 'req-1',
      transactionIds: ['a', 'b'],
      lines: [2, 3],
    });
    expect(lines[1]).toMatchObject({
      status: 'failed',
      error: 'not sent: interrupted',
      attempts: 0,
      lines: [2, 2],
    });
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('admits what no acked line holds, in input order; an id only in failed lines is admitted again', async () => {
    const path = join(tmp(), 'ledger.ndjson');
    const line = (status: string, ids: string[]) =>
      `${JSON.stringify({ ts: 't', batchId: 'b', status, transactionIds: ids, attempts: 1, httpStatus: 200 })}\n`;
    writeFileSync(path, line('acked', ['a', 'c']) + line('failed', ['b']) + '{"torn');
    const store = await open(path);
    const a = await store.admit(items(['a', 'b', 'c', 'd']));
    expect(a.send.map((i) => i.id)).toEqual(['b', 'd']);
    expect(a.skipped.map((s) => [s.item.id, s.reason])).toEqual([
      ['a', 'acked'],
      ['c', 'acked'],
    ]);
    expect(store.badLines).toBe(1); // the torn line, closed off at open
    await store.close();
    // Resume off: everything passes.
    const again = await open(path, { resume: false });
    expect((await again.admit(items(['a', 'c']))).send.map((i) => i.id)).toEqual(['a', 'c']);
    await again.close();
  });

  it('write mode holds the lock until close; read mode (a dry run) takes none and records nothing', async () => {
    const path = join(tmp(), 'ledger.ndjson');
    const writer = await openFileLedgerStore(path, { mode: 'write', resume: true, runId: 'r1', logger });
    await expect(
      openFileLedgerStore(path, { mode: 'write', resume: true, runId: 'r2', logger }),
    ).rejects.toMatchObject({
      code: 'LEDGER_LOCKED',
    });
    const reader = await openFileLedgerStore(path, { mode: 'read', resume: true, runId: 'r3', logger });
    await expect(reader.record({} as never)).rejects.toThrow(/reading only/);
    await reader.close();
    await writer.close();
    const next = await openFileLedgerStore(path, { mode: 'write', resume: true, runId: 'r4', logger });
    await next.close();
  });

  it('a signal while the resume index loads: admit rejects with the signal', async () => {
    const path = join(tmp(), 'ledger.ndjson');
    writeFileSync(path, `${JSON.stringify({ status: 'acked', transactionIds: ['a'] })}\n`);
    const stop = new AbortController();
    stop.abort('SIGTERM');
    const store = await open(path, { mode: 'read' });
    const aborted = await openFileLedgerStore(path, {
      mode: 'read',
      resume: true,
      runId: 'r',
      logger,
      signal: stop.signal,
    });
    await expect(aborted.admit([])).rejects.toBe('SIGTERM');
    expect((await store.admit(items(['a']))).skipped).toHaveLength(1);
    await store.close();
    await aborted.close();
  });
});
