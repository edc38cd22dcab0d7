// The ledger knows where it sent, through the real CLI on both stores: a run against a destination the ledger has
// no acknowledgements from is refused (exit 1, one line naming both, the ledger untouched) unless --new-destination,
// then everything goes to the new one and resume works per destination; a ledger written before destinations were
// recorded is adopted once, for the first run's destination, and that choice is recorded.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { connectPg } from '../../src/ledger/postgres/db.ts';
import { MIGRATIONS, migrate } from '../../src/ledger/postgres/migrations.ts';
import { resolvePgTarget } from '../../src/ledger/postgres/url.ts';
import { createLogger } from '../../src/log.ts';
import {
  deliveryCounts,
  FAST,
  kindName,
  ledgerKinds,
  summary,
  workdir,
  writeNdjson,
} from '../faults/helpers.ts';
import { runCliHere } from '../helpers/cli.ts';
import { pgConnection } from '../helpers/ledger-ref.ts';
import { usePostgres } from '../helpers/postgres.ts';
import { useSimulator } from '../helpers/simulator.ts';

const pgs = usePostgres();
const uat = useSimulator({ seed: 21 }, 'reset');
const prod = useSimulator({ seed: 22 }, 'reset');
const dbName = (url: string) => new URL(url).pathname.slice(1);

/** Everything the ledger holds, to show it untouched. */
async function snapshot(ledger: string): Promise<string> {
  if (!ledger.startsWith('postgres')) return readFile(ledger, 'utf8');
  const rows = await pgs.sql(
    dbName(ledger),
    `SELECT (SELECT count(*) FROM svc_ingest.batches) AS b, (SELECT count(*) FROM svc_ingest.transactions) AS t,
            (SELECT string_agg(coalesce(destination, '-'), ',' ORDER BY destination_no) FROM svc_ingest.destinations) AS d`,
  );
  return JSON.stringify(rows);
}

const lastLine = (s: string) => s.trim().split('\n').pop() ?? '';

