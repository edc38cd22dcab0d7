// The simulator's own CPU per transaction: it shares the cores with svc-ingest in the end-to-end bench, so what it
// spends a batch lowers the ratio. Starts `svc-ingest simulate` (as users do, through the launcher) and posts
// batches of 50 canonical transactions (all 34 fields, from gen.ts) at a concurrency from this process, with a
// plain undici Pool so the driver costs little; the simulator's CPU comes from /proc.
// Usage: node test/bench/simulator.ts [--requests 20000] [--concurrency 16] [--runs 3] [--latency-ms 0]
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { row } from './gen.ts';
import { LAUNCHER, startDaemon } from './measure.ts';
import { median, procCpuMs } from './scenarios.ts';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '20000' },
    concurrency: { type: 'string', default: '16' },
    runs: { type: 'string', default: '3' },
    'latency-ms': { type: 'string', default: '0' },
  },
});
const REQUESTS = Number(values.requests);
const CONC = Number(values.concurrency);
const BATCH = 50;

function body(b: number): string {
  const txs: string[] = [];
  for (let k = 0; k < BATCH; k++) txs.push(row('canonical-ndjson', b * BATCH + k).trimEnd());
  return `{"transactions":[${txs.join(',')}]}`;
}

async function once(url: string, pid: number): Promise<{ usPerTx: number; wallS: number }> {
  const pool = new Pool(url, { connections: CONC });
  await pool.request({ path: '/__sim/reset', method: 'POST' }).then((r) => r.body.dump());
  const cpu0 = procCpuMs(pid);
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONC }, async () => {
      while (next < REQUESTS) {
        const b = next++;
        const res = await pool.request({
          path: '/v2/data/transactions',
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-request-id': `sim-${b}` },
          body: body(b),
        });
        await res.body.dump();
        if (res.statusCode !== 200) throw new Error(`batch ${b}: HTTP ${res.statusCode}`);
      }
    }),
  );
  const wallS = (performance.now() - t0) / 1000;
  const cpuMs = procCpuMs(pid) - cpu0;
  await pool.close();
  return { usPerTx: (cpuMs * 1000) / (REQUESTS * BATCH), wallS };
}

const sim = await startDaemon(
  ['simulate', '--port', '0', '--latency-ms', String(values['latency-ms']), '--log-level', 'warn'],
  LAUNCHER,
);
try {
  const us: number[] = [];
  for (let r = 1; r <= Number(values.runs); r++) {
    const x = await once(sim.firstLine, sim.pid);
    us.push(x.usPerTx);
    process.stderr.write(
      `[simulator] run ${r}: ${x.usPerTx.toFixed(2)} µs CPU per transaction, ${x.wallS.toFixed(1)} s, load ${loadavg()[0]?.toFixed(2)}\n`,
    );
  }
  process.stdout.write(
    `simulator CPU per transaction (median of ${us.length}, ${REQUESTS} requests of ${BATCH} at concurrency ${CONC}): ${median(us).toFixed(2)} µs\n`,
  );
} finally {
  await sim.stop();
}
