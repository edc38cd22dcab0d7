// `send --ledger postgres://…` through the real CLI: the chain over the PostgreSQL LedgerStore. Every record
// delivered once, the rerun skips everything, the summary and the log name the ledger without its password, and
// a dry run only looks the ids up.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { deliveryCounts, FAST, workdir, writeNdjson } from '../faults/helpers.ts';
import { runCliHere, summaryOf } from '../helpers/cli.ts';
import { usePostgres } from '../helpers/postgres.ts';
import { useSimulator } from '../helpers/simulator.ts';

const pgs = usePostgres();
const sim = useSimulator({ seed: 11 }, 'reset');

describe('send on the PostgreSQL ledger', () => {
  it('sends every record once, a rerun skips them all; the ledger is shown without its password', async () => {
    const url = await pgs.createDatabase();
    const db = url.split('/').pop() as string;
    const shown = pgs.urlWithoutPassword(db);
    const w = await workdir('pg-send');
    const file = join(w.dir, 'in.ndjson');
    const ids = await writeNdjson(file, 1234, 'pg');
    const args = ['send', ...FAST, '--concurrency', '4', '--ledger', url, file];
    const env = w.env(sim, { SVC_LOG_LEVEL: 'info' });

    const first = await runCliHere(args, { env });
    expect(first.code, first.stderr).toBe(0);
    expect(summaryOf(first)).toMatchObject({ read: 1234, sent: 1234, skipped: 0, failed: 0, ledger: shown });
    expect(deliveryCounts(sim, ids)).toMatchObject({ missing: 0, duplicated: 0, extra: 0 });
    const password = new URL(url).password;
    expect(password).not.toBe('');
    expect(first.stdout + first.stderr).not.toContain(password);

    const rerun = await runCliHere(args, { env });
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(summaryOf(rerun)).toMatchObject({ read: 1234, sent: 0, skipped: 1234, ledger: shown });
    expect(deliveryCounts(sim, ids)).toMatchObject({ missing: 0, duplicated: 0, extra: 0 });
    expect(rerun.stdout + rerun.stderr).not.toContain(password);

    const acked = await pgs.sql(
      db,
      `SELECT count(*)::int AS n FROM svc_ingest.transaction_states WHERE state = 'acked'`,
    );
    expect(acked).toEqual([{ n: 1234 }]);

    const dry = await runCliHere(['send', ...FAST, '--dry-run', '--ledger', url, file], { env });
    expect(dry.code, dry.stderr).toBe(0);
    expect(summaryOf(dry)).toMatchObject({
      dryRun: true,
      read: 1234,
      skipped: 1234,
      batched: 0,
      ledger: null,
    });
  });
});
