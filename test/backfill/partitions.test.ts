// Backfill partitions in a real PostgreSQL: a plan recorded once (idempotent, also when planners race), partitions
// claimed with SKIP LOCKED (two claimers never get the same one), claimed again after the holder's lease ran out,
// released, completed, and the status that sums it all.
import { describe, expect, it } from 'vitest';
import {
  claimPartition,
  completePartition,
  type PlannedInput,
  recordPlan,
  releasePartition,
  reportProgress,
} from '../../src/ledger/postgres/backfill/partitions.ts';
import { backfillStatus } from '../../src/ledger/postgres/backfill/status.ts';
import { connectLedgerDb, openPgSession, type PgSession } from '../../src/ledger/postgres/session.ts';
import { createLogger } from '../../src/log.ts';
import { pgRef } from '../helpers/ledger-ref.ts';
import { usePostgres } from '../helpers/postgres.ts';

const pgs = usePostgres();
const logger = createLogger({ level: 'silent', pretty: false });

function input(path: string, n: number, over: Partial<PlannedInput> = {}): PlannedInput {
  return {
    path,
    size: n * 100,
    mtimeMs: 1_763_800_000_000,
    format: 'csv',
    gzip: false,
    delimiter: ',',
    recordDelimiter: '\n',
    columns: ['transactionId', 'postedAmount'],
    partitionBytes: 100,
    partitions: Array.from({ length: n }, (_, k) => ({
      start: k * 100,
      end: (k + 1) * 100,
      firstLine: 1 + k * 3,
    })),
    ...over,
  };
}

async function plan(url: string, ...inputs: PlannedInput[]): Promise<void> {
  const { db } = await connectLedgerDb(pgRef(url), { logger, write: true });
  try {
    for (const i of inputs) await recordPlan(db, i, 'test');
  } finally {
    await db.close();
  }
}

const session = (url: string, workerId: string, leaseMs = 30_000, heartbeatMs?: number): Promise<PgSession> =>
  openPgSession(pgRef(url, { leaseMs }), { runId: workerId, workerId, logger, heartbeatMs });

const zero = { read: 0, sent: 0, skipped: 0, failed: 0, rejected: 0 };

describe('backfill plan in the ledger', () => {
  it('records an input once: planning it again adds nothing, a changed file is refused', async () => {
    const url = await pgs.createDatabase();
    const { db } = await connectLedgerDb(pgRef(url), { logger, write: true });
    try {
      const a = input('/shared/a.csv', 5);
      expect(await recordPlan(db, a, 'test')).toMatchObject({ created: true, partitions: 5 });
      expect(await recordPlan(db, a, 'test')).toMatchObject({ created: false, partitions: 5 });
      await expect(recordPlan(db, { ...a, size: 999 }, 'test')).rejects.toThrow(
        /\/shared\/a\.csv was planned when it had 500 bytes .* it now has 999/,
      );
      const rows = await db.query(
        'other',
        'SELECT seq, start_byte, end_byte, first_line, state FROM svc_ingest.partitions ORDER BY seq',
      );
      expect(rows.rows).toHaveLength(5);
      expect(rows.rows[2]).toEqual({
        seq: 2,
        start_byte: '200',
        end_byte: '300',
        first_line: '7',
        state: 'pending',
      });
      const inp = await db.query(
        'other',
        'SELECT path, columns, record_delimiter, partition_bytes FROM svc_ingest.inputs',
      );
      expect(inp.rows).toEqual([
        {
          path: '/shared/a.csv',
          columns: ['transactionId', 'postedAmount'],
          record_delimiter: '\n',
          partition_bytes: '100',
        },
      ]);
    } finally {
      await db.close();
    }
  });

  it('planners racing on the same file record it once', async () => {
    const url = await pgs.createDatabase();
    await plan(url); // schema first, so the racers do not also race to migrate
    const dbs = await Promise.all(
      [1, 2, 3, 4].map(() => connectLedgerDb(pgRef(url), { logger, write: true })),
    );
    try {
      const results = await Promise.all(
        dbs.map(({ db }) => recordPlan(db, input('/shared/race.csv', 20), 'test')),
      );
      expect(results.filter((r) => r.created)).toHaveLength(1);
      expect(results.map((r) => r.partitions)).toEqual([20, 20, 20, 20]);
      const n = await dbs[0]!.db.query('other', 'SELECT count(*)::int AS n FROM svc_ingest.partitions');
      expect(n.rows[0]?.n).toBe(20);
    } finally {
      await Promise.all(dbs.map(({ db }) => db.close()));
    }
  });
});

