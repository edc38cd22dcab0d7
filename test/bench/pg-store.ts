// First figures of the PostgreSQL ledger store, on loopback against a throwaway server with fsync on (commits as a
// real server makes them): round trips per batch, admit and record latency per batch at a given concurrency, the
// store's own ceiling in batches/s, the cost of opening a store on a ledger of N acknowledged ids (nothing is
// loaded), and how fast `backfill plan` cuts a file. Not part of `make test`:
//   node test/bench/pg-store.ts [--batches 2000] [--concurrency 8] [--acked 2000000] [--plan-mb 200]
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { cutFile } from '../../src/backfill/cut.ts';
import type { BatchItem } from '../../src/batch/batcher.ts';
import { openPgLedgerStore } from '../../src/ledger/postgres/store.ts';
import { createLogger } from '../../src/log.ts';
import { pgRef } from '../helpers/ledger-ref.ts';
import { startPostgres } from '../helpers/postgres.ts';
import { csvOf, makeTx } from '../helpers/transactions.ts';
import { postmasterPid, treeCpuByKind, treeCpuMs, walStats } from './pg-cpu.ts';

const { values } = parseArgs({
  options: {
    batches: { type: 'string', default: '2000' },
    concurrency: { type: 'string', default: '8' },
    acked: { type: 'string', default: '2000000' },
    'plan-mb': { type: 'string', default: '200' },
  },
});
const BATCHES = Number(values.batches);
const CONC = Number(values.concurrency);
const ACKED = Number(values.acked);
const PLAN_MB = Number(values['plan-mb']);
const logger = createLogger({ level: 'warn', pretty: false });

const q = (sorted: number[], p: number): string =>
  (sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0).toFixed(2);

function items(k: number): BatchItem[] {
  return Array.from({ length: 50 }, (_, i) => ({
    id: `b${k}-${i}`,
    json: '{}',
    source: 'bench.csv',
    line: k * 50 + i + 2,
  }));
}

