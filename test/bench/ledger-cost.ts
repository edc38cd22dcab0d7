// What an acknowledged id costs the ledger, in the format `send` writes (destinations included): one `send` of N
// rows (default 200,000) through the launcher against the simulator (no latency), into a ledger file and into a
// PostgreSQL ledger (a throwaway PostgreSQL 18, fsync on); bytes per id on disk (file) and in PostgreSQL (each
// table and its indexes, after VACUUM ANALYZE). Run under the bench lock:
//   flock /tmp/svc-bench.lock node test/bench/ledger-cost.ts [rows]
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPostgres } from '../helpers/postgres.ts';
import { dataFile } from './cluster.ts';
import { LAUNCHER, runCli, startDaemon } from './measure.ts';

const rows = Number(process.argv[2] ?? 200_000);
const input = await dataFile(rows, 0);
const work = mkdtempSync(join(tmpdir(), 'svc-bench-cost-'));
const sim = await startDaemon(['simulate', '--port', '0', '--log-level', 'warn'], LAUNCHER);
const pg = await startPostgres({ durable: true });
const out: Record<string, unknown> = { rows };
try {
  const send = async (ledger: string) => {
    const r = await runCli([
      'send',
      '--base-url',
      sim.firstLine,
      '--concurrency',
      '8',
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
  };
  const file = join(work, 'ledger.ndjson');
  await send(file);
  const bytes = statSync(file).size;
  out.file = { bytes, bytesPerId: +(bytes / rows).toFixed(1) };

  const url = await pg.createDatabase('cost');
  await send(url);
  await pg.sql('cost', 'VACUUM ANALYZE');
  const sizes = await pg.sql<{ t: string; heap: string; idx: string; total: string }>(
    'cost',
    `SELECT c.relname AS t, pg_table_size(c.oid) AS heap, pg_indexes_size(c.oid) AS idx,
            pg_total_relation_size(c.oid) AS total
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = 'svc_ingest' AND c.relkind = 'r' ORDER BY 1`,
  );
  const per = (v: string) => +(Number(v) / rows).toFixed(1);
  out.pg = Object.fromEntries(
    sizes.map((s) => [
      s.t,
      { tableBytesPerId: per(s.heap), indexBytesPerId: per(s.idx), totalBytesPerId: per(s.total) },
    ]),
  );
  out.pgTotalBytesPerId = per(String(sizes.reduce((a, s) => a + Number(s.total), 0)));
} finally {
  await sim.stop();
  await pg.stop();
  rmSync(work, { recursive: true, force: true });
}
process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
