// `svc-ingest backfill plan|status` and `ledger migrate` through the real CLI against a real PostgreSQL: partitions
// whose ranges read back exactly what one reader of the file reads, planning twice changes nothing, bad input
// stops the plan before anything is recorded, the password never shows, and status reads it all back.
import { copyFileSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readInput } from '../../src/read/open.ts';
import { readRange } from '../../src/read/range.ts';
import type { ReadItem } from '../../src/read/types.ts';
import { ROOT, runCliHere } from '../helpers/cli.ts';
import { usePostgres } from '../helpers/postgres.ts';
import { csvOf, makeTx } from '../helpers/transactions.ts';

const pgs = usePostgres();
const dir = mkdtempSync(join(tmpdir(), 'svc-plan-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const dbName = (url: string) => url.split('/').pop() as string;

async function all(chunks: AsyncIterable<ReadItem[]>): Promise<ReadItem[]> {
  const out: ReadItem[] = [];
  for await (const c of chunks) out.push(...c);
  return out;
}

describe('backfill plan', () => {
  it('cuts files at record boundaries; the recorded ranges read back as one reader reads the file', async () => {
    const url = await pgs.createDatabase();
    const csv = join(dir, 'big.csv');
    // A quoted merchant name with a line break inside: never a boundary.
    const rows = Array.from({ length: 400 }, (_, i) => makeTx(i, 'pl'));
    writeFileSync(csv, csvOf(rows).replace('BLUE BOTTLE COFFEE', '"BLUE\nBOTTLE, COFFEE"'));
    const ndjson = join(dir, 'copy.ndjson');
    copyFileSync(join(ROOT, 'samples/canonical.ndjson'), ndjson);
    const gz = join(dir, 'copy.csv.gz');
    copyFileSync(join(ROOT, 'samples/canonical.csv.gz'), gz);
    const r = await runCliHere([
      'backfill',
      'plan',
      '--ledger',
      url,
      '--partition-bytes',
      '8000',
      '--json',
      csv,
      ndjson,
      gz,
    ]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.ledger).toBe(pgs.urlWithoutPassword(dbName(url)));
    expect(
      out.files.map((f: { path: string; partitions: number; created: boolean; gzip: boolean }) => [
        f.path,
        f.created,
        f.gzip,
      ]),
    ).toEqual([
      [csv, true, false],
      [ndjson, true, false],
      [gz, true, true],
    ]);
    expect(out.files[0].partitions).toBeGreaterThan(5);
    expect(out.files[2].partitions).toBe(1);

    const parts = await pgs.sql(
      dbName(url),
      `SELECT i.path, i.format, i.gzip, i.delimiter, i.record_delimiter, i.columns, p.seq, p.start_byte, p.end_byte, p.first_line
       FROM svc_ingest.partitions p JOIN svc_ingest.inputs i USING (input_no) ORDER BY i.input_no, p.seq`,
    );
    for (const file of [csv, ndjson, gz]) {
      const mine = parts.filter((p) => p.path === file);
      const items: ReadItem[] = [];
      for (const p of mine) {
        items.push(
          ...(await all(
            readRange({
              path: p.path,
              format: p.format,
              gzip: p.gzip,
              start: Number(p.start_byte),
              end: Number(p.end_byte),
              firstLine: Number(p.first_line),
              columns: p.columns ?? undefined,
              recordDelimiter: p.record_delimiter ?? undefined,
              delimiter: p.delimiter,
            }),
          )),
        );
      }
      const whole = await all(readInput({ path: file, format: mine[0]?.format, gzip: mine[0]?.gzip }, {}));
      expect(items).toEqual(whole);
      expect(whole.length).toBeGreaterThan(10);
    }
  });

  it('planning the same files again records nothing new; a changed file is refused', async () => {
    const url = await pgs.createDatabase();
    const csv = join(dir, 'again.csv');
    writeFileSync(csv, csvOf(Array.from({ length: 100 }, (_, i) => makeTx(i, 'ag'))));
    const args = ['backfill', 'plan', '--ledger', url, '--partition-bytes', '5000', csv];
    const first = await runCliHere(args);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/again\.csv: .*, \d+ partitions, planned/);
    const n1 = await pgs.sql(dbName(url), 'SELECT count(*)::int AS n FROM svc_ingest.partitions');
    const second = await runCliHere(args);
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(/again\.csv: .*, already planned/);
    expect(await pgs.sql(dbName(url), 'SELECT count(*)::int AS n FROM svc_ingest.partitions')).toEqual(n1);
    utimesSync(csv, new Date(), new Date(Date.now() + 5000));
    const changed = await runCliHere(args);
    expect(changed.code).toBe(1);
    expect(changed.stderr).toMatch(
      /^svc-ingest: USAGE_INVALID: .*again\.csv was planned when it had \d+ bytes .*needs a new backfill/,
    );
    expect(changed.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('checks every input before recording anything', async () => {
    const url = await pgs.createDatabase();
    const good = join(dir, 'good.csv');
    writeFileSync(good, csvOf([makeTx(1, 'gd')]));
    const r = await runCliHere([
      'backfill',
      'plan',
      '--ledger',
      url,
      good,
      join(ROOT, 'samples/northwind.csv'),
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /^svc-ingest: INPUT_HEADER_MISSING_COLUMN: .*northwind\.csv: header lacks columns .* needed by mapping canonical\n$/,
    );
    expect(await pgs.sql(dbName(url), `SELECT to_regclass('svc_ingest.inputs') AS t`)).toEqual([{ t: null }]);
    const mapped = await runCliHere([
      'backfill',
      'plan',
      '--ledger',
      url,
      '--mapping',
      'northwind-csv',
      '--json',
      join(ROOT, 'samples/northwind.csv'),
    ]);
    expect(mapped.code).toBe(0);
    const rows = await pgs.sql(dbName(url), 'SELECT mapping, mapping_sha256 FROM svc_ingest.inputs');
    expect(rows).toEqual([
      { mapping: 'northwind-csv', mapping_sha256: expect.stringMatching(/^[0-9a-f]{64}$/) },
    ]);
    for (const bad of [['-'], []]) {
      const e = await runCliHere(['backfill', 'plan', '--ledger', url, ...bad]);
      expect(e.code).toBe(1);
    }
  });

  it('needs a postgres URL; an unreachable one is one line without the password', async () => {
    const noUrl = await runCliHere(['backfill', 'plan', join(ROOT, 'samples/canonical.csv')], {
      env: { SVC_LEDGER_URL: '' },
    });
    expect(noUrl.code).toBe(1);
    expect(noUrl.stderr).toMatch(
      /^svc-ingest: USAGE_INVALID: backfill plan needs the shared PostgreSQL ledger/,
    );
    const down = await runCliHere(['backfill', 'status'], {
      env: { SVC_LEDGER_URL: 'postgres://svc:hunter22@127.0.0.1:1/x' },
    });
    expect(down.code).toBe(1);
    expect(down.stderr).toBe(
      'svc-ingest: LEDGER_READ: cannot connect to the ledger database postgres://svc@127.0.0.1:1/x: connect ECONNREFUSED 127.0.0.1:1\n',
    );
  });

  it('takes the password from SVC_LEDGER_PASSWORD_FILE and never prints it', async () => {
    const url = await pgs.createDatabase();
    const pw = join(dir, 'pw');
    writeFileSync(pw, pgs.password, { mode: 0o600 });
    const r = await runCliHere(
      ['backfill', 'plan', '--log-level', 'debug', join(ROOT, 'samples/canonical.csv')],
      {
        env: { SVC_LEDGER_URL: pgs.urlWithoutPassword(dbName(url)), SVC_LEDGER_PASSWORD_FILE: pw },
      },
    );
    expect(r.code).toBe(0);
    expect(`${r.stdout}${r.stderr}`).not.toContain(pgs.password);
    const withPw = await runCliHere(['backfill', 'status', '--ledger', url, '--log-level', 'debug']);
    expect(withPw.code).toBe(0);
    expect(`${withPw.stdout}${withPw.stderr}`).not.toContain(pgs.password);
  });
});

describe('backfill status', () => {
  it('shows the planned partitions, as text and --json', async () => {
    const url = await pgs.createDatabase();
    const none = await runCliHere(['backfill', 'status', '--ledger', url]);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/USAGE_INVALID: no backfill planned in postgres:\/\/postgres@/);
    const csv = join(dir, 'status.csv');
    writeFileSync(csv, csvOf(Array.from({ length: 60 }, (_, i) => makeTx(i, 'st'))));
    expect(
      (await runCliHere(['backfill', 'plan', '--ledger', url, '--partition-bytes', '4000', csv])).code,
    ).toBe(0);
    const j = await runCliHere(['backfill', 'status', '--ledger', url, '--json']);
    expect(j.code).toBe(0);
    const s = JSON.parse(j.stdout);
    expect(s).toMatchObject({ inputs: 1, done: false, etaSeconds: null, records: { sent: 0 }, workers: [] });
    expect(s.partitions.pending).toBe(s.partitions.total);
    expect(s.partitions.total).toBeGreaterThan(2);
    const t = await runCliHere(['backfill', 'status', '--ledger', url]);
    expect(t.stdout).toContain(
      `partitions: ${s.partitions.total} in 1 input(s) · 0 done · 0 working · 0 stale`,
    );
    expect(t.stdout).toMatch(/^backfill in postgres:\/\/postgres@127\.0\.0\.1:\d+\/\w+: in progress$/m);
  });
});

describe('ledger migrate', () => {
  it('creates the schema, records its version, and does nothing the second time', async () => {
    const url = await pgs.createDatabase();
    const first = await runCliHere(['ledger', 'migrate', '--ledger', url]);
    expect(first.code).toBe(0);
    expect(first.stdout).toBe(
      `${pgs.urlWithoutPassword(dbName(url))}: schema migrated from version 0 to 7\n  applied 1: ledger and backfill\n  applied 2: backfill takeovers and workers\n  applied 3: destinations\n  applied 4: worker identity, rejects written\n  applied 5: tickets per feed\n  applied 6: heap-only record updates\n  applied 7: acknowledgements per batch\n`,
    );
    const second = await runCliHere(['ledger', 'migrate', '--ledger', url, '--json']);
    expect(JSON.parse(second.stdout)).toEqual({
      ledger: pgs.urlWithoutPassword(dbName(url)),
      from: 7,
      to: 7,
      applied: [],
    });
    const v = await pgs.sql(
      dbName(url),
      'SELECT version, name, applied_by FROM svc_ingest.migrations ORDER BY version',
    );
    expect(v).toEqual([
      { version: 1, name: 'ledger and backfill', applied_by: expect.stringMatching(/:\d+$/) },
      { version: 2, name: 'backfill takeovers and workers', applied_by: expect.stringMatching(/:\d+$/) },
      { version: 3, name: 'destinations', applied_by: expect.stringMatching(/:\d+$/) },
      { version: 4, name: 'worker identity, rejects written', applied_by: expect.stringMatching(/:\d+$/) },
      { version: 5, name: 'tickets per feed', applied_by: expect.stringMatching(/:\d+$/) },
      { version: 6, name: 'heap-only record updates', applied_by: expect.stringMatching(/:\d+$/) },
      { version: 7, name: 'acknowledgements per batch', applied_by: expect.stringMatching(/:\d+$/) },
    ]);
  });
});