describe.each(ledgerKinds(pgs).map((k) => [kindName(k), k] as const))(
  'destinations, %s ledger',
  (_, kind) => {
    it('UAT then production with one ledger: refused, then --new-destination sends all 296 there', async () => {
      const w = await workdir('dest', kind);
      const file = join(w.dir, 'in.ndjson');
      const ids = await writeNdjson(file, 296, 'd');
      const args = ['send', ...FAST, file];

      const first = await runCliHere(args, { env: w.env(uat) });
      expect(first.code, first.stderr).toBe(0);
      expect(summary(first)).toMatchObject({ read: 296, sent: 296, skipped: 0 });

      const before = await snapshot(w.ledger);
      const refused = await runCliHere(args, { env: w.env(prod) });
      expect(refused.code, refused.stderr).toBe(1);
      const line = lastLine(refused.stderr);
      expect(line).toContain('LEDGER_DESTINATION');
      expect(line).toContain(uat.url);
      expect(line).toContain(prod.url);
      expect(line).toContain('--new-destination');
      expect(prod.deliveries().size).toBe(0);
      expect(await snapshot(w.ledger)).toBe(before);

      const moved = await runCliHere([...args, '--new-destination'], { env: w.env(prod) });
      expect(moved.code, moved.stderr).toBe(0);
      expect(summary(moved)).toMatchObject({ read: 296, sent: 296, skipped: 0 });
      expect(deliveryCounts(prod, ids)).toMatchObject({ missing: 0, duplicated: 0 });

      // Resume now works per destination, and both are known: no option needed for either.
      for (const sim of [prod, uat]) {
        const again = await runCliHere(args, { env: w.env(sim) });
        expect(again.code, again.stderr).toBe(0);
        expect(summary(again)).toMatchObject({ read: 296, sent: 0, skipped: 296 });
      }
      expect(deliveryCounts(uat, ids)).toMatchObject({ missing: 0, duplicated: 0 });
      expect(deliveryCounts(prod, ids)).toMatchObject({ missing: 0, duplicated: 0 });

      if (kind === 'file') {
        const lines = (await readFile(w.ledger, 'utf8'))
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l));
        const outcomes = lines.filter((l) => l.status !== undefined);
        expect(new Set(outcomes.map((l) => l.destination))).toEqual(new Set([uat.url, prod.url]));
        expect(lines.filter((l) => l.event === 'destination.added')).toMatchObject([
          { destination: prod.url },
        ]);
      } else {
        const rows = await pgs.sql(
          dbName(w.ledger),
          `SELECT destination, count(*)::int AS n FROM svc_ingest.transaction_states WHERE state = 'acked'
           GROUP BY 1 ORDER BY 1`,
        );
        expect(rows).toEqual(
          [
            { destination: uat.url, n: 296 },
            { destination: prod.url, n: 296 },
          ].sort((a, b) => (a.destination < b.destination ? -1 : 1)),
        );
      }
    });

    it('ledger status|failed|find answer per destination: an id acknowledged by UAT and failed for production is outstanding', async () => {
      const w = await workdir('dest-query', kind);
      const file = join(w.dir, 'in.ndjson');
      const ids = await writeNdjson(file, 120, 'q');
      const poisoned = ids[7] as string;
      expect((await runCliHere(['send', ...FAST, file], { env: w.env(uat) })).code).toBe(0);
      prod.setFaults({ poison: [poisoned] });
      const moved = await runCliHere(['send', ...FAST, '--new-destination', file], { env: w.env(prod) });
      expect(moved.code, moved.stderr).toBe(3);
      expect(summary(moved)).toMatchObject({ sent: 119, failed: 1 });
      const ledger = (args: string[]) => runCliHere(['ledger', ...args, '--ledger', w.ledger]);

      const status = JSON.parse((await ledger(['status', '--json'])).stdout);
      const byName = Object.fromEntries(
        (status.destinations as Array<{ destination: string; ids: object }>).map((d) => [
          d.destination,
          d.ids,
        ]),
      );
      expect(byName[uat.url]).toMatchObject({ ackedDistinct: 120, outstanding: 0 });
      expect(byName[prod.url]).toMatchObject({ ackedDistinct: 119, outstanding: 1 });
      expect(status.ids).toMatchObject({ ackedDistinct: 239, outstanding: 1 });
      const onlyProd = JSON.parse((await ledger(['status', '--json', '--destination', prod.url])).stdout);
      expect(onlyProd).toMatchObject({ destination: prod.url, ids: { ackedDistinct: 119, outstanding: 1 } });
      expect(onlyProd.runs.map((r: { destination: string }) => r.destination)).toEqual([prod.url]);
      const text = (await ledger(['status'])).stdout;
      expect(text).toContain(`destination ${uat.url}`);
      expect(text).toContain(`destination ${prod.url}`);

      const failed = await ledger(['failed', '--json']);
      expect(failed.code, failed.stderr).toBe(3);
      const outstanding = failed.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(outstanding).toMatchObject([{ transactionId: poisoned, destination: prod.url }]);
      expect((await ledger(['failed', '--json', '--destination', uat.url])).code).toBe(0);

      const found = (await ledger(['find', '--json', poisoned])).stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(found.map((h: { status: string; destination: string }) => [h.status, h.destination])).toEqual(
        expect.arrayContaining([
          ['acked', uat.url],
          ['failed', prod.url],
        ]),
      );
      const foundProd = (await ledger(['find', '--json', '--destination', prod.url, poisoned])).stdout;
      expect(foundProd).not.toContain('"acked"');
    });

    it('--no-resume and --dry-run are refused alike against a new destination', async () => {
      const w = await workdir('dest-flags', kind);
      const file = join(w.dir, 'in.ndjson');
      await writeNdjson(file, 60, 'f');
      expect((await runCliHere(['send', ...FAST, file], { env: w.env(uat) })).code).toBe(0);
      for (const extra of ['--no-resume', '--dry-run']) {
        const r = await runCliHere(['send', ...FAST, extra, file], { env: w.env(prod) });
        expect(r.code, `${extra}: ${r.stderr}`).toBe(1);
        expect(lastLine(r.stderr)).toContain('LEDGER_DESTINATION');
      }
      expect(prod.deliveries().size).toBe(0);
    });

    it('an old ledger without destinations is adopted once, by the first run after the upgrade', async () => {
      const w = await workdir('dest-adopt', kind);
      const file = join(w.dir, 'in.ndjson');
      const ids = await writeNdjson(file, 120, 'o');
      await writeOldLedger(w.ledger, ids.slice(0, 100));
      // A PostgreSQL ledger is upgraded by ledger migrate (a run refuses an older schema); a file has no version.
      if (w.ledger.startsWith('postgres')) {
        const refused = await runCliHere(['send', ...FAST, file], { env: w.env(uat) });
        expect(refused.code).toBe(1);
        expect(refused.stderr).toMatch(/LEDGER_MIGRATION_PENDING: .*run svc-ingest ledger migrate/);
        const m = await runCliHere(['ledger', 'migrate', '--ledger', w.ledger]);
        expect(m.code, m.stderr).toBe(0);
      }

      const first = await runCliHere(['send', ...FAST, file], { env: w.env(uat, { SVC_LOG_LEVEL: 'info' }) });
      expect(first.code, first.stderr).toBe(0);
      expect(summary(first)).toMatchObject({ read: 120, sent: 20, skipped: 100 });
      expect(first.stderr.match(/ledger\.destination\.adopted/g)).toHaveLength(1);
      expect(uat.deliveries().size).toBe(20);

      const second = await runCliHere(['send', ...FAST, file], {
        env: w.env(uat, { SVC_LOG_LEVEL: 'info' }),
      });
      expect(second.code, second.stderr).toBe(0);
      expect(summary(second)).toMatchObject({ read: 120, sent: 0, skipped: 120 });
      expect(second.stderr).not.toContain('ledger.destination.adopted');

      // The adoption is recorded: another destination is refused; with the option it gets everything.
      const other = await runCliHere(['send', ...FAST, file], { env: w.env(prod) });
      expect(other.code, other.stderr).toBe(1);
      expect(lastLine(other.stderr)).toContain(uat.url);
      const moved = await runCliHere(['send', ...FAST, '--new-destination', file], { env: w.env(prod) });
      expect(moved.code, moved.stderr).toBe(0);
      expect(summary(moved)).toMatchObject({ read: 120, sent: 120, skipped: 0 });

      if (kind === 'file') {
        const marks = (await readFile(w.ledger, 'utf8'))
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l))
          .filter((l) => l.event === 'destination.adopted');
        expect(marks).toMatchObject([{ destination: uat.url, legacyLines: 2 }]);
      } else {
        const rows = await pgs.sql(
          dbName(w.ledger),
          'SELECT destination, legacy, adopted_at IS NOT NULL AS adopted FROM svc_ingest.destinations WHERE destination_no = 1',
        );
        expect(rows).toEqual([{ destination: uat.url, legacy: true, adopted: true }]);
      }
    });
  },
);

