// The PostgreSQL LedgerStore against a real server: claims (acked never again, in flight elsewhere skipped, an expired
// lease taken over, failed admitted again, concurrent admitters never share an id), group-committed outcomes as the
// file ledger stores them, credentials never shown, and the round trips per batch.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BatchItem } from '../../src/batch/batcher.ts';
import { SvcIngestError } from '../../src/errors.ts';
import {
  openPgLedgerStore,
  type PgLedgerStore,
  type PgLedgerStoreOptions,
} from '../../src/ledger/postgres/store.ts';
import type { PgConnection } from '../../src/ledger/ref.ts';
import type { RecordedOutcome } from '../../src/ledger/store.ts';
import { createLogger } from '../../src/log.ts';
import { pgRef } from '../helpers/ledger-ref.ts';
import { usePostgres } from '../helpers/postgres.ts';

const pgs = usePostgres({ own: true });
const logger = createLogger({ level: 'silent', pretty: false });

function items(prefix: string, n: number, from = 0): BatchItem[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `${prefix}-${from + i}`,
    json: `{"transactionId":"${prefix}-${from + i}"}`,
    source: 'in.csv',
    line: from + i + 2,
  }));
}

function outcome(
  batchId: string,
  its: readonly BatchItem[],
  status: 'acked' | 'failed',
  over: Partial<RecordedOutcome> = {},
): RecordedOutcome {
  return {
    batchId,
    runId: 'run1',
    status,
    requestId: status === 'acked' ? `req-${batchId}` : null,
    clientRequestId: `c-${batchId}`,
    attempts: status === 'acked' ? 1 : 3,
    httpStatus: status === 'acked' ? 200 : 503,
    ...(status === 'failed' ? { error: 'HTTP 503 after 3 attempts' } : {}),
    items: its,
    ...over,
  };
}

const ids = (list: readonly BatchItem[]) => list.map((i) => i.id);

async function open(
  url: string,
  worker: string,
  o: Partial<PgLedgerStoreOptions & PgConnection> = {},
): Promise<PgLedgerStore> {
  const { leaseMs, waitMs, passwordFile, ...rest } = o;
  const connection = {
    ...(leaseMs === undefined ? {} : { leaseMs }),
    ...(waitMs === undefined ? {} : { waitMs }),
    ...(passwordFile === undefined ? {} : { passwordFile }),
  };
  return openPgLedgerStore(pgRef(url, connection), {
    mode: 'write',
    resume: true,
    runId: `run-${worker}`,
    workerId: worker,
    logger,
    ...rest,
  });
}