describe('claiming partitions', () => {
  it('never gives one partition to two claimers', async () => {
    const url = await pgs.createDatabase();
    await plan(url, input('/shared/a.csv', 30), input('/shared/b.csv', 30));
    const workers = await Promise.all(['W1', 'W2', 'W3', 'W4', 'W5'].map((w) => session(url, w)));
    try {
      const got = await Promise.all(
        workers.map(async (s) => {
          const mine: number[] = [];
          for (let p = await claimPartition(s); p; p = await claimPartition(s)) {
            mine.push(p.partitionNo);
            expect(p.claims).toBe(1);
          }
          return mine;
        }),
      );
      const all = got.flat();
      expect(all).toHaveLength(60);
      expect(new Set(all).size).toBe(60);
      expect(got.filter((g) => g.length > 0).length).toBeGreaterThan(1); // shared out, not one worker taking all
    } finally {
      await Promise.all(workers.map((s) => s.close()));
    }
  });

  it('hands a claimed partition over with what a worker needs to read it', async () => {
    const url = await pgs.createDatabase();
    await plan(url, input('/shared/a.csv', 2, { mapping: 'northwind-csv', mappingSha256: 'ab'.repeat(32) }));
    const s = await session(url, 'W');
    try {
      const p = await claimPartition(s);
      expect(p).toEqual({
        partitionNo: expect.any(Number),
        inputNo: expect.any(Number),
        seq: 0,
        start: 0,
        end: 100,
        firstLine: 1,
        claims: 1,
        takeovers: 0,
        takeover: false,
        rejectsThrough: 0,
        path: '/shared/a.csv',
        size: 200,
        mtimeMs: 1_763_800_000_000,
        format: 'csv',
        gzip: false,
        delimiter: ',',
        recordDelimiter: '\n',
        columns: ['transactionId', 'postedAmount'],
        mapping: 'northwind-csv',
        mappingSha256: 'ab'.repeat(32),
      });
      expect((await claimPartition(s))?.seq).toBe(1);
      expect(await claimPartition(s)).toBeNull();
    } finally {
      await s.close();
    }
  });

  it('claims again a partition whose worker’s lease ran out; the late worker can no longer complete it', async () => {
    const url = await pgs.createDatabase();
    await plan(url, input('/shared/a.csv', 1));
    const dead = await session(url, 'dead', 1200, 600_000); // no heartbeat in time
    const live = await session(url, 'live');
    try {
      const p = await claimPartition(dead);
      expect(p?.seq).toBe(0);
      expect(await claimPartition(live)).toBeNull(); // held while the lease lasts
      await new Promise((r) => setTimeout(r, 1400));
      expect((await backfillStatus(live.db)).partitions).toMatchObject({ stale: 1, working: 0 });
      const again = await claimPartition(live);
      expect(again).toMatchObject({ partitionNo: p?.partitionNo, claims: 2, takeovers: 1, takeover: true });
      expect(await completePartition(dead, p!.partitionNo, { ...zero, read: 1 })).toBe(false);
      expect(
        await completePartition(live, p!.partitionNo, {
          read: 10,
          sent: 7,
          skipped: 1,
          failed: 1,
          rejected: 1,
        }),
      ).toBe(true);
      expect(await claimPartition(live)).toBeNull();
    } finally {
      await dead.close();
      await live.close();
    }
  });

  it('a released partition is pending again; a closed worker’s partition is free at once', async () => {
    const url = await pgs.createDatabase();
    await plan(url, input('/shared/a.csv', 2));
    const a = await session(url, 'A');
    const b = await session(url, 'B');
    try {
      const p0 = await claimPartition(a);
      const p1 = await claimPartition(a);
      expect(await releasePartition(a, p0!.partitionNo)).toBe(true);
      expect(await claimPartition(b)).toMatchObject({ seq: 0, claims: 2 });
      await a.close(); // ends the lease: p1 is free for anyone
      expect(await claimPartition(b)).toMatchObject({ partitionNo: p1?.partitionNo, claims: 2 });
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe('backfill status', () => {
  it('sums partitions by state, records, bytes, rate, ETA and per worker', async () => {
    const url = await pgs.createDatabase();
    await plan(url, input('/shared/a.csv', 4));
    const a = await session(url, 'A');
    const b = await session(url, 'B');
    try {
      const before = await backfillStatus(a.db);
      expect(before).toMatchObject({
        inputs: 1,
        partitions: { total: 4, pending: 4, working: 0, stale: 0, done: 0 },
        bytes: { total: 400, done: 0 },
        startedAt: null,
        etaSeconds: null,
        done: false,
      });
      const p0 = await claimPartition(a);
      const p1 = await claimPartition(b);
      await new Promise((r) => setTimeout(r, 50));
      await completePartition(a, p0!.partitionNo, { read: 30, sent: 25, skipped: 2, failed: 1, rejected: 2 });
      await reportProgress(b, p1!.partitionNo, 50, {
        read: 12,
        sent: 12,
        skipped: 0,
        failed: 0,
        rejected: 0,
      });
      const mid = await backfillStatus(a.db);
      expect(mid.partitions).toEqual({
        total: 4,
        pending: 2,
        working: 1,
        stale: 0,
        done: 1,
        takenOver: 0,
        takeovers: 0,
      });
      expect(mid.bytes).toEqual({ total: 400, done: 150 });
      expect(mid.records).toEqual({ read: 42, sent: 37, skipped: 2, failed: 1, rejected: 2 });
      expect(mid.rate.recordsPerSecond).toBeGreaterThan(0);
      expect(mid.etaSeconds).toBeGreaterThan(0);
      expect(mid.workers.map((w) => [w.workerId, w.live, w.done, w.working, w.records.sent])).toEqual([
        ['A', true, 1, 0, 25],
        ['B', true, 0, 1, 12],
      ]);
      for (let p = await claimPartition(b); p; p = await claimPartition(b))
        await completePartition(b, p.partitionNo, { ...zero, read: 1, sent: 1 });
      await completePartition(b, p1!.partitionNo, { ...zero, read: 20, sent: 20 });
      const end = await backfillStatus(a.db);
      expect(end).toMatchObject({ done: true, etaSeconds: 0, bytes: { total: 400, done: 400 } });
      expect(end.records.sent).toBe(25 + 20 + 2);
      expect(end.finishedAt).not.toBeNull();
    } finally {
      await a.close();
      await b.close();
    }
  });
});
