// The one rule that names the ledger (src/ledger/ref.ts), as an operator meets it, the CLI a child process: with
// SVC_LEDGER_URL set and no --ledger, `ledger prune` prunes the database (never a file ledger left in the working
// folder); a --ledger file while SVC_LEDGER_URL is set is used and said (the first log line, ledger status); a
// command that needs PostgreSQL refuses a file in one line. Real PostgreSQL, real simulator.
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, runCli } from '../helpers/cli.ts';
import { usePostgres } from '../helpers/postgres.ts';
import { useSimulator } from '../helpers/simulator.ts';

const pgs = usePostgres();
const sim = useSimulator({ seed: 47 }, 'none');
const SAMPLE = join(ROOT, 'samples/canonical.csv');
/** An outcome line of an earlier file ledger: it must stay where it is whatever the database's prune does. */
const OLD_LINE = `${JSON.stringify({ ts: '2020-01-01T00:00:00.000Z', batchId: 'b0', runId: 'r0', status: 'acked', transactionIds: ['old-1'] })}\n`;

const jsonLines = (text: string) =>
  text
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

/** A working folder holding a file ledger at the default path (ledger/transactions.ndjson). */
async function folderWithFileLedger(): Promise<{ dir: string; file: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-ledger-rule-'));
  await mkdir(join(dir, 'ledger'));
  const file = join(dir, 'ledger/transactions.ndjson');
  await writeFile(file, OLD_LINE, { mode: 0o600 });
  return { dir, file };
}

describe('SVC_LEDGER_URL and no --ledger', () => {
  it('ledger prune --before prunes the database; the file ledger of the working folder is left alone', async () => {
    const url = await pgs.createDatabase();
    const db = new URL(url).pathname.slice(1);
    const { dir, file } = await folderWithFileLedger();
    const env = { SVC_BASE_URL: sim.url, SVC_LEDGER_URL: url };
    const sent = await runCli(['send', '--json', SAMPLE], { cwd: dir, env });
    expect(sent.code, sent.stderr).toBe(2);
    await pgs.sql(db, 'UPDATE svc_ingest.batches SET ts = $1', ['2026-01-01T00:00:00Z']);
    const [before] = await pgs.sql<{ n: number }>(db, 'SELECT count(*)::int AS n FROM svc_ingest.batches');
    expect(before!.n).toBeGreaterThan(0);

    const pruned = await runCli(['ledger', 'prune', '--before', '2026-06-01', '--json'], { cwd: dir, env });
    expect(pruned.code, pruned.stderr).toBe(0);
    expect(JSON.parse(pruned.stdout)).toMatchObject({
      ledger: expect.stringMatching(/^postgres:\/\//),
      prunedBatches: before!.n,
      prunedTransactions: 18,
    });
    const [after] = await pgs.sql<{ n: number }>(db, 'SELECT count(*)::int AS n FROM svc_ingest.batches');
    expect(after!.n).toBe(0);
    expect(await readFile(file, 'utf8')).toBe(OLD_LINE);
  }, 60_000);
});

describe('a --ledger file while SVC_LEDGER_URL is set', () => {
  it('send uses the file and says so in its first log line; ledger status says it in its first line', async () => {
    const url = await pgs.createDatabase();
    const db = new URL(url).pathname.slice(1);
    const { dir, file } = await folderWithFileLedger();
    const env = { SVC_BASE_URL: sim.url, SVC_LEDGER_URL: url, SVC_LOG_FORMAT: 'json', SVC_LOG_LEVEL: 'info' };
    const sent = await runCli(['send', '--json', '--ledger', file, SAMPLE], { cwd: dir, env });
    expect(sent.code, sent.stderr).toBe(2);
    const [first] = jsonLines(sent.rawStderr ?? '');
    expect(first).toMatchObject({ level: 40, event: 'ledger.named_twice', ledger: file });
    expect(first!.msg).toBe(
      `--ledger ${file} is used; ledger.url (env SVC_LEDGER_URL) ${url.replace(/:[^:@/]*@/, '@')} is set and not used (drop --ledger to use it)`,
    );
    expect(String(first!.msg)).not.toContain(pgs.password);
    const start = jsonLines(sent.rawStderr ?? '').find((l) => l.event === 'run.start');
    expect(start).toMatchObject({ ledger: file, ledgerFrom: '--ledger' });
    // The file holds the night; the database was never written (no schema made).
    expect((await readFile(file, 'utf8')).split('\n').length).toBeGreaterThan(2);
    expect(await pgs.sql(db, "SELECT 1 FROM pg_namespace WHERE nspname = 'svc_ingest'")).toEqual([]);

    const status = await runCli(['ledger', 'status', '--ledger', file], { cwd: dir, env });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout.split('\n')[0]).toBe(first!.msg);
    expect(jsonLines(status.rawStderr ?? '')[0]).toMatchObject({ event: 'ledger.named_twice' });
    const asJson = await runCli(['ledger', 'status', '--json', '--ledger', file], { cwd: dir, env });
    expect(JSON.parse(asJson.stdout)).toMatchObject({ ledgerNotice: first!.msg, ids: { acked: 19 } });
  }, 60_000);
});

describe('a command that needs PostgreSQL, given a file', () => {
  it('refuses it in one line: from --ledger, or as the ledger in force (send.ledgerPath)', async () => {
    const { dir, file } = await folderWithFileLedger();
    const grant = await runCli(['ledger', 'grant', '--role', 'feed_a', '--for', 'send', '--ledger', file], {
      cwd: dir,
      env: { SVC_LEDGER_URL: pgs.url('postgres') },
    });
    expect(grant.code).toBe(1);
    expect(grant.stderr).toBe(
      `svc-ingest: USAGE_INVALID: ledger grant needs a PostgreSQL ledger (postgres://…), not ${file}\n`,
    );
    const plan = await runCli(['backfill', 'plan', SAMPLE], {
      cwd: dir,
      env: { SVC_LEDGER_URL: '', SVC_LEDGER_PATH: file },
    });
    expect(plan.code).toBe(1);
    expect(plan.stderr).toBe(
      'svc-ingest: USAGE_INVALID: backfill plan needs the shared PostgreSQL ledger: --ledger ' +
        'postgres://USER@HOST/DATABASE or env SVC_LEDGER_URL (the ledger in force is the file ' +
        `${file}, from send.ledgerPath (env SVC_LEDGER_PATH))\n`,
    );
  }, 30_000);
});
