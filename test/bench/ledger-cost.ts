// What an acknowledged id costs the ledger, in the format `send` writes (destinations included): `send`s of N rows
// (default 200,000) through the launcher against the simulator, into a ledger file and into a PostgreSQL ledger (a
// throwaway PostgreSQL 18, fsync on). Per run: bytes per id on disk (file) and in PostgreSQL (each table and its
// indexes, after VACUUM ANALYZE), and the CPU per delivered tx of the client (its own getrusage) and of the database
// (user + system of the server's process tree from /proc: the postmaster with its exited children, and every live
// child; autovacuum inside the send's window included), with the delivered rate against the ceiling
// (concurrency × 50 / latency) and the load average. Run under the bench lock:
//   flock /tmp/svc-bench.lock node test/bench/ledger-cost.ts [--rows 200000] [--concurrency 8] [--latency-ms 0]
//     [--runs 1] [--no-file]
// Without --no-file each run sends the same rows into a ledger file first (the anchor: its bytes per id, and the
// client's CPU per tx in the same moment).
// To compare two checkouts, copy this file into the other (a `git archive` of the base commit) and run the two
// alternately: each measures its own launcher and sources.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startPostgres } from '../helpers/postgres.ts';
import { dataFile } from './cluster.ts';
import { LAUNCHER, runCli, startDaemon } from './measure.ts';
import { postmasterPid, treeCpuByKind, treeCpuMs, walStats } from './pg-cpu.ts';

