// Per-request CPU of each transport candidate beneath ky (test/bench/transport-candidates.ts), through the real
// client (postTransactionsJson of the batch's body as a send encodes it, 50 transactions a request) against the simulator running as its own process.
// Usage: node test/bench/transport.ts [--candidates a,b (bare-pool: an undici Pool, no ky: the anchor)] [--concurrency 8,32] [--requests N] [--runs N]
//        [--latency-ms L]
// Each (candidate, concurrency, run) is a fresh child process: warm-up, then N requests; the child reports its
// process CPU (user+sys, all threads) per request; the simulator's CPU over the same window comes from /proc.
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { encodeRecords, releaseBody, releaseWires, type WireRecord } from '../../src/client/body.ts';
import { createClient } from '../../src/client/index.ts';
import { loadConfig } from '../../src/config/index.ts';
import { makeTx } from '../helpers/transactions.ts';
import { LAUNCHER, ROOT, startDaemon } from './measure.ts';
import { procCpuMs, statCpuMs } from './scenarios.ts';
import { CANDIDATES } from './transport-candidates.ts';

const BATCH = 50;
const POOL = 64;
/** The candidate name of the anchor (a bare undici Pool beneath no client). */
const BARE = 'bare-pool';

/**
 * The anchor: a bare undici Pool, no ky, no client, no Request/Response objects: the same bodies joined and sent as
 * a string, the answer read as text and parsed (what any client must do at least).
 */
async function bareClient(url: string, concurrency: number) {
  const { Pool } = await import('undici');
  const pool = new Pool(url, { connections: concurrency });
  return {
    async post(txs: string[], requestId: string): Promise<void> {
      const res = await pool.request({
        path: '/v2/data/transactions',
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-request-id': requestId },
        body: `{"transactions":[${txs.join(',')}]}`,
      });
      const b = JSON.parse(await res.body.text()) as { requestId?: string };
      if (res.statusCode !== 200 || typeof b.requestId !== 'string')
        throw new Error(`HTTP ${res.statusCode}`);
    },
    close: () => pool.close(),
  };
}

async function child(name: string, url: string, concurrency: number, requests: number): Promise<void> {
  if (name === BARE) return measure(await bareClient(url, concurrency), name, concurrency, requests);
  const make = CANDIDATES[name];
  if (!make) throw new Error(`unknown candidate ${name}`);
  const cand = make({ connections: concurrency });
  // Every call is given one long-lived signal, as a send gives each its stop signal.
  const stop = new AbortController().signal;
  const config = loadConfig({ env: {}, flags: { baseUrl: { value: url, flag: '--base-url' } } });
  const client = createClient(config, {
    fetch: cand.fetch as typeof fetch,
    fetchTakesOwnOptions: cand.ownOptions === true,
  });
  await measure(
    {
      // As a send posts a batch: its records' JSON encoded once into the body (encodeRecords), then posted; the body's
      // and the records' holds on their slab given back once it is answered, so the slab is reused as in a send.
      post: async (txs, requestId) => {
        const records: WireRecord[] = txs.map((json) => ({ json }));
        const body = encodeRecords(records);
        try {
          await client.postTransactionsJson(body, { requestId, signal: stop });
        } finally {
          releaseBody(body.bytes);
          releaseWires(records);
        }
      },
      close: async () => {
        await client.close();
        await cand.close();
      },
    },
    name,
    concurrency,
    requests,
  );
}

/**
 * CPU so far of this process's main thread and of all its other threads (V8's helpers, libuv's pool), in µs, from
 * /proc/self/task (Linux); null elsewhere. The request path's excess over the bare Pool is split by it.
 */
function threadCpuUs(): { main: number; others: number } | null {
  let tasks: string[];
  try {
    tasks = readdirSync('/proc/self/task');
  } catch {
    return null;
  }
  let main = 0;
  let others = 0;
  for (const t of tasks) {
    const ms = statCpuMs(`/proc/self/task/${t}/stat`);
    if (Number.isNaN(ms)) continue; // a thread that ended between the listing and the read
    if (Number(t) === process.pid) main += ms * 1000;
    else others += ms * 1000;
  }
  return { main, others };
}

