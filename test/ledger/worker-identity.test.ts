// Whether the holder of a worker id is gone, on a real PostgreSQL and real processes: on this host by its pid, the
// process's start time and the boot id; on another host by its lease (a heartbeat seen while waiting means alive).
// A process that lost its id finds its lease lapsed and never ends its successor's.
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { holderState, ownIdentity, processStartOf } from '../../src/ledger/postgres/identity.ts';
import { openPgSession } from '../../src/ledger/postgres/session.ts';
import { createLogger } from '../../src/log.ts';
import { dbName } from '../helpers/backfill.ts';
import { pgRef } from '../helpers/ledger-ref.ts';
import { usePostgres } from '../helpers/postgres.ts';

const pgs = usePostgres();
const logger = createLogger({ level: 'silent', pretty: false });
const me = ownIdentity();

const holder = (o: Partial<Parameters<typeof holderState>[0]>) => ({
  host: me.host,
  pid: me.pid,
  boot_id: me.bootId,
  process_start: me.processStart,
  pid_namespace: me.pidNamespace,
  run_id: 'r',
  started_at: new Date(),
  heartbeat_at: new Date(),
  live: true,
  left_ms: 1000,
  ...o,
});

describe('the holder of a worker id', () => {
  it('on this host: alive while its process runs (the same start time), gone once it exits, its pid reused, or the host rebooted', async () => {
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)'], { stdio: 'ignore' });
    try {
      const pid = child.pid as number;
      const start = processStartOf(pid);
      expect(start).toMatch(/^\d+$/);
      expect(holderState(holder({ pid, process_start: start }), me, false)).toBe('alive');
      expect(holderState(holder({ pid, process_start: '1' }), me, false)).toBe('dead'); // pid reused
      expect(holderState(holder({ pid, boot_id: 'another-boot' }), me, false)).toBe('dead');
      expect(holderState(holder({ pid: me.pid }), me, false)).toBe('dead'); // an earlier process with our pid
      expect(holderState(holder({ pid: me.pid }), me, true)).toBe('alive'); // this process, already registered
      expect(holderState(holder({ pid, host: 'elsewhere' }), me, false)).toBe('unknown');
      // A container that shares the host's name but not its pids: its pid says nothing here.
      expect(holderState(holder({ pid: 999_999, pid_namespace: 'pid:[1]' }), me, false)).toBe('unknown');
    } finally {
      child.kill('SIGKILL');
    }
    await new Promise((r) => child.once('exit', r));
    expect(holderState(holder({ pid: child.pid as number }), me, false)).toBe('dead');
  });

  it('on another host: refused while it renews its lease; taken once its lease runs out, and the old one is fenced off', async () => {
    const url = await pgs.createDatabase();
    const db = dbName(url);
    const elsewhere = `UPDATE svc_ingest.workers SET host = 'other-host' WHERE worker_id = $1`;
    const alive = await openPgSession(pgRef(url, { leaseMs: 1500 }), {
      runId: 'r1',
      workerId: 'w',
      logger,
      heartbeatMs: 100,
    });
    await pgs.sql(db, elsewhere, ['w']);
    try {
      const t0 = performance.now();
      await expect(
        openPgSession(pgRef(url, { leaseMs: 1500 }), { runId: 'r2', workerId: 'w', logger }),
      ).rejects.toMatchObject({
        code: 'USAGE_INVALID',
        message: expect.stringMatching(/^worker id w is held by a live worker \(host other-host, pid \d+/),
      });
      expect(performance.now() - t0).toBeLessThan(1500);
    } finally {
      await alive.close();
    }

    const silent = await openPgSession(pgRef(url, { leaseMs: 1200 }), {
      runId: 'r3',
      workerId: 'v',
      logger,
      heartbeatMs: 600_000,
    });
    await pgs.sql(db, elsewhere, ['v']);
    const t1 = performance.now();
    const next = await openPgSession(pgRef(url, { leaseMs: 5000 }), { runId: 'r4', workerId: 'v', logger });
    try {
      expect(performance.now() - t1).toBeGreaterThan(500); // it waited for the lease
      expect(next.workerNo).toBe(silent.workerNo);
      expect(await silent.heartbeat()).toEqual({ lapsed: true }); // fenced: the row is no longer its own
      await silent.close(); // does not end its successor's lease
      const [row] = await pgs.sql<{ live: boolean; run_id: string }>(
        db,
        `SELECT lease_until > now() AND stopped_at IS NULL AS live, run_id FROM svc_ingest.workers WHERE worker_id = 'v'`,
      );
      expect(row).toEqual({ live: true, run_id: 'r4' });
    } finally {
      await next.close();
    }
  });

  it('in this process: a second session under an id already open here is refused at once', async () => {
    const url = await pgs.createDatabase();
    const a = await openPgSession(pgRef(url), { runId: 'a1', workerId: 'same', logger });
    try {
      await expect(
        openPgSession(pgRef(url), { runId: 'a2', workerId: 'same', logger }),
      ).rejects.toMatchObject({
        code: 'USAGE_INVALID',
      });
    } finally {
      await a.close();
    }
    const again = await openPgSession(pgRef(url), { runId: 'a3', workerId: 'same', logger });
    await again.close();
  });
});