const { values } = parseArgs({
  allowPositionals: true,
  options: {
    rows: { type: 'string', default: '200000' },
    concurrency: { type: 'string', default: '8' },
    'latency-ms': { type: 'string', default: '0' },
    runs: { type: 'string', default: '1' },
    'no-file': { type: 'boolean', default: false },
    /** perf record the server's processes during each send into this file (perf report -i FILE). */
    perf: { type: 'string' },
  },
});
const rows = Number(values.rows);
const conc = Number(values.concurrency);
const latencyMs = Number(values['latency-ms']);
const input = await dataFile(rows, 0);
const work = mkdtempSync(join(tmpdir(), 'svc-bench-cost-'));
const sim = await startDaemon(
  ['simulate', '--port', '0', '--log-level', 'warn', '--latency-ms', String(latencyMs)],
  LAUNCHER,
);
const pg = await startPostgres({ durable: true });
const out: Record<string, unknown> = { rows, concurrency: conc, latencyMs, launcher: LAUNCHER };
const load = () => loadavg().map((l) => +l.toFixed(2));
try {
  const postmaster = await postmasterPid(pg);
  const send = async (ledger: string) => {
    const r = await runCli([
      'send',
      '--base-url',
      sim.firstLine,
      '--concurrency',
      String(conc),
      '--ledger',
      ledger,
      '--rejects',
      join(work, 'rejects.ndjson'),
      '--json',
      '--log-level',
      'warn',
      input,
    ]);
    const s = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as { sent?: number };
    if (s.sent !== rows) throw new Error(`sent ${s.sent} of ${rows}: ${r.stderr.slice(-500)}`);
    return r;
  };
  const ceiling = latencyMs > 0 ? (conc * 50 * 1000) / latencyMs : Number.NaN;
  const per = (v: string | number) => +(Number(v) / rows).toFixed(1);
  const runs: unknown[] = [];
  for (let i = 0; i < Number(values.runs); i++) {
    // The anchor: the same send into a ledger file, just before each PostgreSQL run (the client's CPU in the same
    // moment, so the PostgreSQL ledger's share of the client is the difference).
    let fileRun: Record<string, number> | undefined;
    if (!values['no-file']) {
      const file = join(work, `ledger${i}.ndjson`);
      const fr = await send(file);
      const bytes = statSync(file).size;
      fileRun = {
        bytesPerId: +(bytes / rows).toFixed(1),
        clientUsPerTx: +((fr.cpuMs * 1000) / rows).toFixed(2),
        deliveredOfCeiling: +(rows / (fr.wallMs / 1000) / ceiling).toFixed(3),
      };
    }
    const url = await pg.createDatabase(`cost${i}`);
    const loadBefore = load();
    const wal0 = await walStats(pg);
    const db0 = treeCpuMs(postmaster);
    const kind0 = treeCpuByKind(postmaster);
    const perf = values.perf
      ? spawn('perf', ['record', '-F', '499', '-g', '-p', String(postmaster), '-o', values.perf], {
          stdio: 'ignore',
        })
      : undefined;
    const r = await send(url);
    if (perf) await new Promise((res) => perf.once('exit', res).kill('SIGINT'));
    const dbMs = treeCpuMs(postmaster) - db0;
    const kind1 = treeCpuByKind(postmaster);
    await new Promise((res) => setTimeout(res, 1200)); // the backends' statistics reach the views
    const wal1 = await walStats(pg);
    const commits = await pg.sql<{ n: string }>(
      `cost${i}`,
      'SELECT xact_commit AS n FROM pg_stat_database WHERE datname = current_database()',
    );
    // Row versions written per id: inserted, updated, of which heap-only (no index entry).
    const tup = await pg.sql<{ t: string; ins: string; upd: string; hot: string }>(
      `cost${i}`,
      `SELECT relname AS t, n_tup_ins AS ins, n_tup_upd AS upd, n_tup_hot_upd AS hot FROM pg_stat_user_tables
       WHERE schemaname = 'svc_ingest' AND n_tup_ins > $1`,
      [rows / 100],
    );
    const run: Record<string, unknown> = {
      load: loadBefore,
      ...(fileRun ? { file: fileRun } : {}),
      wallS: +(r.wallMs / 1000).toFixed(2),
      clientUsPerTx: +((r.cpuMs * 1000) / rows).toFixed(2),
      dbUsPerTx: +((dbMs * 1000) / rows).toFixed(2),
      // The same by kind of process (backends of closed connections count as `exited`).
      dbUsPerTxByKind: Object.fromEntries(
        Object.keys(kind1).map((k) => [k, +((((kind1[k] ?? 0) - (kind0[k] ?? 0)) * 1000) / rows).toFixed(2)]),
      ),
      deliveredOfCeiling: +(rows / (r.wallMs / 1000) / ceiling).toFixed(3),
      walBytesPerTx: +((wal1.bytes - wal0.bytes) / rows).toFixed(1),
      walFlushesPerBatch: +(((wal1.syncs - wal0.syncs) * 50) / rows).toFixed(2),
      // Transactions committed in the run's database (each statement of the store is one): admits, records,
      // heartbeats and the few at start and close.
      statementsPerBatch: +((Number(commits[0]?.n ?? 0) * 50) / rows).toFixed(2),
      rowsPerTx: Object.fromEntries(
        tup.map((t) => [t.t, { ins: per(t.ins), upd: per(t.upd), hot: per(t.hot) }]),
      ),
    };
    await pg.sql(`cost${i}`, 'VACUUM ANALYZE');
    const sizes = await pg.sql<{ t: string; heap: string; idx: string; total: string }>(
      `cost${i}`,
      `SELECT c.relname AS t, pg_table_size(c.oid) AS heap, pg_indexes_size(c.oid) AS idx,
              pg_total_relation_size(c.oid) AS total
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = 'svc_ingest' AND c.relkind = 'r' ORDER BY 1`,
    );
    run.pg = Object.fromEntries(
      sizes
        .filter((s) => Number(s.total) > rows)
        .map((s) => [s.t, { tableBytesPerId: per(s.heap), indexBytesPerId: per(s.idx) }]),
    );
    run.pgTotalBytesPerId = per(sizes.reduce((a, s) => a + Number(s.total), 0));
    runs.push(run);
    process.stderr.write(`${JSON.stringify(run)}\n`);
  }
  out.runs = runs;
} finally {
  await sim.stop();
  await pg.stop();
  rmSync(work, { recursive: true, force: true });
}
process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
