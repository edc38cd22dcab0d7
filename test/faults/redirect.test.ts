// Redirects are never followed: a 3xx from the service (here a 308 to a second, capturing server) stops the run
// at once with exit 1 and one line naming only the Location's origin; the capture server receives nothing.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SvcRedirectError } from '../../src/client/errors.ts';
import { createClient } from '../../src/client/index.ts';
import { configFor, makeTransactions } from '../client/fixtures.ts';
import { runCliHere } from '../helpers/cli.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { useSimulator } from '../helpers/simulator.ts';
import { makeTx, ndjsonOf, range } from '../helpers/transactions.ts';
import { FAST, idsWith, readLedgerBack, report, STACK, summary, workdir } from './helpers.ts';

const SECRET_QUERY = 'token=s3cr3t-query-value';
const TOKEN = 'tok-redirect-7a1f2e9c';
const sim = useSimulator({ seed: 308 });

let capture: TestServer;
/** Redirects POSTs only: the connection check (HEAD) gets the 405 a service gives a method it does not serve. */
let postRedirect: TestServer;
/** Redirects everything, the connection check included. */
let allRedirect: TestServer;

beforeAll(async () => {
  // An attacker's server would acknowledge whatever it got.
  capture = await startTestServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"requestId":"stolen"}');
  });
  const location = `${capture.url}/steal/here?${SECRET_QUERY}`;
  postRedirect = await startTestServer((req, res) => {
    if (req.method === 'HEAD') res.writeHead(405, { allow: 'POST' }).end();
    else res.writeHead(308, { location }).end();
  });
  allRedirect = await startTestServer((req, res) => {
    res.writeHead(req.method === 'GET' ? 302 : 307, { location }).end();
  });
});
afterAll(async () => {
  await Promise.all([capture, postRedirect, allRedirect].map((s) => s?.close()));
});

const posts = (s: TestServer) => s.received.filter((r) => r.method === 'POST').length;

describe('redirects', () => {
  it('send: a 308 on the transactions endpoint stops the run at once (exit 1, one line, origin only); nothing reaches the other host; a rerun sends everything', async () => {
    const w = await workdir('redirect');
    const txs = range(300).map((i) => makeTx(i, 'rd'));
    const file = join(w.dir, 'in.ndjson');
    await writeFile(file, ndjsonOf(txs));
    const env = {
      SVC_BASE_URL: postRedirect.url,
      SVC_LEDGER_PATH: w.ledger,
      SVC_REJECTS_PATH: w.rejects,
      SVC_AUTH_TOKEN_ENV: 'PARTNER_TOKEN',
      PARTNER_TOKEN: TOKEN,
    };
    const r = await runCliHere(['send', ...FAST, '--concurrency', '4', '--batch-size', '10', file], { env });
    expect(r.code, r.stderr).toBe(1);
    // --json: the one error object, nothing else.
    expect(JSON.parse(r.stdout)).toMatchObject({ error: { code: 'SEND_REDIRECT' } });
    expect(r.stdout.trim().split('\n')).toHaveLength(1);
    const lines = r.stderr.trim().split('\n');
    expect(lines, r.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^svc-ingest: SEND_REDIRECT: .*HTTP 308, a redirect to http:\/\/127\.0\.0\.1:\d+;/,
    );
    expect(lines[0]).toContain(capture.url);
    expect(r.stderr).not.toContain('s3cr3t');
    expect(r.stderr).not.toContain('/steal');
    expect(r.stderr).not.toMatch(STACK);
    // Nothing followed the redirect: the capture server saw no request, so neither the batch nor the token.
    expect(capture.received).toHaveLength(0);
    // No bisection, no retry: at most one request per batch in flight.
    expect(posts(postRedirect)).toBeLessThanOrEqual(4);
    // Nothing acknowledged; every record read is failed in the ledger, the rest was never read.
    const { rows } = await readLedgerBack(w.ledger);
    expect(idsWith(rows, 'acked').size).toBe(0);
    const failed = idsWith(rows, 'failed');
    expect(failed.size).toBeGreaterThan(0);
    for (const row of rows) {
      expect(row.error ?? '').not.toContain('s3cr3t');
      expect([308, null]).toContain(row.httpStatus);
    }
    expect(rows.some((row) => row.httpStatus === 308)).toBe(true);
    expect(
      rows.some((row) => (row.error ?? '').startsWith('not sent: the service answered with a redirect')),
    ).toBe(true);

    // The right service: the rerun sends every record once.
    const rerun = await runCliHere(['send', ...FAST, file], { env: { ...env, SVC_BASE_URL: sim.url } });
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(summary(rerun)).toMatchObject({ read: 300, sent: 300, skipped: 0 });
    report('redirect: 308 on transactions', {
      postsToRedirector: posts(postRedirect),
      captured: capture.received.length,
      failedInLedger: failed.size,
      exit: r.code,
      rerunSent: 300,
    });
  });

  it('send: a redirect on the connection check stops before anything is read or sent (exit 1)', async () => {
    const w = await workdir('redirect-pre');
    const file = join(w.dir, 'in.ndjson');
    await writeFile(file, ndjsonOf(range(20).map((i) => makeTx(i, 'rp'))));
    const before = allRedirect.received.length;
    const r = await runCliHere(['send', ...FAST, file], {
      env: { SVC_BASE_URL: allRedirect.url, SVC_LEDGER_PATH: w.ledger, SVC_REJECTS_PATH: w.rejects },
    });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(
      /SEND_REDIRECT: HEAD http:\/\/127\.0\.0\.1:\d+\/v2\/data\/transactions answered HTTP 307/,
    );
    expect(r.stderr).not.toContain('s3cr3t');
    expect(allRedirect.received.slice(before).map((q) => q.method)).toEqual(['HEAD']);
    expect(capture.received).toHaveLength(0);
    const { rows } = await readLedgerBack(w.ledger);
    expect(rows).toHaveLength(0);
  });

  it('client: every endpoint refuses a redirect once, without following it or retrying', async () => {
    const client = createClient(configFor(allRedirect.url));
    const before = allRedirect.received.length;
    const calls: Array<[string, () => Promise<unknown>]> = [
      ['transactions', () => client.postTransactions(makeTransactions(2), { requestId: 'r-1' })],
      ['redemptions (startSession)', () => client.getRedemptions('cust-0001')],
      [
        'stores',
        () =>
          client.getStoreLocations({
            adIds: ['100001'],
            customerLocation: { postalCode: '10001' },
            storeLocationRadiusInMeters: 1000,
          }),
      ],
      [
        'create ticket',
        () =>
          client.createTicket({
            sourceTicketId: 'T-r',
            sourceCustomerId: 'cust-0001',
            offerId: 100001,
            transactionIds: [1],
            description: 'reward missing',
          }),
      ],
      ['get ticket', () => client.getTicket('T-r')],
    ];
    try {
      for (const [name, call] of calls) {
        const err = await call().then(
          () => null,
          (e: unknown) => e,
        );
        expect(err, name).toBeInstanceOf(SvcRedirectError);
        const e = err as SvcRedirectError;
        expect(e.code).toBe('SEND_REDIRECT');
        expect(e.location).toBe(capture.url);
        expect(e.message).not.toContain('s3cr3t');
        expect(e.message).not.toContain('/steal');
      }
      expect(allRedirect.received.length - before).toBe(calls.length);
      expect(capture.received).toHaveLength(0);
    } finally {
      await client.close();
    }
  });
});