describe('PostgreSQL ledger store: claims', () => {
  it('claims new ids, skips them as acked once recorded, for this worker and any other', async () => {
    const url = await pgs.createDatabase();
    const a = await open(url, 'A');
    const b = await open(url, 'B');
    try {
      const group = items('t', 50);
      const first = await a.admit(group);
      expect(ids(first.send)).toEqual(ids(group));
      expect(first.skipped).toEqual([]);
      await a.record(outcome('run1-1', first.send, 'acked'));
      for (const store of [a, b]) {
        const again = await store.admit(group);
        expect(again.send).toEqual([]);
        expect(again.skipped.map((s) => s.reason)).toEqual(Array(50).fill('acked'));
        expect(again.skipped.map((s) => s.item.id)).toEqual(ids(group)); // input order kept
      }
      // New ids mixed in still pass, in input order.
      const mixed = [...items('t', 2, 49), ...items('u', 2)];
      const m = await b.admit(mixed);
      expect(ids(m.send)).toEqual(['t-50', 'u-0', 'u-1']);
      expect(m.skipped.map((s) => [s.item.id, s.reason])).toEqual([['t-49', 'acked']]);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('skips ids claimed by another live worker as in flight elsewhere', async () => {
    const url = await pgs.createDatabase();
    const a = await open(url, 'A');
    const b = await open(url, 'B');
    try {
      const group = items('e', 10);
      expect((await a.admit(group)).send).toHaveLength(10);
      const seen = await b.admit([...items('e', 5), ...items('f', 1)]);
      expect(ids(seen.send)).toEqual(['f-0']);
      expect(seen.skipped.map((s) => s.reason)).toEqual(Array(5).fill('elsewhere'));
      // Admitting again by the claimer itself is allowed (a retried admit after a lost answer).
      expect((await a.admit(group)).send).toHaveLength(10);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('takes over the claims of a worker whose lease ran out, not before', async () => {
    const url = await pgs.createDatabase();
    // A's heartbeat never comes in time: its 1.5 s lease runs out.
    const a = await open(url, 'A', { leaseMs: 1500, heartbeatMs: 600_000 });
    const b = await open(url, 'B');
    try {
      const group = items('x', 20);
      expect((await a.admit(group)).send).toHaveLength(20);
      expect((await b.admit(group)).send).toHaveLength(0);
      await new Promise((r) => setTimeout(r, 1700));
      const taken = await b.admit(group);
      expect(ids(taken.send)).toEqual(ids(group));
      const rows = await pgs.sql(
        url.split('/').pop()!,
        `SELECT count(*)::int AS n FROM svc_ingest.transaction_states WHERE claimed_by = 'B' AND state = 'claimed'`,
      );
      expect(rows[0]?.n).toBe(20);
      // The late worker's outcome still lands (it was sent), but it does not release B's claims.
      await a.record(outcome('a-1', group, 'failed', { attempts: 0, error: 'interrupted' }));
      expect(
        (
          await pgs.sql(
            url.split('/').pop()!,
            `SELECT count(*)::int AS n FROM svc_ingest.transaction_states WHERE claimed_by = 'B' AND state = 'claimed'`,
          )
        )[0]?.n,
      ).toBe(20);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('a renewed lease keeps the claims (heartbeat), and a lapsed one is reported', async () => {
    const url = await pgs.createDatabase();
    let lapsed = 0;
    const a = await open(url, 'A', { leaseMs: 1200, heartbeatMs: 200, onLeaseLapsed: () => lapsed++ });
    const b = await open(url, 'B');
    try {
      expect((await a.admit(items('h', 5))).send).toHaveLength(5);
      await new Promise((r) => setTimeout(r, 2000));
      expect((await b.admit(items('h', 5))).send).toHaveLength(0);
      expect(a.stats().heartbeatTrips).toBeGreaterThanOrEqual(5);
      expect(lapsed).toBe(0);
    } finally {
      await a.close();
      await b.close();
    }
    // A session that could not beat in time learns of it at its next beat. Its own timer must not beat first (a's,
    // every 200 ms, could take the lapse between the UPDATE and the call, and the call would rightly answer false):
    // a session whose timer does not fire within the test.
    let lapsedC = 0;
    const c = await open(url, 'C', { leaseMs: 1200, heartbeatMs: 600_000, onLeaseLapsed: () => lapsedC++ });
    try {
      await pgs.sql(
        url.split('/').pop()!,
        `UPDATE svc_ingest.workers SET lease_until = now() - interval '1 second' WHERE worker_id = 'C'`,
      );
      expect(await c.session!.heartbeat()).toEqual({ lapsed: true });
      expect(lapsedC).toBe(1);
    } finally {
      await c.close();
    }
  });

  it('admits failed ids again (sent and failed, or never sent), at once and to any worker', async () => {
    const url = await pgs.createDatabase();
    const a = await open(url, 'A');
    const b = await open(url, 'B');
    try {
      const sentFailed = items('sf', 10);
      const neverSent = items('ns', 10);
      await a.admit([...sentFailed, ...neverSent]);
      await Promise.all([
        a.record(outcome('a-1', sentFailed, 'failed')),
        a.record(
          outcome('a-2', neverSent, 'failed', {
            attempts: 0,
            clientRequestId: '',
            httpStatus: null,
            error: 'interrupted',
          }),
        ),
      ]);
      const again = await b.admit([...sentFailed, ...neverSent]);
      expect(again.send).toHaveLength(20);
      await b.record(outcome('b-1', again.send, 'acked'));
      expect((await a.admit(sentFailed)).skipped.map((s) => s.reason)).toEqual(Array(10).fill('acked'));
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('never gives one id to two concurrent admitters', async () => {
    const url = await pgs.createDatabase();
    const workers = await Promise.all(['W1', 'W2', 'W3', 'W4'].map((w) => open(url, w)));
    try {
      const all = items('c', 2000);
      // Each worker walks the same ids in its own order, 50 at a time, all at once.
      const got = await Promise.all(
        workers.map(async (w, k) => {
          const order = k % 2 === 0 ? [...all] : [...all].reverse();
          const mine: string[] = [];
          await Promise.all(
            Array.from({ length: 4 }, async (_, lane) => {
              for (let g = lane * 50; g < order.length; g += 200) {
                const adm = await w.admit(order.slice(g, g + 50));
                mine.push(...ids(adm.send));
                for (const s of adm.skipped) expect(s.reason).toBe('elsewhere');
              }
            }),
          );
          return mine;
        }),
      );
      const union = got.flat();
      expect(union).toHaveLength(2000);
      expect(new Set(union).size).toBe(2000);
    } finally {
      await Promise.all(workers.map((w) => w.close()));
    }
  });

  it('close releases claims that were never recorded', async () => {
    const url = await pgs.createDatabase();
    const a = await open(url, 'A');
    const b = await open(url, 'B');
    try {
      const group = items('r', 30);
      await a.admit(group);
      await a.record(outcome('a-1', group.slice(0, 10), 'acked'));
      await a.close();
      await a.close(); // idempotent
      const after = await b.admit(group);
      expect(ids(after.send)).toEqual(ids(group.slice(10)));
      const w = await pgs.sql(
        url.split('/').pop()!,
        `SELECT stopped_at IS NOT NULL AS stopped, lease_until <= now() AS ended FROM svc_ingest.workers WHERE worker_id = 'A'`,
      );
      expect(w[0]).toEqual({ stopped: true, ended: true });
      await expect(a.admit(group)).rejects.toThrow(/closed/);
    } finally {
      await b.close();
    }
  });

  it('with resume off, acked ids pass again but live claims of others are still respected', async () => {
    const url = await pgs.createDatabase();
    const a = await open(url, 'A');
    const b = await open(url, 'B', { resume: false });
    try {
      const acked = items('ra', 5);
      await a.admit(acked);
      await a.record(outcome('a-1', acked, 'acked'));
      const inFlight = items('rf', 5);
      await a.admit(inFlight);
      const r = await b.admit([...acked, ...inFlight]);
      expect(ids(r.send)).toEqual(ids(acked));
      expect(r.skipped.map((s) => s.reason)).toEqual(Array(5).fill('elsewhere'));
      // A failed resend does not forget the earlier acknowledgement: a resuming run still skips them.
      await b.record(outcome('b-1', r.send, 'failed'));
      expect((await a.admit(acked)).skipped.map((s) => s.reason)).toEqual(Array(5).fill('acked'));
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('read mode (dry run) only looks up: no claims, no writes, not even the schema', async () => {
    const url = await pgs.createDatabase();
    const db = url.split('/').pop()!;
    const dry = await openPgLedgerStore(pgRef(url), { mode: 'read', resume: true, runId: 'dry', logger });
    expect(ids((await dry.admit(items('d', 3))).send)).toEqual(['d-0', 'd-1', 'd-2']);
    await expect(dry.record(outcome('x', items('d', 1), 'acked'))).rejects.toThrow(/read-only/);
    await dry.close();
    expect(await pgs.sql(db, `SELECT to_regclass('svc_ingest.migrations') AS t`)).toEqual([{ t: null }]);

    const a = await open(url, 'A');
    await a.admit(items('d', 2));
    await a.record(outcome('a-1', items('d', 1), 'acked'));
    const dry2 = await openPgLedgerStore(pgRef(url), { mode: 'read', resume: true, runId: 'dry2', logger });
    const r = await dry2.admit(items('d', 3));
    expect(ids(r.send)).toEqual(['d-2']);
    expect(r.skipped.map((s) => [s.item.id, s.reason])).toEqual([
      ['d-0', 'acked'],
      ['d-1', 'elsewhere'],
    ]);
    await dry2.close();
    expect((await pgs.sql(db, `SELECT count(*)::int AS n FROM svc_ingest.transactions`))[0]?.n).toBe(2);
    await a.close();
  });
});

describe('PostgreSQL ledger store: outcomes', () => {
  it('stores each outcome as the file ledger does, committing concurrent ones together', async () => {
    const url = await pgs.createDatabase();
    const db = url.split('/').pop()!;
    const a = await open(url, 'A');
    try {
      const groups = Array.from({ length: 20 }, (_, g) => items(`g${g}`, 50));
      for (const g of groups) await a.admit(g);
      await Promise.all(
        groups.map((g, k) =>
          a.record(k === 3 ? outcome(`run1-${k}`, g, 'failed') : outcome(`run1-${k}`, g, 'acked')),
        ),
      );
      const st = a.stats();
      expect(st.outcomes).toBe(20);
      expect(st.commits).toBeLessThan(20); // grouped
      expect(st.recordTrips).toBe(st.commits);
      const rows = await pgs.sql(db, `SELECT * FROM svc_ingest.batches ORDER BY batch_id`);
      expect(rows).toHaveLength(20);
      const failed = rows.find((r) => r.batch_id === 'run1-3');
      expect(failed).toMatchObject({
        run_id: 'run1',
        status: 'failed',
        request_id: null,
        client_request_id: 'c-run1-3',
        attempts: 3,
        http_status: 503,
        error: 'HTTP 503 after 3 attempts',
        source: 'in.csv',
        first_line: '2',
        last_line: '51',
        transaction_ids: ids(groups[3]!),
      });
      const acked = rows.find((r) => r.batch_id === 'run1-7');
      expect(acked).toMatchObject({
        status: 'acked',
        request_id: 'req-run1-7',
        attempts: 1,
        http_status: 200,
        error: null,
      });
      expect(acked?.ts).toBeInstanceOf(Date);
      const states = await pgs.sql(
        db,
        `SELECT state, count(*)::int AS n FROM svc_ingest.transaction_states GROUP BY state ORDER BY state`,
      );
      expect(states).toEqual([
        { state: 'acked', n: 950 },
        { state: 'failed', n: 50 },
      ]);
      const w = await pgs.sql(
        db,
        `SELECT batches_acked, records_acked, batches_failed, records_failed FROM svc_ingest.workers WHERE worker_id = 'A'`,
      );
      expect(w[0]).toEqual({
        batches_acked: '19',
        records_acked: '950',
        batches_failed: '1',
        records_failed: '50',
      });
    } finally {
      await a.close();
    }
  });

  it('a record that cannot commit rejects with LEDGER_WRITE, and so does every later one', async () => {
    const url = await pgs.createDatabase();
    const db = url.split('/').pop()!;
    const a = await open(url, 'A', { waitMs: 500 });
    try {
      await a.admit(items('w', 2));
      await pgs.sql(db, `ALTER TABLE svc_ingest.batches ADD CONSTRAINT no_more CHECK (false) NOT VALID`);
      const err = await a.record(outcome('w-1', items('w', 1), 'acked')).catch((e) => e);
      expect(err).toBeInstanceOf(SvcIngestError);
      expect(err.code).toBe('LEDGER_WRITE');
      expect(err.message).toContain(`postgres://postgres@127.0.0.1:${pgs.port}/${db}`);
      await pgs.sql(db, `ALTER TABLE svc_ingest.batches DROP CONSTRAINT no_more`);
      await expect(a.record(outcome('w-2', items('w', 1, 1), 'acked'))).rejects.toMatchObject({
        code: 'LEDGER_WRITE',
      });
    } finally {
      await a.close();
    }
  });

  it('waits out a database restart mid-run and goes on', async () => {
    const url = await pgs.createDatabase();
    const a = await open(url, 'A');
    try {
      await a.admit(items('z', 10));
      await pgs.restart(300);
      await a.record(outcome('z-1', items('z', 10), 'acked'));
      expect((await a.admit(items('z', 10))).skipped).toHaveLength(10);
    } finally {
      await a.close();
    }
  });
});

describe('PostgreSQL ledger store: credentials', () => {
  it('takes the password from a file or PGPASSWORD, and never shows it', async () => {
    const url = await pgs.createDatabase();
    const db = url.split('/').pop()!;
    const bare = pgs.urlWithoutPassword(db);
    const dir = mkdtempSync(join(tmpdir(), 'svc-pw-'));
    const file = join(dir, 'pw');
    writeFileSync(file, `${pgs.password}\n`, { mode: 0o600 });
    const viaFile = await open(bare, 'F', { passwordFile: file });
    expect(viaFile.location).toBe(bare);
    await viaFile.close();
    const saved = process.env.PGPASSWORD;
    process.env.PGPASSWORD = pgs.password;
    try {
      const viaEnv = await open(bare, 'E');
      await viaEnv.close();
    } finally {
      if (saved === undefined) delete process.env.PGPASSWORD;
      else process.env.PGPASSWORD = saved;
      rmSync(dir, { recursive: true, force: true });
    }
    const withPw = await open(url, 'U');
    expect(withPw.location).toBe(bare);
    expect(withPw.location).not.toContain(pgs.password);
    await withPw.close();
  });

  it('a wrong password or an unreachable server is one LEDGER_READ line without the password', async () => {
    const url = await pgs.createDatabase();
    const db = url.split('/').pop()!;
    const wrong = `postgres://postgres:not-the-${pgs.password}@127.0.0.1:${pgs.port}/${db}`;
    const e1 = await open(wrong, 'X').catch((e) => e);
    expect(e1).toMatchObject({ code: 'LEDGER_READ' });
    expect(e1.message).toMatch(/password authentication failed/);
    expect(e1.message).not.toContain(pgs.password);
    expect(e1.message).toContain(`postgres://postgres@127.0.0.1:${pgs.port}/${db}`);
    const started = Date.now();
    const e2 = await open(`postgres://u:secret-pw@127.0.0.1:1/${db}`, 'Y').catch((e) => e);
    expect(e2).toMatchObject({ code: 'LEDGER_READ' });
    expect(e2.message).toMatch(/ECONNREFUSED/);
    expect(e2.message).not.toContain('secret-pw');
    expect(Date.now() - started).toBeLessThan(5000); // no waiting before the first connection
  });
});

describe('PostgreSQL ledger store: round trips per batch', () => {
  it('admit + record cost 2 round trips per batch or fewer, at concurrency 8', async () => {
    const url = await pgs.createDatabase();
    const a = await open(url, 'A');
    try {
      const batches = 160;
      const lat: number[] = [];
      let next = 0;
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (next < batches) {
            const k = next++;
            const t0 = performance.now();
            const adm = await a.admit(items(`rt${k}`, 50));
            await a.record(outcome(`rt-${k}`, adm.send, 'acked'));
            lat.push(performance.now() - t0);
          }
        }),
      );
      const st = a.stats();
      const perBatch = (st.admitTrips + st.recordTrips) / batches;
      lat.sort((x, y) => x - y);
      console.log(
        `pg store: ${perBatch.toFixed(2)} round trips per batch (admit ${st.admitTrips}, record ${st.recordTrips} for ${batches} batches); ` +
          `admit+record per batch p50 ${lat[Math.floor(batches / 2)]!.toFixed(1)} ms, p95 ${lat[Math.floor(batches * 0.95)]!.toFixed(1)} ms`,
      );
      // Admits that arrive while one is under way share the next statement: at most one trip per batch.
      expect(st.admitTrips).toBeLessThan(batches);
      expect(perBatch).toBeLessThanOrEqual(2);
    } finally {
      await a.close();
    }
  });
});