/** A ledger as the version before destinations wrote it: two acked batches of 50, no destination anywhere. */
async function writeOldLedger(ledger: string, ids: string[]): Promise<void> {
  const halves = [ids.slice(0, 50), ids.slice(50)];
  if (!ledger.startsWith('postgres')) {
    const lines = halves.map((t, k) =>
      JSON.stringify({
        ts: '2026-11-01T00:00:00.000Z',
        batchId: `old-${k}`,
        status: 'acked',
        requestId: `req-${k}`,
        transactionIds: t,
        attempts: 1,
        httpStatus: 200,
        runId: 'old',
      }),
    );
    await writeFile(ledger, `${lines.join('\n')}\n`, { mode: 0o600 });
    return;
  }
  const db = await connectPg(resolvePgTarget(ledger), {
    logger: createLogger({ level: 'silent', pretty: false }),
    connection: pgConnection(),
  });
  try {
    await migrate(db, MIGRATIONS.slice(0, 2));
    for (const [k, t] of halves.entries()) {
      await db.query(
        'other',
        `WITH b AS (INSERT INTO svc_ingest.batches (batch_id, run_id, worker_no, status, request_id, client_request_id,
                      attempts, http_status, transaction_ids)
                    VALUES ($1, 'old', 1, 'acked', $2, '', 1, 200, $3) RETURNING seq)
         INSERT INTO svc_ingest.transactions (transaction_id, acked_seq) SELECT u.id, b.seq FROM b, unnest($3::text[]) AS u(id)`,
        [`old-${k}`, `req-${k}`, t],
      );
    }
  } finally {
    await db.close();
  }
}
