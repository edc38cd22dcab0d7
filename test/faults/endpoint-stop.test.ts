// A base URL whose path is wrong makes the transactions endpoint answer 404 (or 405) to every batch. No record can
// cause that, so the run stops at once (exit 1, one line naming the base URL as the thing to check) instead of
// halving every batch down to single records for minutes, and the rerun with the right URL sends everything once.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCliHere } from '../helpers/cli.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { useSimulator } from '../helpers/simulator.ts';
import {
  deliveryCounts,
  FAST,
  idsWith,
  readLedgerBack,
  STACK,
  summary,
  workdir,
  writeNdjson,
} from './helpers.ts';

const sim = useSimulator({ seed: 404 }, 'reset');

let wrongPath: TestServer;
beforeAll(async () => {
  // What a web server in front of another application answers: 405 to the check, 404 to every POST.
  wrongPath = await startTestServer((req, res) => {
    if (req.method === 'HEAD') return void res.writeHead(405, { allow: 'GET' }).end();
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ type: 'NotFound', title: 'No route', status: 404 }));
  });
});
afterAll(async () => {
  await wrongPath?.close();
});

describe('the transactions endpoint is not at the base URL', () => {
  it('404 on every batch: exit 1 with one SEND_ENDPOINT line after at most one request per slot; nothing split; the rerun at the right URL sends all once', async () => {
    const w = await workdir('endpoint404');
    const file = join(w.dir, 'in.ndjson');
    const ids = await writeNdjson(file, 3_000, 'ep');
    const t0 = performance.now();
    const r = await runCliHere(['send', ...FAST, '--concurrency', '3', file], {
      env: { SVC_BASE_URL: wrongPath.url, SVC_LEDGER_PATH: w.ledger, SVC_REJECTS_PATH: w.rejects },
    });
    const wallMs = performance.now() - t0;
    expect(r.code, r.stderr).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ error: { code: 'SEND_ENDPOINT' } });
    const lines = r.stderr.trim().split('\n');
    expect(lines, r.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(/^svc-ingest: SEND_ENDPOINT: .*404.*stopped at once: .*base URL/);
    expect(r.stderr).not.toMatch(STACK);
    expect(wallMs).toBeLessThan(20_000);
    const posts = wrongPath.received.filter((q) => q.method === 'POST');
    expect(posts.length).toBeGreaterThan(0);
    expect(posts.length).toBeLessThanOrEqual(3);
    for (const p of posts)
      expect((JSON.parse(p.body) as { transactions: unknown[] }).transactions).toHaveLength(50);
    const { rows } = await readLedgerBack(w.ledger);
    expect(idsWith(rows, 'acked').size).toBe(0);
    expect(rows.filter((row) => row.httpStatus === 404)).toHaveLength(posts.length);
    expect(
      rows.some((row) => String(row.error).startsWith('not sent: the transactions endpoint answered 404')),
    ).toBe(true);

    const rerun = await runCliHere(['send', ...FAST, file], { env: w.env(sim) });
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(summary(rerun)).toMatchObject({ read: 3_000, sent: 3_000, skipped: 0, failed: 0 });
    expect(deliveryCounts(sim, ids)).toEqual({ missing: 0, once: 3_000, duplicated: 0, extra: 0 });
  });
});
