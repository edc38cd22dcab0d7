// What the claim (CLAIM_SQL, and ADMIT_SQL: its ON CONFLICT form) and record statements cost the database per id,
// apart from any client or service: one connection runs each statement over groups of 200 fresh ids (the record as
// four outcomes of 50, naming the claim) and reads its backend's own CPU from /proc (user + system; 10 ms ticks), on a throwaway
// PostgreSQL 18 (fsync on) whose `transactions` holds --rows acknowledged ids first. Variants of the statements (a
// module exporting `VARIANTS: Record<name, sql>`, same parameters; a name starting with `admit` is a claim, else a
// record) run in the same rounds, each on its own fresh ids, so their figures compare with the current statements'.
//   node_modules/.bin/node test/bench/pg-statements.ts [--rows 500000] [--rounds 150] [--reps 3] [--variants F.ts]
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { ADMIT_SQL, CLAIM_SQL, openPgLedgerStore, RECORD_SQL } from '../../src/ledger/postgres/store.ts';
import { createLogger } from '../../src/log.ts';
import { pgRef } from '../helpers/ledger-ref.ts';
import { startPostgres } from '../helpers/postgres.ts';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '500000' },
    rounds: { type: 'string', default: '150' },
    reps: { type: 'string', default: '3' },
    variants: { type: 'string' },
  },
});
const ROWS = Number(values.rows);
const ROUNDS = Number(values.rounds);
const variants: Record<string, string> = values.variants
  ? ((await import(resolve(values.variants))) as { VARIANTS: Record<string, string> }).VARIANTS
  : {};
const pgs = await startPostgres({ durable: true });
try {
  const url = await pgs.createDatabase('stmts');
  const logger = createLogger({ level: 'warn', pretty: false });
  const store = await openPgLedgerStore(pgRef(url, { leaseMs: 600_000 }), {
    mode: 'write',
    resume: true,
    runId: 'r',
    logger,
  });
  await pgs.sql(
    'stmts',
    `INSERT INTO svc_ingest.transactions (transaction_id, destination_no, acked_seq, updated_at)
     SELECT 'P' || lpad(g::text, 9, '0'), 1, 1, now() FROM generate_series(1, ${ROWS}) g`,
  );
  await pgs.sql('stmts', 'VACUUM ANALYZE');
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const pid = Number((await c.query('SELECT pg_backend_pid() AS p')).rows[0].p);
  const me = Number((await c.query('SELECT max(worker_no)::int AS w FROM svc_ingest.workers')).rows[0].w);
  const serverStart = String((await c.query('SELECT pg_postmaster_start_time()::text AS t')).rows[0].t);
  const cpuMs = () => {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const a = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(a[11]) + Number(a[12])) * 10;
  };
  let next = 0;
  const fresh = () => Array.from({ length: 200 }, () => `T${String(next++).padStart(9, '0')}`);
  let seq = 0;
  // Four outcomes of 50 ids, each naming the claim the ids were taken under (RECORD_SQL's parameters).
  const recordParams = (ids: string[], claim: number) => {
    const four = (v: unknown) => [v, v, v, v];
    const k = [0, 1, 2, 3];
    return [
      k,
      k.map((i) => `b${seq++}-${i}`),
      four('r'),
      four('acked'),
      four('q'),
      four('c'),
      four(1),
      four(200),
      four(null),
      four('s'),
      four(1),
      four(50),
      k.map((i) => i * 50 + 1),
      k.map((i) => i * 50 + 50),
      four(1),
      four(1),
      ids,
      [claim],
      me,
      4,
      ids.length,
      0,
      0,
      1,
      false,
      serverStart,
    ];
  };
  // The claim number each set of ids was admitted under (the claim statement's last row).
  const claims = new Map<string[], number>();
  const admit = async (name: string, text: string, ids: string[]) => {
    const r = await c.query({ name, text, values: [ids, me, true, 1] });
    claims.set(ids, Number(r.rows.find((row) => row.id === null)?.claim ?? 0));
  };
  const record = (name: string, text: string, ids: string[]) =>
    c.query({ name, text, values: recordParams(ids, claims.get(ids) ?? 0) });
  const out: Record<string, number[]> = {};
  const timed = async (name: string, run: (ids: string[]) => Promise<unknown>, sets: string[][]) => {
    const t = cpuMs();
    for (const ids of sets) await run(ids);
    const us = +(((cpuMs() - t) * 1000) / (sets.length * 200)).toFixed(2);
    out[name] = [...(out[name] ?? []), us];
  };
  const load = loadavg().map((l) => +l.toFixed(2));
  for (let rep = 0; rep < Number(values.reps); rep++) {
    // The claim as the store makes it (new ids by a plain INSERT), then the same ids recorded.
    const sets = Array.from({ length: ROUNDS }, fresh);
    await timed('claim', (ids) => admit('claim', CLAIM_SQL, ids), sets);
    await timed('record', (ids) => record('record', RECORD_SQL, ids), sets);
    // The claim through ON CONFLICT alone (the store's fallback, and its only form before).
    const onConflict = Array.from({ length: ROUNDS }, fresh);
    await timed('admitOnConflict', (ids) => admit('admit', ADMIT_SQL, ids), onConflict);
    for (const ids of onConflict) await record('record', RECORD_SQL, ids);
    for (const [name, sql] of Object.entries(variants)) {
      const own = Array.from({ length: ROUNDS }, fresh);
      if (name.startsWith('admit')) {
        await timed(name, (ids) => admit(name, sql, ids), own);
        for (const ids of own) await record('record', RECORD_SQL, ids);
      } else {
        for (const ids of own) await admit('claim', CLAIM_SQL, ids);
        await timed(name, (ids) => record(name, sql, ids), own);
      }
    }
  }
  const left = await c.query(
    `SELECT count(*)::int AS n FROM svc_ingest.transaction_states WHERE transaction_id LIKE 'T%'
     AND state <> 'acked'`,
  );
  await c.end();
  await store.close();
  process.stdout.write(
    `${JSON.stringify({ rows: ROWS, rounds: ROUNDS, load, usPerId: out, notAckedOrClaimed: left.rows[0]?.n })}\n`,
  );
} finally {
  await pgs.stop();
}
