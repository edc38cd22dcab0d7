// A postgres:// URL's password never leaves: not in a log line (debug level), a summary, `backfill status`, an error
// line or a --json error, through every command that takes the ledger, whether it works, the password is wrong, the
// server is away, the URL does not parse, or the configuration holding it is refused.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FAST, STACK, workdir, writeNdjson } from '../faults/helpers.ts';
import { type CliResult, runCli, runCliHere } from '../helpers/cli.ts';
import { usePostgres } from '../helpers/postgres.ts';
import { useSimulator } from '../helpers/simulator.ts';

const pgs = usePostgres();
const sim = useSimulator({ seed: 5 }, 'reset');

const FAKE = 'Sup3r-S3cret-pw';

function clean(r: CliResult, secret: string, what: string): void {
  expect(r.stdout + r.stderr, what).not.toContain(secret);
  expect(r.stdout + r.stderr, what).not.toContain(encodeURIComponent(secret));
  expect(r.stderr, what).not.toMatch(STACK);
}

describe('the ledger password is never shown', () => {
  it('every command that takes a PostgreSQL ledger, working, at debug level', async () => {
    const w = await workdir('pg-password');
    const file = join(w.dir, 'in.ndjson');
    await writeNdjson(file, 300, 'pw');
    const url = await pgs.createDatabase();
    const env = { SVC_BASE_URL: sim.url, SVC_LOG_LEVEL: 'debug', SVC_REJECTS_PATH: w.rejects };
    const runs: Array<[string, string[]]> = [
      ['migrate', ['ledger', 'migrate', '--ledger', url]],
      ['plan', ['backfill', 'plan', '--ledger', url, '--partition-bytes', '50000', file]],
      ['work', ['backfill', 'work', '--ledger', url, '--json', '--rejects', w.rejects]],
      ['status', ['backfill', 'status', '--ledger', url]],
      ['status --json', ['backfill', 'status', '--ledger', url, '--json']],
      ['send', ['send', ...FAST, '--ledger', url, file]],
      ['send --dry-run', ['send', '--dry-run', '--json', '--ledger', url, file]],
      ['ledger status', ['ledger', 'status', '--ledger', url]],
      ['ledger failed', ['ledger', 'failed', '--json', '--ledger', url]],
      ['ledger find', ['ledger', 'find', '--ledger', url, 'pw-00000001']],
    ];
    for (const [what, args] of runs) {
      const r = await runCliHere(args, { env });
      expect(r.code, `${what}: ${r.stderr.slice(-1000)}`).toBe(0);
      clean(r, pgs.password, what);
    }
    // The ledger as it is shown: the URL without its password.
    const st = await runCliHere(['backfill', 'status', '--ledger', url, '--json']);
    expect(JSON.parse(st.stdout).ledger).toBe(pgs.urlWithoutPassword(url.split('/').pop()));
  });

  // Failures, one test per kind of URL (each runs the five commands that take the ledger: 25 CLI runs in one test
  // outlasted the time-out on a loaded machine).
  const FAILURES: Array<[string, (db: string) => string, RegExp]> = [
    [
      'a wrong password',
      (db) => `postgres://postgres:${FAKE}@127.0.0.1:${pgs.port}/${db}`,
      /LEDGER_READ: .*password authentication failed/,
    ],
    [
      'an unreachable server',
      () => `postgres://svc:${FAKE}@127.0.0.1:1/ledger`,
      /LEDGER_READ: cannot connect/,
    ],
    [
      'a password as a parameter',
      (db) => `postgres://postgres@127.0.0.1:${pgs.port}/${db}?password=${FAKE}`,
      /LEDGER_READ: .*password authentication failed/,
    ],
    [
      'a URL that does not parse',
      () => `postgres://svc:${FAKE}@[::1/ledger`,
      /USAGE_INVALID: not a valid PostgreSQL URL/,
    ],
    [
      // A socket is on this host: never refused for want of TLS (it is tried, and here is not there).
      'a Unix socket that is not there',
      () => `postgres://svc:${FAKE}@%2Ftmp%2Fsvc-no-such-socket-dir/ledger`,
      /LEDGER_READ: cannot connect to the ledger database postgres:\/\/svc@%2Ftmp%2Fsvc-no-such-socket-dir\/ledger/,
    ],
    [
      'a plain-text server off loopback',
      () => `postgres://svc:${FAKE}@db.example.invalid/ledger`,
      /CONFIG_INVALID: the ledger database postgres:\/\/svc@db\.example\.invalid\/ledger is not on loopback/,
    ],
  ];
  let failing: { file: string; db: string; env: NodeJS.ProcessEnv } | undefined;
  const failingInput = async () => {
    if (!failing) {
      const w = await workdir('pg-password-fail');
      const file = join(w.dir, 'in.ndjson');
      await writeNdjson(file, 10, 'pf');
      const db = (await pgs.createDatabase()).split('/').pop() as string;
      failing = {
        file,
        db,
        env: { SVC_BASE_URL: sim.url, SVC_LOG_LEVEL: 'debug', SVC_REJECTS_PATH: w.rejects },
      };
    }
    return failing;
  };
  it.each(FAILURES)(
    'failures: %s — every command exits 1 with its one line, the password never shown',
    async (what, urlOf, expected) => {
      const { file, db, env } = await failingInput();
      const url = urlOf(db);
      for (const args of [
        ['send', ...FAST, '--ledger', url, file],
        ['backfill', 'work', '--json', '--ledger', url],
        ['backfill', 'status', '--json', '--ledger', url],
        ['ledger', 'migrate', '--ledger', url],
        ['ledger', 'status', '--ledger', url],
      ]) {
        const r = await runCliHere(args, { env });
        expect(r.code, `${what}: ${args.slice(0, 2).join(' ')}`).toBe(1);
        expect(r.stderr, `${what}: ${args.slice(0, 2).join(' ')}`).toMatch(expected);
        clean(r, FAKE, `${what}: ${args.slice(0, 2).join(' ')}`);
      }
    },
  );

  // A child: ~/.pgpass is found through the process's own HOME (os.homedir()).
  it('the password from ~/.pgpass: the run works, without node-postgres’s deprecation warning; no password anywhere: one line, at once', async () => {
    const w = await workdir('pg-password-pgpass');
    const db = (await pgs.createDatabase()).split('/').pop() as string;
    const pgpass = join(w.dir, '.pgpass');
    await writeFile(pgpass, `127.0.0.1:${pgs.port}:*:${pgs.user}:${pgs.password}\n`, { mode: 0o600 });
    // (PGPASSWORD set at all, even empty, turns ~/.pgpass off: left out of the child's environment.)
    const env = { HOME: w.dir, PGPASSFILE: undefined, PGPASSWORD: undefined };
    const bare = pgs.urlWithoutPassword(db);
    for (const args of [
      ['ledger', 'migrate', '--ledger', bare],
      ['ledger', 'status', '--ledger', bare],
    ]) {
      const r = await runCli(args, { env });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).not.toMatch(/DeprecationWarning|pgpass support is deprecated/);
      clean(r, pgs.password, args.join(' '));
    }
    await writeFile(pgpass, `127.0.0.1:${pgs.port}:*:someone_else:x\n`, { mode: 0o600 });
    const started = performance.now();
    const none = await runCli(['ledger', 'status', '--ledger', bare], { env });
    expect(none.code).toBe(1);
    expect(none.stderr.trim()).toMatch(
      /^svc-ingest: LEDGER_READ: cannot connect to the ledger database .*: the server asks for a password and none was given/,
    );
    expect(performance.now() - started).toBeLessThan(20_000);
  });

  it('failures: a non-PostgreSQL URL', async () => {
    const { file, env } = await failingInput();
    const mysql = await runCliHere(['backfill', 'plan', '--ledger', `mysql://svc:${FAKE}@db/x`, file], {
      env,
    });
    expect(mysql.code).toBe(1);
    expect(mysql.stderr).toMatch(/needs a PostgreSQL ledger \(postgres:\/\/…\), not mysql:\/\/svc@db\/x/);
    clean(mysql, FAKE, 'mysql URL');
  });

  it('a configuration that holds the URL where it does not fit is refused without echoing it', async () => {
    const w = await workdir('pg-password-config');
    const url = `postgres://svc:${FAKE}@127.0.0.1:1/ledger`;
    for (const [name, body] of [
      ['ledger.url an array', { ledger: { url: [url] } }],
      ['ledger.url a number', { ledger: { url: 5 } }],
      ['send.ledgerPath an object', { send: { ledgerPath: { url } } }],
    ] as const) {
      const config = join(w.dir, 'config.json');
      await writeFile(config, JSON.stringify(body));
      for (const args of [
        ['backfill', 'status', '--config', config],
        ['send', '--config', config, '--dry-run', join(w.dir, 'none.csv')],
      ]) {
        const r = await runCliHere(args);
        expect(r.code, name).toBe(1);
        expect(r.stderr, name).toMatch(
          /CONFIG_INVALID: config key (ledger\.url|send\.ledgerPath) .*value not shown/,
        );
        clean(r, FAKE, name);
      }
    }
  });
});