async function measure(
  c: { post(txs: string[], requestId: string): Promise<void>; close(): Promise<unknown> },
  name: string,
  concurrency: number,
  requests: number,
): Promise<void> {
  const bodies = Array.from({ length: POOL }, (_, b) =>
    Array.from({ length: BATCH }, (_, k) => JSON.stringify(makeTx(b * BATCH + k, `t${name}`))),
  );
  let seq = 0;
  const run = async (n: number) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < n) {
          next++;
          const i = seq++;
          await c.post(bodies[i % POOL] as string[], `r-${i}`);
        }
      }),
    );
  };
  await run(Math.max(200, requests / 10));
  global.gc?.();
  const th0 = threadCpuUs();
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await run(requests);
  const wallMs = performance.now() - t0;
  const c1 = process.cpuUsage(c0);
  const th1 = threadCpuUs();
  await c.close();
  const threads =
    th0 && th1
      ? {
          mainUsPerRequest: (th1.main - th0.main) / requests,
          helpersUsPerRequest: (th1.others - th0.others) / requests,
        }
      : {};
  process.stdout.write(
    `${JSON.stringify({ cpuUsPerRequest: (c1.user + c1.system) / requests, sysUsPerRequest: c1.system / requests, ...threads, wallMs, rss: process.memoryUsage().rss })}\n`,
  );
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

async function main(argv: string[]): Promise<void> {
  if (argv[0] === '--child')
    return child(argv[1] as string, argv[2] as string, Number(argv[3]), Number(argv[4]));
  const opt = (flag: string, dflt: string) => {
    const i = argv.indexOf(flag);
    return i === -1 ? dflt : (argv[i + 1] as string);
  };
  const names = opt('--candidates', [...Object.keys(CANDIDATES), BARE].join(',')).split(',');
  const concs = opt('--concurrency', '8,32').split(',').map(Number);
  const requests = Number(opt('--requests', '3000'));
  const runs = Number(opt('--runs', '3'));
  const latency = opt('--latency-ms', '10');
  const sim = await startDaemon(
    ['simulate', '--port', '0', '--latency-ms', latency, '--log-level', 'warn'],
    LAUNCHER,
  );
  const results: Record<string, { cpu: number[]; sim: number[]; wall: number[]; load: number[] }> = {};
  try {
    for (const c of concs) {
      for (let r = 1; r <= runs; r++) {
        for (const name of names) {
          await fetch(`${sim.firstLine}/__sim/reset`, { method: 'POST' });
          const s0 = procCpuMs(sim.pid);
          const out = await new Promise<string>((resolve, reject) => {
            const p = spawn(
              process.execPath,
              ['test/bench/transport.ts', '--child', name, sim.firstLine, String(c), String(requests)],
              {
                cwd: ROOT,
                stdio: ['ignore', 'pipe', 'inherit'],
              },
            );
            let buf = '';
            p.stdout.on('data', (d: Buffer) => {
              buf += d.toString();
            });
            p.once('close', (code) =>
              code === 0 ? resolve(buf) : reject(new Error(`${name} exited ${code}`)),
            );
          });
          const simMs = procCpuMs(sim.pid) - s0;
          const res = JSON.parse(out.trim().split('\n').pop() as string) as {
            cpuUsPerRequest: number;
            sysUsPerRequest: number;
            wallMs: number;
          };
          const key = `${name} c${c}`;
          results[key] ??= { cpu: [], sim: [], wall: [], load: [] };
          results[key].cpu.push(res.cpuUsPerRequest);
          // The simulator's window includes the child's warm-up (requests / 10 more), so scale it.
          results[key].sim.push((simMs * 1000) / (requests + Math.max(200, requests / 10)));
          results[key].wall.push(res.wallMs);
          results[key].load.push(loadavg()[0] as number);
          process.stderr.write(
            `[transport] ${key} run ${r}: ${res.cpuUsPerRequest.toFixed(0)} µs/request (sys ${res.sysUsPerRequest.toFixed(0)}), ${(res.wallMs / 1000).toFixed(1)} s\n`,
          );
        }
      }
    }
  } finally {
    await sim.stop();
  }
  process.stdout.write(
    `\ncandidate, concurrency: median CPU µs per request of ${BATCH} tx (our process; µs per tx) · simulator µs per request · wall s · load\n`,
  );
  for (const [k, v] of Object.entries(results)) {
    const cpu = median(v.cpu);
    process.stdout.write(
      `${k.padEnd(22)} ${cpu.toFixed(0).padStart(6)} µs (${(cpu / BATCH).toFixed(1)} µs/tx)  runs ${v.cpu.map((x) => x.toFixed(0)).join('/')}  · sim ${median(v.sim).toFixed(0)} µs · ${(median(v.wall) / 1000).toFixed(1)} s · load ${median(v.load).toFixed(2)}\n`,
    );
  }
}

await main(process.argv.slice(2));
