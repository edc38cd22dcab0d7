// The CPU a throwaway PostgreSQL server spends, for the PostgreSQL ledger's figures (ledger-cost.ts, pg-store.ts):
// user + system of the server's process tree from /proc — the postmaster's own and its exited children's (it waits
// for every backend, autovacuum and checkpointer it forks), plus each live descendant's own.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestPostgres } from '../helpers/postgres.ts';

const TICK_MS = 10; // USER_HZ is 100 on Linux

/** CPU ms of the process tree under `root` so far (read the difference around what is measured). */
export function treeCpuMs(root: number): number {
  return Object.values(treeCpuByKind(root)).reduce((a, b) => a + b, 0);
}

/**
 * The same by kind of process: `backend` (client connections), `autovacuum`, `walwriter`, `checkpointer`, `other`
 * (the postmaster, background writer, …), and `exited` (children the postmaster has waited for: backends of closed
 * connections, finished autovacuum workers).
 */
export function treeCpuByKind(root: number): Record<string, number> {
  const stats = new Map<number, { ppid: number; own: number; children: number; kind: string }>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const s = readFileSync(`/proc/${d}/stat`, 'utf8');
      const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
      const cmd = readFileSync(`/proc/${d}/cmdline`, 'utf8');
      const kind = /autovacuum worker/.test(cmd)
        ? 'autovacuum'
        : /walwriter/.test(cmd)
          ? 'walwriter'
          : /checkpointer/.test(cmd)
            ? 'checkpointer'
            : /postgres: \S+ \S+ [\d.]+\(/.test(cmd)
              ? 'backend'
              : 'other';
      stats.set(Number(d), {
        ppid: Number(f[1]),
        own: (Number(f[11]) + Number(f[12])) * TICK_MS,
        children: (Number(f[13]) + Number(f[14])) * TICK_MS,
        kind,
      });
    } catch {
      // gone between readdir and read
    }
  }
  const out: Record<string, number> = {
    backend: 0,
    autovacuum: 0,
    walwriter: 0,
    checkpointer: 0,
    other: 0,
    exited: 0,
  };
  const walk = (pid: number): void => {
    const p = stats.get(pid);
    if (!p) return;
    out[p.kind] = (out[p.kind] ?? 0) + p.own;
    out.exited = (out.exited ?? 0) + p.children;
    for (const [c, q] of stats) if (q.ppid === pid) walk(c);
  };
  walk(root);
  return out;
}

/** The postmaster's pid (the first line of postmaster.pid in the data directory). */
export async function postmasterPid(pg: TestPostgres): Promise<number> {
  const rows = await pg.sql<{ d: string }>('postgres', 'SELECT current_setting($1) AS d', ['data_directory']);
  return Number(readFileSync(join(String(rows[0]?.d), 'postmaster.pid'), 'utf8').split('\n')[0]);
}

/** WAL written and flushed so far: bytes, and the server's WAL syncs (fdatasync calls; from pg_stat_io (PostgreSQL 18):
 *  each synchronous commit that finds its WAL not yet flushed makes one; backends report theirs within a second). */
export async function walStats(pg: TestPostgres): Promise<{ bytes: number; syncs: number }> {
  const rows = await pg.sql<{ b: string; s: string }>(
    'postgres',
    `SELECT pg_current_wal_lsn() - '0/0'::pg_lsn AS b, (SELECT coalesce(sum(fsyncs), 0) FROM pg_stat_io WHERE object = 'wal') AS s`,
  );
  return { bytes: Number(rows[0]?.b ?? 0), syncs: Number(rows[0]?.s ?? 0) };
}
