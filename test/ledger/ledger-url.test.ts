// One way to name the ledger: `send` and `ledger status|failed|find` both take SVC_LEDGER_URL (or ledger.url in a
// config file) when no --ledger is given, and --ledger wins over it; a ledger.url that is not a PostgreSQL URL
// is a configuration error. Real PostgreSQL, real CLI.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, runCliHere, summaryOf } from '../helpers/cli.ts';
import { usePostgres } from '../helpers/postgres.ts';
import { useSimulator } from '../helpers/simulator.ts';

const pg = usePostgres();
const sim = useSimulator({ seed: 43 }, 'none');
const SAMPLE = join(ROOT, 'samples/canonical.csv');

describe('SVC_LEDGER_URL and ledger.url', () => {
  it('send writes there and ledger status|failed|find read there; --ledger names another', async () => {
    const url = await pg.createDatabase();
    const dir = await mkdtemp(join(tmpdir(), 'svc-ledger-url-'));
    const env = { SVC_BASE_URL: sim.url, SVC_LEDGER_URL: url };
    const sent = await runCliHere(['send', '--json', SAMPLE], { cwd: dir, env });
    expect(sent.code, sent.stderr).toBe(2);
    expect(summaryOf(sent).ledger).toMatch(/^postgres:\/\/postgres@127\.0\.0\.1:\d+\//);
    const db = new URL(url).pathname.slice(1);
    const acked = await pg.sql(
      db,
      `SELECT count(*)::int AS n FROM svc_ingest.transaction_states WHERE state = 'acked'`,
    );
    expect(acked[0]!.n).toBe(18);

    const status = await runCliHere(['ledger', 'status', '--json'], { cwd: dir, env });
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ ids: { acked: 18 } });
    const found = await runCliHere(['ledger', 'find', '--json', 'can-csv-0001'], { cwd: dir, env });
    expect(found.code, found.stderr).toBe(0);
    expect(found.stdout).toContain('can-csv-0001');
    expect((await runCliHere(['ledger', 'failed'], { cwd: dir, env })).code).toBe(0);

    // --ledger wins: a file ledger that does not exist is an error naming it, not the database.
    const file = await runCliHere(['ledger', 'status', '--ledger', join(dir, 'none.ndjson')], {
      cwd: dir,
      env,
    });
    expect(file.code).toBe(1);
    expect(file.stderr).toMatch(/LEDGER_READ: ledger .*none\.ndjson: no such file/);

    // The same from a config file's ledger.url.
    const cfg = join(dir, 'svc.json');
    await writeFile(cfg, JSON.stringify({ ledger: { url } }));
    const fromConfig = await runCliHere(['ledger', 'status', '--json', '--config', cfg], {
      cwd: dir,
      env: { SVC_BASE_URL: sim.url },
    });
    expect(fromConfig.code, fromConfig.stderr).toBe(0);
    expect(JSON.parse(fromConfig.stdout)).toMatchObject({ ids: { acked: 18 } });
    const rerun = await runCliHere(['send', '--json', '--config', cfg, SAMPLE], {
      cwd: dir,
      env: { SVC_BASE_URL: sim.url },
    });
    expect(summaryOf(rerun)).toMatchObject({ skipped: 18, sent: 0 });
  });

  it('a ledger.url that is not a PostgreSQL URL is CONFIG_INVALID', async () => {
    for (const args of [
      ['send', SAMPLE],
      ['ledger', 'status'],
    ]) {
      const r = await runCliHere(args, {
        env: { SVC_BASE_URL: sim.url, SVC_LEDGER_URL: '/var/lib/svc/ledger.ndjson' },
      });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(
        /svc-ingest: CONFIG_INVALID: config key ledger\.url: expected a postgres:\/\//,
      );
    }
  });
});
