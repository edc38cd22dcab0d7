// An upgrade of the PostgreSQL ledger as an operator makes it, with real roles: a feed's schema made by the previous
// release (schema version 3) under its owner, a restricted nightly role with the GRANTs that release's
// docs/postgres.md gave (written out below, as operators copied them); the new package's
// `send` stops with one line naming `ledger migrate` and the owner (exit 1, nothing sent); the upgrade steps are
// taken from docs/postgres.md and run as written (the URL and role names put in); then the nightly `send` runs.
// Also: a worker of the previous version still running through the steps, or registering during a night (the race at
// the migration's commit); a role granted `--for backfill` plans, works and reads the status; the tickets of one feed
// unreadable by another feed's role.
import { readFileSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { connectPg } from '../../src/ledger/postgres/db.ts';
import { LATEST_VERSION, MIGRATIONS, migrate } from '../../src/ledger/postgres/migrations.ts';
import { resolvePgTarget } from '../../src/ledger/postgres/url.ts';
import { createLogger } from '../../src/log.ts';
import { FAST, STACK, summary } from '../faults/helpers.ts';
import { dbName } from '../helpers/backfill.ts';
import { ROOT, runCliHere, startCli } from '../helpers/cli.ts';
import { shellWords } from '../helpers/doc-examples.ts';
import { pgConnection } from '../helpers/ledger-ref.ts';
import { usePostgres } from '../helpers/postgres.ts';
import { SCHEMA6_CLAIM_SQL, SCHEMA6_REGISTER_SQL } from '../helpers/schema6.ts';
import { useSimulator } from '../helpers/simulator.ts';
import { makeTx, ndjsonOf, range } from '../helpers/transactions.ts';

const pgs = usePostgres();
const sim = useSimulator({ seed: 35 }, 'reset');
const logger = createLogger({ level: 'silent', pretty: false });

/** The URL of `url`'s database as `role` (password `pw`), in the ledger `schema`. */
function as(url: string, role: string, schema: string): string {
  const u = new URL(url);
  u.username = role;
  u.password = `${role}-pw`;
  return `${u.toString()}?schema=${schema}`;
}

/** A login role (its password `<role>-pw`), unique to this test's database. */
async function role(db: string, name: string, extra = ''): Promise<string> {
  const r = `${name}_${db}`.slice(0, 60);
  await pgs.sql(db, `CREATE ROLE ${r} LOGIN PASSWORD '${r}-pw' ${extra}`);
  return r;
}

/** The feed's schema as docs/postgres.md has an administrator make it: owned by the feed's owner, no other grant. */
async function ownedSchema(db: string, schema: string, owner: string): Promise<void> {
  await pgs.sql(db, `CREATE SCHEMA ${schema} AUTHORIZATION ${owner}`);
}

/**
 * A fresh database with the schema `feed_a` owned by the owner role (nothing else granted to it: no CREATE on the
 * database), and the other roles named.
 */
async function withRoles(owner: string, ...others: string[]) {
  const url = await pgs.createDatabase();
  const db = dbName(url);
  const ownerRole = await role(db, owner);
  await ownedSchema(db, 'feed_a', ownerRole);
  const roles: string[] = [];
  for (const r of others) roles.push(await role(db, r));
  return { url, db, owner: ownerRole, roles };
}

/** `ledger migrate` as the schema's owner, then `ledger grant --role R --for USE --apply` for each role given. */
async function migrateAndGrant(
  ownerUrl: string,
  grants: ReadonlyArray<readonly [string, string]>,
): Promise<void> {
  expect((await runCliHere(['ledger', 'migrate', '--ledger', ownerUrl])).code).toBe(0);
  for (const [r, use] of grants) {
    const g = await runCliHere([
      'ledger',
      'grant',
      '--ledger',
      ownerUrl,
      '--role',
      r,
      '--for',
      use,
      '--apply',
    ]);
    expect(g.code, g.stderr).toBe(0);
  }
}

/** `ledger prune --before 2026-06-01 --json` on `ledger` (as its role): its summary, once it exited 0. */
async function pruneBefore2026June(ledger: string): Promise<unknown> {
  const r = await runCliHere(['ledger', 'prune', '--before', '2026-06-01', '--ledger', ledger, '--json']);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
}

/** The schema version the previous release made (0.1.0 before worker identities and tickets per feed). */
const PREVIOUS_RELEASE_SCHEMA = 3;

/** The GRANTs the previous release's docs/postgres.md gave a feed's nightly role, as written there. */
function previousReleaseGrants(schema: string, roleName: string): string[] {
  return [
    `GRANT USAGE ON SCHEMA ${schema} TO ${roleName}`,
    `GRANT SELECT ON ALL TABLES IN SCHEMA ${schema} TO ${roleName}`,
    `GRANT INSERT, UPDATE ON ${schema}.workers, ${schema}.transactions, ${schema}.batches, ${schema}.destinations,
      ${schema}.partitions TO ${roleName}`,
    `GRANT USAGE ON SEQUENCE ${schema}.batch_seq TO ${roleName}`,
  ];
}

/** The GRANTs the previous version (schema 6) printed for `ledger grant --for send` and `--for prune`, as written. */
function schema6Grants(schema: string, sender: string, pruner: string): string[] {
  return [
    `GRANT USAGE ON SCHEMA ${schema} TO ${sender}`,
    `GRANT SELECT ON ${schema}.migrations TO ${sender}`,
    `GRANT SELECT, INSERT, UPDATE ON ${schema}.workers, ${schema}.transactions, ${schema}.batches, ${schema}.destinations TO ${sender}`,
    `GRANT USAGE ON SEQUENCE ${schema}.batch_seq TO ${sender}`,
    `GRANT USAGE ON SCHEMA ${schema} TO ${pruner}`,
    `GRANT SELECT ON ${schema}.migrations, ${schema}.destinations TO ${pruner}`,
    `GRANT SELECT, DELETE ON ${schema}.batches, ${schema}.transactions TO ${pruner}`,
  ];
}

/** The `svc-ingest …` lines of the sh block under "### Upgrading svc-ingest" in docs/postgres.md. */
function upgradeSteps(): string[] {
  const doc = readFileSync(join(ROOT, 'docs/postgres.md'), 'utf8');
  const section = doc.slice(doc.indexOf('### Upgrading svc-ingest'));
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  return block.split('\n').filter((l) => l.startsWith('svc-ingest '));
}

/** The docs' example URL of the owner, put in place of this test's. */
const DOC_OWNER_URL = 'postgres://feed_a_owner@db.internal/ledger?schema=feed_a';

/**
 * The documented upgrade steps, as written, with this test's owner URL and roles: `ledger migrate`, then the grant
 * line once per restricted role with the `--for` it runs (the docs: "The second line again for each restricted
 * role"). Twice, as an operator unsure whether the first went through would run them again.
 */
async function runUpgradeSteps(
  ownerUrl: string,
  grants: ReadonlyArray<readonly [string, string]>,
): Promise<void> {
  const steps = upgradeSteps();
  expect(steps.map((s) => shellWords(s).slice(1, 3).join(' '))).toEqual(['ledger migrate', 'ledger grant']);
  const [migrateLine, grantLine] = steps as [string, string];
  const lines = [
    migrateLine,
    ...grants.map(([r, use]) =>
      grantLine.replaceAll('feed_a_sender', r).replace('--for send', `--for ${use}`),
    ),
  ];
  for (const step of [...lines, ...lines]) {
    const r = await runCliHere(shellWords(step.replaceAll(DOC_OWNER_URL, ownerUrl)).slice(1));
    expect(r.code, `${step}\n${r.stderr}`).toBe(0);
  }
}

/** The lines of the fenced block of docs/postgres.md that starts with `first`. */
function docBlock(first: string): string[] {
  const doc = readFileSync(join(ROOT, 'docs/postgres.md'), 'utf8');
  const block = [...doc.matchAll(/```[a-z]*\n([\s\S]*?)```/g)]
    .map((m) => m[1] ?? '')
    .find((b) => b.startsWith(first));
  expect(block, first).toBeDefined();
  return (block ?? '').trimEnd().split('\n');
}

/** The feed's schema `feed_a` at schema `version`, made by its owner, with the GRANTs of that time applied. */
async function ledgerAt(url: string, owner: string, version: number, grants: string[]): Promise<void> {
  const ownerDb = await connectPg(resolvePgTarget(as(url, owner, 'feed_a')), {
    logger,
    connection: pgConnection(),
  });
  try {
    expect(
      await migrate(
        ownerDb,
        MIGRATIONS.filter((m) => m.version <= version),
      ),
    ).toMatchObject({ to: version });
    for (const g of grants) await ownerDb.query('other', g);
  } finally {
    await ownerDb.close();
  }
}

/** A night's input of 120 transactions (ids `prefix`…), and its nightly `send` as `sender` into `feed_a`. */
async function nightOf(url: string, sender: string, prefix: string) {
  const dir = await mkdtemp(join(tmpdir(), `svc-upgrade-${prefix}-`));
  const file = join(dir, 'night.ndjson');
  const txs = range(120).map((i) => makeTx(i, prefix));
  await writeFile(file, ndjsonOf(txs));
  const env = { SVC_BASE_URL: sim.url, SVC_REJECTS_PATH: join(dir, 'rejects.ndjson') };
  const nightly = () => runCliHere(['send', ...FAST, '--ledger', as(url, sender, 'feed_a'), file], { env });
  return { txs, nightly };
}

describe('upgrading the PostgreSQL ledger under restricted roles', () => {
  it('a send before the migration stops with one line naming ledger migrate; the documented steps; then send runs', async () => {
    const { url, db, owner, roles } = await withRoles('feed_owner', 'feed_sender');
    const sender = roles[0] as string;
    // The previous release's schema, made by the owner, and the nightly role's grants of that time.
    await ledgerAt(url, owner, PREVIOUS_RELEASE_SCHEMA, previousReleaseGrants('feed_a', sender));
    const { nightly } = await nightOf(url, sender, 'up');

    const before = await nightly();
    expect(before.code).toBe(1);
    expect(before.stderr).not.toMatch(STACK);
    const lines = before.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('LEDGER_MIGRATION_PENDING');
    expect(lines[0]).toContain(
      `schema version ${PREVIOUS_RELEASE_SCHEMA}, older than this svc-ingest's ${LATEST_VERSION}`,
    );
    expect(lines[0]).toMatch(
      new RegExp(`run svc-ingest ledger migrate as the schema's owner \\(role ${owner}\\)`),
    );
    expect(sim.deliveries().size).toBe(0);

    // The line docs/postgres.md shows for it, word for word but for this test's URL and owner.
    const shown = /the ledger database (\S+) has/.exec(lines[0] ?? '')?.[1] ?? '';
    const [docLine] = docBlock('svc-ingest: LEDGER_MIGRATION_PENDING');
    expect(
      docLine
        ?.replace('postgres://feed_a_sender@db.internal/ledger?schema=feed_a', shown)
        .replace('(role feed_a_owner)', `(role ${owner})`),
    ).toBe(lines[0]);

    await runUpgradeSteps(as(url, owner, 'feed_a'), [[sender, 'send']]);

    const after = await nightly();
    expect(after.code, after.stderr).toBe(0);
    expect(summary(after)).toMatchObject({ read: 120, sent: 120 });
    expect(sim.deliveries().size).toBe(120);
    // The read-only role's ledger status: a permission error is a read error (not LEDGER_WRITE).
    const status = await runCliHere(['ledger', 'status', '--ledger', as(url, sender, 'feed_a')]);
    expect(status.code, status.stderr).toBe(0);
    const stranger = await role(db, 'stranger');
    const denied = await runCliHere(['ledger', 'status', '--ledger', as(url, stranger, 'feed_a')]);
    expect(denied.code).toBe(1);
    expect(denied.stderr).toMatch(/LEDGER_READ: .*permission denied/);
    expect(denied.stderr).not.toMatch(/LEDGER_WRITE/);
  });

  it("from the previous version's schema 6, its send and prune roles as its `ledger grant` made them: the documented steps, then the night and a prune", async () => {
    const { url, db, owner, roles } = await withRoles('s6_owner', 's6_sender', 's6_pruner');
    const [sender, pruner] = roles as [string, string];
    await ledgerAt(url, owner, 6, schema6Grants('feed_a', sender, pruner));
    const { txs, nightly } = await nightOf(url, sender, 's6');
    // An earlier night as schema 6 wrote it: half of these ids acknowledged in January (rows with acked_seq).
    await pgs.sql(
      db,
      `WITH w AS (INSERT INTO feed_a.workers (worker_id, run_id, host, pid, lease_until, stopped_at)
                  VALUES ('v6', 'v6', 'h', 1, now(), now()) RETURNING worker_no),
            b AS (INSERT INTO feed_a.batches (ts, batch_id, run_id, worker_no, status, request_id, client_request_id,
                    attempts, http_status, transaction_ids)
                  SELECT '2026-01-02T00:00:00Z', 'v6-0', 'v6', worker_no, 'acked', 'req-v6', 'c-v6', 1, 200, $1::text[]
                  FROM w RETURNING seq)
       INSERT INTO feed_a.transactions (transaction_id, acked_seq) SELECT u, (SELECT seq FROM b) FROM unnest($1::text[]) u`,
      [txs.slice(0, 60).map((t) => t.transactionId)],
    );
    const before = await nightly();
    expect(before.code).toBe(1);
    expect(before.stderr).toContain("schema version 6, older than this svc-ingest's 7");

    await runUpgradeSteps(as(url, owner, 'feed_a'), [
      [sender, 'send'],
      [pruner, 'prune'],
    ]);

    const after = await nightly();
    expect(after.code, after.stderr).toBe(0);
    expect(summary(after)).toMatchObject({ read: 120, sent: 60, skipped: 60 });
    expect(await pruneBefore2026June(as(url, pruner, 'feed_a'))).toMatchObject({
      prunedBatches: 1,
      prunedTransactions: 60,
    });
    const [left] = await pgs.sql<{ acked: number }>(
      db,
      `SELECT count(*)::int AS acked FROM feed_a.transaction_states WHERE state = 'acked'`,
    );
    expect(left?.acked).toBe(60);
  });

  it('a worker of the previous version still running, as the send role, through the documented steps: it sends none of what the upgraded night acknowledged', async () => {
    const { url, owner, roles } = await withRoles('ow_owner', 'ow_sender', 'ow_pruner');
    const [sender, pruner] = roles as [string, string];
    await ledgerAt(url, owner, 6, schema6Grants('feed_a', sender, pruner));
    // The older worker: registered as that version registered itself (no claims_from), under the send role, and
    // still running through the upgrade (its lease renewed).
    const older = await connectPg(resolvePgTarget(as(url, sender, 'feed_a')), {
      logger,
      connection: pgConnection(),
    });
    try {
      const registered = await older.query<{ worker_no: number }>('other', SCHEMA6_REGISTER_SQL, [
        'v6-host:1:v6',
        1,
        '1 hour',
      ]);
      await runUpgradeSteps(as(url, owner, 'feed_a'), [
        [sender, 'send'],
        [pruner, 'prune'],
      ]);
      const { txs, nightly } = await nightOf(url, sender, 'ow');
      const sent = await nightly();
      expect(sent.code, sent.stderr).toBe(0);
      expect(summary(sent)).toMatchObject({ read: 120, sent: 120 });
      // The older worker reads the same night with its own claim statement, as the send role: nothing to send.
      const dest = await older.query<{ n: number }>(
        'other',
        'SELECT DISTINCT destination_no AS n FROM svc_ingest.batches',
      );
      const skipped = await older.query<{ id: string; acked: boolean }>('other', SCHEMA6_CLAIM_SQL, [
        txs.map((t) => t.transactionId),
        registered.rows[0]?.worker_no,
        true,
        dest.rows[0]?.n,
      ]);
      expect(skipped.rows.filter((r) => r.acked)).toHaveLength(120);
      // The send role's `ledger status` says why the night went row by row.
      const status = await runCliHere(['ledger', 'status', '--json', '--ledger', as(url, sender, 'feed_a')]);
      expect(status.code, status.stderr).toBe(0);
      expect(JSON.parse(status.stdout).olderWorkers).toBe(1);
    } finally {
      await older.close();
    }
  });

  it('a worker of the previous version that registers during a night, as the send role: at its close the night writes what it acknowledged per batch into the rows, and that worker sends none of it', async () => {
    // The race at the migration's commit: that version checked the schema before it committed and registers after
    // this night last asked (its heartbeat is seconds away): the night's outcomes so far are batch rows alone.
    const { url, owner, roles } = await withRoles('lt_owner', 'lt_sender');
    const [sender] = roles as [string];
    await migrateAndGrant(as(url, owner, 'feed_a'), [[sender, 'send']]);
    const txs = range(1200).map((i) => makeTx(i, 'lt'));
    const dir = await mkdtemp(join(tmpdir(), 'svc-upgrade-late-'));
    const night = startCli(
      ['send', ...FAST, '--format', 'ndjson', '--ledger', as(url, sender, 'feed_a'), '-'],
      {
        env: { SVC_BASE_URL: sim.url, SVC_REJECTS_PATH: join(dir, 'rejects.ndjson') },
        keepStdinOpen: true,
      },
    );
    const older = await connectPg(resolvePgTarget(as(url, sender, 'feed_a')), {
      logger,
      connection: pgConnection(),
    });
    try {
      // Enough for the chain to admit and send some batches while its input stays open.
      night.child.stdin!.write(ndjsonOf(txs.slice(0, 1000)));
      const batches = async () =>
        (await older.query<{ n: number }>('other', 'SELECT count(*)::int AS n FROM svc_ingest.batches'))
          .rows[0]?.n;
      for (let i = 0; i < 400 && ((await batches()) ?? 0) < 2; i++)
        await new Promise((r) => setTimeout(r, 25));
      expect(await batches()).toBeGreaterThanOrEqual(2);
      const registered = await older.query<{ worker_no: number }>('other', SCHEMA6_REGISTER_SQL, [
        'v6-host:2:v6',
        2,
        '1 hour',
      ]);
      night.child.stdin!.end(ndjsonOf(txs.slice(1000)));
      const r = await night.done;
      expect(r.code, r.stderr).toBe(0);
      expect(summary(r)).toMatchObject({ read: 1200, sent: 1200 });
      const skipped = await older.query<{ id: string; acked: boolean }>('other', SCHEMA6_CLAIM_SQL, [
        txs.map((t) => t.transactionId),
        registered.rows[0]?.worker_no,
        true,
        1,
      ]);
      expect(skipped.rows.filter((x) => x.acked)).toHaveLength(1200);
    } finally {
      await older.close();
    }
  });

  it("docs/postgres.md's `ledger grant` example prints what it shows, run as written twice", async () => {
    const [command, ...shown] = docBlock('$ svc-ingest ledger grant');
    for (let i = 0; i < 2; i++) {
      const r = await runCliHere(shellWords((command ?? '').slice(2)).slice(1));
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout.trimEnd().split('\n')).toEqual(shown);
    }
  });

  it('a role granted --for backfill plans, works and reads the backfill status', async () => {
    const { url, owner, roles } = await withRoles('bf_owner', 'bf_worker');
    const worker = roles[0] as string;
    await migrateAndGrant(as(url, owner, 'feed_a'), [[worker, 'backfill']]);
    const dir = await mkdtemp(join(tmpdir(), 'svc-grant-backfill-'));
    const file = join(dir, 'all.ndjson');
    await writeFile(file, ndjsonOf(range(200).map((i) => makeTx(i, 'gb'))));
    const ledger = as(url, worker, 'feed_a');
    const planned = await runCliHere(
      ['backfill', 'plan', '--ledger', ledger, '--partition-bytes', '8000', file],
      {
        env: { SVC_BASE_URL: sim.url },
      },
    );
    expect(planned.code, planned.stderr).toBe(0);
    const worked = await runCliHere(['backfill', 'work', '--ledger', ledger, '--json'], {
      env: { SVC_BASE_URL: sim.url, SVC_REJECTS_PATH: join(dir, 'rejects.ndjson') },
    });
    expect(worked.code, worked.stderr).toBe(0);
    const status = await runCliHere(['backfill', 'status', '--json', '--ledger', ledger]);
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ done: true, records: { sent: 200 } });
  });

  it("docs/postgres.md's privileges exactly: the owner of an empty schema, with no CREATE on the database, migrates and grants; a night as the send role; a prune as the prune role (schema 7: it reads workers too)", async () => {
    const { url, db, owner, roles } = await withRoles('pr_owner', 'pr_sender', 'pr_pruner');
    const [sender, pruner] = roles as [string, string];
    const [privileges] = await pgs.sql<{ create: boolean; owns: boolean }>(
      db,
      `SELECT has_database_privilege($1, current_database(), 'CREATE') AS create,
              (SELECT nspowner = (SELECT oid FROM pg_roles WHERE rolname = $1) FROM pg_namespace
               WHERE nspname = 'feed_a') AS owns`,
      [owner],
    );
    expect(privileges).toEqual({ create: false, owns: true });
    await migrateAndGrant(as(url, owner, 'feed_a'), [
      [sender, 'send'],
      [pruner, 'prune'],
    ]);
    const dir = await mkdtemp(join(tmpdir(), 'svc-grant-prune-'));
    const env = { SVC_BASE_URL: sim.url, SVC_REJECTS_PATH: join(dir, 'rejects.ndjson') };
    const night = async (name: string, n: number) => {
      const file = join(dir, `${name}.ndjson`);
      await writeFile(file, ndjsonOf(range(n).map((i) => makeTx(i, name))));
      const r = await runCliHere(['send', ...FAST, '--ledger', as(url, sender, 'feed_a'), file], { env });
      expect(r.code, r.stderr).toBe(0);
    };
    await night('old', 100);
    await pgs.sql(db, `UPDATE feed_a.batches SET ts = '2026-01-02T00:00:00Z'`);
    await night('new', 50);
    expect(await pruneBefore2026June(as(url, pruner, 'feed_a'))).toMatchObject({
      prunedBatches: 2,
      prunedTransactions: 100,
    });
    const [left] = await pgs.sql<{ acked: number; rows: number }>(
      db,
      `SELECT (SELECT count(*)::int FROM feed_a.transaction_states WHERE state = 'acked') AS acked,
              (SELECT count(*)::int FROM feed_a.transactions) AS rows`,
    );
    expect(left).toEqual({ acked: 50, rows: 50 });
  });

  it("feed B's role cannot read feed A's tickets; each feed's tickets role works in its own schema", async () => {
    const made = await withRoles('tk_owner', 'tk_feed_a', 'tk_feed_b');
    const { url, db, owner } = made;
    await ownedSchema(db, 'feed_b', owner);
    const roles: Record<string, string> = {
      feed_a: made.roles[0] as string,
      feed_b: made.roles[1] as string,
    };
    for (const feed of ['feed_a', 'feed_b']) {
      const m = await runCliHere(['ledger', 'migrate', '--ledger', as(url, owner, feed)]);
      expect(m.code, m.stderr).toBe(0);
      const g = await runCliHere([
        'ledger',
        'grant',
        '--ledger',
        as(url, owner, feed),
        '--role',
        roles[feed] as string,
        '--for',
        'tickets',
        '--apply',
      ]);
      expect(g.code, g.stderr).toBe(0);
    }
    const ledgerOf = (feed: string, schema: string) => ['--ledger', as(url, roles[feed] as string, schema)];
    const ticket =
      '--ticket-id 7001 --customer cust-0001 --offer 100001 --transaction 7 --force --json'.split(' ');
    const created = await runCliHere(
      ['tickets', 'create', ...ledgerOf('feed_a', 'feed_a'), ...ticket, '--description', 'feed A complaint'],
      { env: { SVC_BASE_URL: sim.url } },
    );
    expect(created.code, created.stderr).toBe(0);
    const status = (feed: string, schema: string) =>
      runCliHere(['tickets', 'status', '--json', ...ledgerOf(feed, schema)]);
    const own = await status('feed_a', 'feed_a');
    expect(own.code, own.stderr).toBe(0);
    expect(own.stdout).toContain('7001');
    // Feed B's role, pointed at feed A's tickets: permission denied, nothing shown.
    const other = await status('feed_b', 'feed_a');
    expect(other.code).toBe(1);
    expect(other.stderr).toMatch(/LEDGER_READ: .*permission denied/);
    expect(other.stdout).not.toContain('7001');
    expect(other.stderr).not.toContain('complaint');
    // And in its own schema it sees none of them.
    const mine = await status('feed_b', 'feed_b');
    expect(mine.code, mine.stderr).toBe(0);
    expect(mine.stdout).not.toContain('7001');
    const rows = await pgs.sql<{ n: number }>(db, 'SELECT count(*)::int AS n FROM feed_a.ticket_events');
    expect(rows[0]?.n).toBeGreaterThan(0);
  });
});
