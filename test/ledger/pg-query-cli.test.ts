// `ledger status|failed|find` on a PostgreSQL ledger give the answers they give on a ledger file, in the same shapes:
// the same three runs of `send` (poison records failing, then one of them let through) are made against a ledger
// file and against a database, and the commands' JSON compared, field by field, less what names the ledger or the run.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FAST, workdir } from '../faults/helpers.ts';
import { type CliResult, runCliHere } from '../helpers/cli.ts';
import { usePostgres } from '../helpers/postgres.ts';
import { useSimulator } from '../helpers/simulator.ts';
import { makeTx, ndjsonOf, range } from '../helpers/transactions.ts';

const pgs = usePostgres();
const sim = useSimulator({ seed: 31 }, 'reset');

const ndjson = (r: CliResult) =>
  r.stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

/** The service's request id in an error text differs from run to run. */
const noRequestId = (r: Record<string, unknown>) =>
  typeof r.error === 'string' ? { ...r, error: r.error.replace(/\[requestId [^\]]+\]/, '[requestId]') } : r;

/** A status without what names the ledger, the runs, or when. */
function comparable(s: Record<string, unknown>) {
  const runs = (s.runs as Array<Record<string, unknown>>).map(({ runId, firstTs, lastTs, ...r }) => r);
  return { batches: s.batches, ids: s.ids, lines: s.lines, badLines: s.badLines, runs };
}

describe('ledger status|failed|find on a PostgreSQL ledger', () => {
  it('answers as on a ledger file, in the same shapes; the password is never shown', async () => {
    const w = await workdir('pg-query');
    const txs = range(300).map((i) => makeTx(i, 'pq'));
    const poison = [txs[17]!.transactionId, txs[230]!.transactionId];
    const file = join(w.dir, 'in.ndjson');
    await writeFile(file, ndjsonOf(txs));
    const url = await pgs.createDatabase();
    const ledgers = { file: join(w.dir, 'ledger.ndjson'), pg: url };
    const out: Record<string, { status: CliResult; failed: CliResult; find: CliResult; text: CliResult }> =
      {};
    for (const [kind, ledger] of Object.entries(ledgers)) {
      const send = () =>
        runCliHere(
          ['send', ...FAST, '--max-retries', '1', '--split-retries', '0', '--ledger', ledger, file],
          {
            env: { SVC_BASE_URL: sim.url, SVC_REJECTS_PATH: join(w.dir, `rejects-${kind}.ndjson`) },
          },
        );
      sim.setFaults({ poison });
      expect((await send()).code).toBe(3);
      expect((await send()).code).toBe(3);
      sim.setFaults({ poison: [poison[0]!] });
      expect((await send()).code).toBe(3);
      out[kind] = {
        status: await runCliHere(['ledger', 'status', '--json', '--ledger', ledger]),
        failed: await runCliHere(['ledger', 'failed', '--json', '--ledger', ledger]),
        find: await runCliHere([
          'ledger',
          'find',
          '--json',
          '--ledger',
          ledger,
          txs[5]!.transactionId,
          poison[0]!,
          poison[1]!,
          'pq-absent',
        ]),
        text: await runCliHere(['ledger', 'status', '--ledger', ledger]),
      };
    }
    const f = out.file!;
    const p = out.pg!;
    expect(p.status.code, p.status.stderr).toBe(0);
    const fs = JSON.parse(f.status.stdout);
    const ps = JSON.parse(p.status.stdout);
    expect(Object.keys(ps).sort()).toEqual(Object.keys(fs).sort());
    expect(comparable(ps)).toEqual(comparable(fs));
    expect(ps.ids).toMatchObject({ outstanding: 1, ackedDistinct: 299 });
    expect(ps.runs).toHaveLength(3);
    expect(ps.ledgers).toEqual([
      {
        path: pgs.urlWithoutPassword(url.split('/').pop()),
        lines: ps.lines,
        badLines: 0,
        badLineNumbers: [],
      },
    ]);

    expect(p.failed.code).toBe(3);
    expect(f.failed.code).toBe(3);
    const strip = ({
      ts,
      batchId,
      runId,
      requestId,
      clientRequestId,
      ledger,
      ...r
    }: Record<string, unknown>) => r;
    const pf = ndjson(p.failed);
    expect(pf.map(strip).map(noRequestId)).toEqual(ndjson(f.failed).map(strip).map(noRequestId));
    expect(pf).toEqual([expect.objectContaining({ transactionId: poison[0], failures: 3, httpStatus: 500 })]);
    expect(Object.keys(pf[0]!)).toEqual(Object.keys(ndjson(f.failed)[0]!));

    expect(p.find.code).toBe(2);
    expect(f.find.code).toBe(2);
    const hit = ({
      ts,
      batchId,
      runId,
      requestId,
      clientRequestId,
      ledger,
      ledgerLine,
      ...r
    }: Record<string, unknown>) => r;
    const pfind = ndjson(p.find);
    // Hits come in ledger order. Within one run the two poison records' batches are in flight together and either
    // may be recorded first, so the two ledgers are compared as sets of hits, and each record's history in order.
    const asSet = (hits: Array<Record<string, unknown>>) =>
      hits.map((h) => JSON.stringify(noRequestId(hit(h)))).sort();
    expect(asSet(pfind)).toEqual(asSet(ndjson(f.find)));
    const historyOf = (hits: Array<Record<string, unknown>>, id: string | undefined) =>
      hits.filter((h) => h.transactionId === id).map((h) => h.status);
    for (const hits of [pfind, ndjson(f.find)]) {
      expect(historyOf(hits, txs[5]!.transactionId)).toEqual(['acked']);
      expect(historyOf(hits, poison[0])).toEqual(['failed', 'failed', 'failed']);
      expect(historyOf(hits, poison[1])).toEqual(['failed', 'failed', 'acked']);
      expect(historyOf(hits, 'pq-absent')).toEqual(['absent']);
      expect(hits).toHaveLength(8);
    }
    expect(Object.keys(pfind[1]!)).toEqual(Object.keys(ndjson(f.find)[1]!));

    expect(p.text.stdout).toMatch(
      /^ledger postgres:\/\/postgres@127\.0\.0\.1:\d+\/\w+: \d+ line\(s\), none unreadable$/m,
    );
    for (const r of Object.values(p)) expect(r.stdout + r.stderr).not.toContain(pgs.password);

    const mixed = await runCliHere(['ledger', 'status', '--ledger', url, '--ledger', ledgers.file]);
    expect(mixed.code).toBe(1);
    expect(mixed.stderr).toMatch(/^svc-ingest: USAGE_INVALID: a PostgreSQL ledger is read on its own/m);
    const empty = await runCliHere(['ledger', 'status', '--ledger', await pgs.createDatabase()]);
    expect(empty.code).toBe(1);
    expect(empty.stderr).toMatch(
      /^svc-ingest: LEDGER_READ: the database postgres:\/\/postgres@.* holds no ledger/m,
    );
  });
});
