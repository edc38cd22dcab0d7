// An unreachable service is an outage, not a bad record: send checks that the service answers before reading
// (HEAD, counted apart by the simulator) and exits 5 at once when it does not; a service that goes away mid-run is
// never bisected, and --outage-max-ms bounds the time to give up (exit 5) whatever the retry settings.
import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startSimulator } from '../../src/simulator/index.ts';
import { runCliHere } from '../helpers/cli.ts';
import { hasOpenssl, makeTestPki } from '../helpers/pki.ts';
import { useSimulator } from '../helpers/simulator.ts';
import { makeTx, ndjsonOf, range } from '../helpers/transactions.ts';
import {
  deliveryCounts,
  FAST,
  idsWith,
  readLedgerBack,
  report,
  STACK,
  settles,
  summary,
  workdir,
  writeNdjson,
} from './helpers.ts';

const sim = useSimulator({ seed: 55 }, 'reset');

/** A port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const s = createServer();
  s.listen(0, '127.0.0.1');
  await once(s, 'listening');
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

function expectOneLine(stderr: string, re: RegExp): void {
  const lines = stderr.trim().split('\n');
  expect(lines, stderr).toHaveLength(1);
  expect(lines[0]).toMatch(re);
  expect(stderr).not.toMatch(STACK);
}

describe('service unavailable', () => {
  it('connection refused: exit 5 before reading any input, one line naming the URL; a dry run is not affected', async () => {
    const w = await workdir('unavail');
    const port = await closedPort();
    const env = {
      SVC_BASE_URL: `http://127.0.0.1:${port}`,
      SVC_LEDGER_PATH: w.ledger,
      SVC_REJECTS_PATH: w.rejects,
    };
    const input = ndjsonOf(range(200).map((i) => makeTx(i, 'un')));
    const t0 = performance.now();
    const r = await runCliHere(['send', '--json', '--format', 'ndjson', '-'], { env, input });
    const wallMs = performance.now() - t0;
    expect(r.code, r.stderr).toBe(5);
    // --json: the one error object, nothing else.
    expect(JSON.parse(r.stdout)).toMatchObject({ error: { code: 'SEND_UNAVAILABLE' } });
    expect(r.stdout.trim().split('\n')).toHaveLength(1);
    expectOneLine(
      r.stderr,
      new RegExp(
        `^svc-ingest: SEND_UNAVAILABLE: service unavailable: HEAD http://127\\.0\\.0\\.1:${port}/v2/data/transactions: connection refused \\(ECONNREFUSED\\)$`,
      ),
    );
    expect(wallMs).toBeLessThan(5_000);
    expect((await readLedgerBack(w.ledger)).rows).toHaveLength(0);
    const dry = await runCliHere(['send', '--json', '--dry-run', '--format', 'ndjson', '-'], { env, input });
    expect(dry.code, dry.stderr).toBe(0);
    expect(summary(dry)).toMatchObject({ read: 200, batched: 200 });
    report('unavailable: connection refused at start', { exit: r.code, wallMs: Math.round(wallMs) });
  });

  it.skipIf(!hasOpenssl())('a certificate that does not verify: exit 5 naming TLS', async () => {
    const pki = makeTestPki();
    const tlsSim = await startSimulator({
      seed: 5,
      tls: { cert: pki.pem('server.pem'), key: pki.pem('server.key') },
    });
    try {
      const w = await workdir('unavail-tls');
      const file = join(w.dir, 'in.ndjson');
      await writeNdjson(file, 20, 'ut');
      // No tls.caFile: the test CA is not trusted.
      const r = await runCliHere(['send', '--json', file], { env: w.env(tlsSim) });
      expect(r.code, r.stderr).toBe(5);
      expectOneLine(
        r.stderr,
        /SEND_UNAVAILABLE: service unavailable: HEAD https:\/\/127\.0\.0\.1:\d+\/v2\/data\/transactions: TLS handshake or certificate verification failed \(\w+\)$/,
      );
      expect(tlsSim.stats().requests.preflight + tlsSim.stats().requests.total).toBe(0);
      // With the CA it answers, through the same transport.
      const ok = await runCliHere(['send', '--json', file], {
        env: w.env(tlsSim, { SVC_TLS_CA_FILE: pki.path('ca.pem') }),
      });
      expect(ok.code, ok.stderr).toBe(0);
      expect(tlsSim.stats().requests.preflight).toBe(1);
    } finally {
      await tlsSim.close();
    }
  });

  it('the connection check is one HEAD per run, counted apart from the transaction requests', async () => {
    const w = await workdir('preflight-count');
    const file = join(w.dir, 'in.ndjson');
    await writeNdjson(file, 120, 'pc');
    const r = await runCliHere(['send', ...FAST, file], { env: w.env(sim) });
    expect(r.code, r.stderr).toBe(0);
    const st = sim.stats();
    expect(st.requests.preflight).toBe(1);
    expect(st.requests.byPath['/v2/data/transactions']).toBe(3);
    expect(st.requests.total).toBe(3);
  });

  it('the service goes away mid-run (connection refused): nothing is split, exit 5 within --outage-max-ms, the rest is failed or unread, a rerun sends it', async () => {
    const w = await workdir('unavail-mid');
    // 1,999 valid records and one invalid (a reject): exit 5 still wins over 2.
    const txs = range(2_000).map((i) => makeTx(i, 'um'));
    const bad = { ...txs[10]!, paymentNetworkMCC: '58' };
    const file = join(w.dir, 'in.ndjson');
    await writeFile(file, ndjsonOf([...txs.slice(0, 10), bad, ...txs.slice(11)]));
    let posts = 0;
    let downAt = 0;
    const server = createServer((req, res) => {
      if (req.method !== 'POST') return void res.writeHead(405, { allow: 'POST' }).end();
      req.resume();
      req.on('end', () => {
        posts++;
        res.writeHead(200, { 'content-type': 'application/json' }).end(`{"requestId":"m-${posts}"}`);
        if (posts === 5) {
          // Down: the listening socket closes, so every new connection is refused.
          downAt = performance.now();
          server.close();
          setImmediate(() => server.closeAllConnections());
        }
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const OUTAGE_MAX_MS = 1_500;
    // Default retry timing (500 ms base, 5 retries): on its own it would retry for 15-31 s before giving up.
    const r = await runCliHere(
      ['send', '--json', '--concurrency', '1', '--outage-max-ms', String(OUTAGE_MAX_MS), file],
      { env: { SVC_BASE_URL: url, SVC_LEDGER_PATH: w.ledger, SVC_REJECTS_PATH: w.rejects } },
    );
    const afterDownMs = Math.round(performance.now() - downAt);
    expect(r.code, r.stderr).toBe(5);
    const s = summary(r);
    expect(s.outage).toBe(true);
    expect(s.splits).toBe(0);
    expect(s.sent).toBe(250);
    expect(s.rejected).toBe(1);
    expect(settles(s)).toBe(true);
    expect(r.stderr).toMatch(/"event":"run\.outage".*service unavailable: no batch got through for \d/);
    expect(r.stderr).toMatch(/ECONNREFUSED/);
    // Bounded by the limit (plus a second of start-up, scheduling and the last attempt on a loaded machine).
    expect(afterDownMs).toBeLessThan(OUTAGE_MAX_MS + 2_500);
    const { rows } = await readLedgerBack(w.ledger);
    // Whole batches only: nothing smaller than a batch was tried.
    for (const row of rows) expect(row.transactionIds.length === 50 || row.status === 'failed').toBe(true);
    expect(idsWith(rows, 'failed').size).toBe(s.failed);
    expect(rows.some((row) => row.error === 'not sent: service unavailable')).toBe(true);

    // Back up at the same address (the ledger's acknowledgements are that destination's): the rerun sends what was
    // not acknowledged, once.
    const back = await startSimulator({ seed: 55, port: Number(new URL(url).port) });
    try {
      const rerun = await runCliHere(['send', ...FAST, file], { env: w.env(back) });
      expect(rerun.code, rerun.stderr).toBe(2);
      expect(summary(rerun)).toMatchObject({ read: 2_000, skipped: 250, sent: 1_749, rejected: 1 });
      const d = deliveryCounts(back, idsWith(rows, 'failed'));
      expect(d.duplicated).toBe(0);
    } finally {
      await back.close();
    }
    report('unavailable: refused mid-run', {
      outageMaxMs: OUTAGE_MAX_MS,
      exitAfterDownMs: afterDownMs,
      splits: s.splits,
      read: s.read,
      sent: s.sent,
      failed: s.failed,
      exit: r.code,
    });
  });

  it('500s from the start with the default retry timing: --outage-max-ms bounds the give-up (exit 5)', async () => {
    const w = await workdir('unavail-500');
    const file = join(w.dir, 'in.ndjson');
    await writeNdjson(file, 20_000, 'u5');
    sim.setFaults({ failRate: 1 });
    const OUTAGE_MAX_MS = 2_000;
    const t0 = performance.now();
    const r = await runCliHere(['send', '--json', '--outage-max-ms', String(OUTAGE_MAX_MS), file], {
      env: w.env(sim),
    });
    const wallMs = Math.round(performance.now() - t0);
    expect(r.code, r.stderr).toBe(5);
    const s = summary(r);
    expect(s.outage).toBe(true);
    expect(s.sent).toBe(0);
    expect(settles(s)).toBe(true);
    expect(s.read).toBeLessThan(20_000);
    expect(wallMs).toBeLessThan(OUTAGE_MAX_MS + 3_000);
    report('unavailable: 500s, default retries', {
      outageMaxMs: OUTAGE_MAX_MS,
      wallMs,
      read: s.read,
      exit: r.code,
    });
  });
});