const pg = await startPostgres({ durable: true });
try {
  const url = await pg.createDatabase('bench');
  const store = await openPgLedgerStore(pgRef(url), { mode: 'write', resume: true, runId: 'bench', logger });
  const admitMs: number[] = [];
  const recordMs: number[] = [];
  const batchMs: number[] = [];
  let next = 0;
  const postmaster = await postmasterPid(pg);
  const db0 = treeCpuMs(postmaster);
  const kinds0 = treeCpuByKind(postmaster);
  const wal0 = await walStats(pg);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONC }, async () => {
      while (next < BATCHES) {
        const k = next++;
        const a = performance.now();
        const adm = await store.admit(items(k));
        const b = performance.now();
        await store.record({
          batchId: `bench-${k}`,
          runId: 'bench',
          status: 'acked',
          requestId: `req-${k}`,
          clientRequestId: `c-${k}`,
          attempts: 1,
          httpStatus: 200,
          items: adm.send,
        });
        const c = performance.now();
        admitMs.push(b - a);
        recordMs.push(c - b);
        batchMs.push(c - a);
      }
    }),
  );
  const wall = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const kinds1 = treeCpuByKind(postmaster);
  const st = store.stats();
  await store.close();
  const dbUs = (treeCpuMs(postmaster) - db0) * 1000;
  await new Promise((res) => setTimeout(res, 1200)); // the backends' statistics reach the views
  const wal1 = await walStats(pg);
  for (const l of [admitMs, recordMs, batchMs]) l.sort((x, y) => x - y);
  console.log(`PostgreSQL ${pg.port} (fsync on), ${BATCHES} batches of 50, concurrency ${CONC}`);
  console.log(
    `  round trips per batch: ${((st.admitTrips + st.recordTrips) / BATCHES).toFixed(2)} (admit ${st.admitTrips}, record ${st.recordTrips} commits for ${st.outcomes} outcomes)`,
  );
  const txs = BATCHES * 50;
  console.log(
    `  CPU per tx: database ${(dbUs / txs).toFixed(2)} µs (server's process tree), this process ${((cpu.user + cpu.system) / txs).toFixed(2)} µs; WAL ${((wal1.bytes - wal0.bytes) / txs).toFixed(0)} B/tx, ${((wal1.syncs - wal0.syncs) / BATCHES).toFixed(2)} WAL flushes per batch`,
  );
  console.log(
    `  the database's CPU by process, µs per tx (before the store closes): ${Object.keys(kinds1)
      .map((k) => `${k} ${((((kinds1[k] ?? 0) - (kinds0[k] ?? 0)) * 1000) / txs).toFixed(2)}`)
      .join(', ')}`,
  );
  console.log(`  admit  ms p50 ${q(admitMs, 0.5)} p95 ${q(admitMs, 0.95)} p99 ${q(admitMs, 0.99)}`);
  console.log(`  record ms p50 ${q(recordMs, 0.5)} p95 ${q(recordMs, 0.95)} p99 ${q(recordMs, 0.99)}`);
  console.log(
    `  admit+record per batch ms p50 ${q(batchMs, 0.5)} p95 ${q(batchMs, 0.95)} p99 ${q(batchMs, 0.99)}`,
  );
  console.log(
    `  store alone: ${(BATCHES / wall).toFixed(0)} batches/s = ${((BATCHES * 50) / wall).toFixed(0)} tx/s`,
  );

  if (ACKED > 0) {
    const g0 = performance.now();
    await pg.sql(
      'bench',
      `WITH b AS (INSERT INTO svc_ingest.batches (batch_id, run_id, worker_no, status, client_request_id, attempts, transaction_ids)
                  VALUES ('seed', 'seed', 0, 'acked', '', 1, '{}') RETURNING seq)
       INSERT INTO svc_ingest.transactions (transaction_id, acked_seq)
       SELECT 'seed-' || g, (SELECT seq FROM b) FROM generate_series(1, ${ACKED}) g`,
    );
    await pg.sql('bench', 'VACUUM ANALYZE svc_ingest.transactions');
    const genS = (performance.now() - g0) / 1000;
    const o0 = performance.now();
    const big = await openPgLedgerStore(pgRef(url), { mode: 'write', resume: true, runId: 'big', logger });
    const openMs = performance.now() - o0;
    const half = Array.from({ length: 50 }, (_, i) => ({
      id: i % 2 === 0 ? `seed-${1 + ((i * 7919) % ACKED)}` : `new-${i}`,
      json: '{}',
      source: 'x',
      line: i,
    }));
    const lat: number[] = [];
    for (let r = 0; r < 200; r++) {
      const a = performance.now();
      const adm = await big.admit(
        half.map((h) => ({ ...h, id: h.id.startsWith('new') ? `${h.id}-${r}` : h.id })),
      );
      lat.push(performance.now() - a);
      if (adm.skipped.length !== 25) throw new Error(`expected 25 acked, got ${adm.skipped.length}`);
    }
    await big.close();
    lat.sort((x, y) => x - y);
    console.log(
      `  ledger of ${ACKED} acked ids (generated in ${genS.toFixed(1)} s): open ${openMs.toFixed(0)} ms (nothing loaded), ` +
        `admit of 50 (half acked) p50 ${q(lat, 0.5)} ms p95 ${q(lat, 0.95)} ms; RSS ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MB`,
    );
  }

  if (PLAN_MB > 0) {
    const dir = mkdtempSync(join(tmpdir(), 'svc-plan-bench-'));
    const file = join(dir, 'plan.csv');
    const one = csvOf(Array.from({ length: 10_000 }, (_, i) => makeTx(i, 'pb')));
    const body = one.slice(one.indexOf('\n') + 1);
    const head = one.slice(0, one.indexOf('\n') + 1);
    const reps = Math.max(1, Math.round((PLAN_MB * 2 ** 20) / body.length));
    writeFileSync(file, head + body.repeat(reps));
    const c0 = performance.now();
    const cuts = await cutFile(
      { path: file, format: 'csv', gzip: false },
      { delimiter: ',', maxLineBytes: 1 << 20, partitionBytes: 64 << 20 },
    );
    const s = (performance.now() - c0) / 1000;
    console.log(
      `  plan cut: ${(cuts.size / 2 ** 20).toFixed(0)} MB CSV into ${cuts.partitions.length} partitions in ${s.toFixed(2)} s (${(cuts.size / 2 ** 20 / s).toFixed(0)} MB/s)`,
    );
    rmSync(dir, { recursive: true, force: true });
  }
} finally {
  await pg.stop();
}
