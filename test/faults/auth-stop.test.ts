// A refused token (401, 403) on the transactions endpoint ends the run at once: exit 1, one line, no bisection,
// no further batches — a handful of requests on the server, not the ~1,300 a bisected run used to cost.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
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
  report,
  STACK,
  summary,
  workdir,
  writeNdjson,
} from './helpers.ts';

const TOKEN = 'tok-Right-4f00d1e5';
const sim = useSimulator({ seed: 401, requireToken: TOKEN }, 'reset');
const sends = () => sim.stats().requests.byPath['/v2/data/transactions'] ?? 0;

let forbidding: TestServer;
beforeAll(async () => {
  forbidding = await startTestServer((req, res) => {
    if (req.method === 'HEAD') return void res.writeHead(405, { allow: 'POST' }).end();
    res.writeHead(403, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        type: 'Forbidden',
        title: 'Institution scope missing',
        status: 403,
        requestId: 'f-1',
      }),
    );
  });
});
afterAll(async () => {
  await forbidding?.close();
});

describe('authentication refused', () => {
  it('401 (wrong token): exit 1 with one line after at most one request per slot; nothing split; a rerun with the right token sends all once', async () => {
    const w = await workdir('auth401');
    const file = join(w.dir, 'in.ndjson');
    const ids = await writeNdjson(file, 5_000, 'au');
    const env = (token: string) => w.env(sim, { SVC_AUTH_TOKEN_ENV: 'PARTNER_TOKEN', PARTNER_TOKEN: token });
    const t0 = performance.now();
    const r = await runCliHere(['send', ...FAST, '--concurrency', '4', file], { env: env(`${TOKEN}-wrong`) });
    const wallMs = Math.round(performance.now() - t0);
    expect(r.code, r.stderr).toBe(1);
    // --json: the one error object, nothing else.
    expect(JSON.parse(r.stdout)).toMatchObject({ error: { code: 'SEND_AUTH' } });
    expect(r.stdout.trim().split('\n')).toHaveLength(1);
    const lines = r.stderr.trim().split('\n');
    expect(lines, r.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(/^svc-ingest: SEND_AUTH: POST .* answered HTTP 401 .*stopped at once/);
    expect(r.stderr).not.toMatch(STACK);
    expect(r.stderr).not.toContain('Right-4f00d1e5');
    // Counted on the server: one request per batch in flight, no retry, no split; the check is counted apart.
    const firstRunRequests = sends();
    expect(firstRunRequests).toBeLessThanOrEqual(4);
    expect(sim.stats().requests.byStatus['401']).toBe(sends());
    expect(sim.stats().requests.preflight).toBe(1);
    expect(sim.deliveries().size).toBe(0);
    const { rows } = await readLedgerBack(w.ledger);
    expect(idsWith(rows, 'acked').size).toBe(0);
    const failed = idsWith(rows, 'failed');
    expect(failed.size).toBeGreaterThan(0);
    expect(failed.size).toBeLessThan(5_000);
    expect(rows.every((row) => row.attempts <= 1)).toBe(true);
    expect(rows.filter((row) => row.httpStatus === 401).length).toBe(sends());
    expect(rows.some((row) => row.error === 'not sent: the service refused our credentials (HTTP 401)')).toBe(
      true,
    );
    const ledgerText = existsSync(w.ledger) ? await readFile(w.ledger, 'utf8') : '';
    expect(ledgerText).not.toContain('Right-4f00d1e5');

    const rerun = await runCliHere(['send', ...FAST, file], { env: env(TOKEN) });
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(summary(rerun)).toMatchObject({ read: 5_000, sent: 5_000, skipped: 0, failed: 0 });
    expect(deliveryCounts(sim, ids)).toEqual({ missing: 0, once: 5_000, duplicated: 0, extra: 0 });
    report('auth: 401 wrong token', {
      records: 5_000,
      serverRequests: firstRunRequests,
      failedInLedger: failed.size,
      wallMs,
      exit: r.code,
    });
  });

  it('403: exit 1 with one line, no bisection, no further batches', async () => {
    const w = await workdir('auth403');
    const file = join(w.dir, 'in.ndjson');
    await writeNdjson(file, 2_000, 'af');
    const r = await runCliHere(['send', ...FAST, '--concurrency', '2', file], {
      env: { SVC_BASE_URL: forbidding.url, SVC_LEDGER_PATH: w.ledger, SVC_REJECTS_PATH: w.rejects },
    });
    expect(r.code, r.stderr).toBe(1);
    const lines = r.stderr.trim().split('\n');
    expect(lines, r.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(/SEND_AUTH: .*HTTP 403 Forbidden: Institution scope missing/);
    const posts = forbidding.received.filter((q) => q.method === 'POST');
    expect(posts.length).toBeLessThanOrEqual(2);
    // Whole batches only: nothing was halved to look for a bad record.
    for (const p of posts)
      expect((JSON.parse(p.body) as { transactions: unknown[] }).transactions).toHaveLength(50);
    const { rows } = await readLedgerBack(w.ledger);
    expect(idsWith(rows, 'acked').size).toBe(0);
    expect(rows.filter((row) => row.httpStatus === 403)).toHaveLength(posts.length);
  });
});
