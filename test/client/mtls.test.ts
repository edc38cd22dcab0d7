// Mutual TLS: the client presents the configured certificate and trusts the configured CA (certs made by openssl).
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SvcNetworkError } from '../../src/client/errors.ts';
import { createClient } from '../../src/client/index.ts';
import { type Simulator, startSimulator } from '../../src/simulator/index.ts';
import { workdir, writeNdjson } from '../faults/helpers.ts';
import { runCliHere, summaryOf } from '../helpers/cli.ts';
import { makeTestPki, type TestPki } from '../helpers/pki.ts';
import { range } from '../helpers/transactions.ts';
import { configFor, makeTransactions } from './fixtures.ts';

let sim: Simulator;
let pki: TestPki;
beforeAll(async () => {
  pki = makeTestPki();
  const read = pki.pem;
  sim = await startSimulator({
    seed: 2,
    tls: { cert: read('server.pem'), key: read('server.key'), ca: read('ca.pem'), requestCert: true },
  });
});
afterAll(async () => {
  await sim?.close();
});

it('posts over https with a client certificate', async () => {
  expect(sim.url.startsWith('https://')).toBe(true);
  const client = createClient(
    configFor(sim.url, {
      'tls.certFile': { value: pki.path('client.pem'), flag: '--x' },
      'tls.keyFile': { value: pki.path('client.key'), flag: '--x' },
      'tls.caFile': { value: pki.path('ca.pem'), flag: '--x' },
    }),
  );
  try {
    const res = await client.postTransactions(makeTransactions(2), { requestId: 'tls-1' });
    expect(res).toEqual({ requestId: 'tls-1', httpStatus: 200 });
  } finally {
    await client.close();
  }
});

it('fails as a network error without the client certificate, or without the CA', async () => {
  const noCert = createClient(
    configFor(sim.url, { 'tls.caFile': { value: pki.path('ca.pem'), flag: '--x' } }),
  );
  const noCa = createClient(configFor(sim.url));
  try {
    for (const c of [noCert, noCa]) {
      const err = await c
        .postTransactions(makeTransactions(1), { requestId: 'tls-x' })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SvcNetworkError);
    }
    expect(sim.deliveries().size).toBe(2);
  } finally {
    await noCert.close();
    await noCa.close();
  }
});

it('send (the CLI) over mutual TLS with a passphrase-protected key: every batch delivered once, over capped connections', async () => {
  // The client key, encrypted with a passphrase the CLI reads from the env variable named by tls.passphraseEnv.
  const encrypted = pki.path('client-enc.key');
  execFileSync('openssl', [
    'pkey',
    '-in',
    pki.path('client.key'),
    '-aes256',
    '-passout',
    'pass:tls-pw-14',
    '-out',
    encrypted,
  ]);
  const w = await workdir('mtls-cli');
  const file = join(w.dir, 'in.ndjson');
  const ids = await writeNdjson(file, 600, 'mtls');
  const env = w.env(sim, {
    SVC_TLS_CERT_FILE: pki.path('client.pem'),
    SVC_TLS_KEY_FILE: encrypted,
    SVC_TLS_CA_FILE: pki.path('ca.pem'),
    SVC_TLS_PASSPHRASE_ENV: 'MTLS_KEY_PASS',
    MTLS_KEY_PASS: 'tls-pw-14',
  });
  sim.reset();
  const r = await runCliHere(['send', '--json', '--concurrency', '4', '--batch-size', '20', file], { env });
  expect(r.code, r.stderr).toBe(0);
  expect(summaryOf(r)).toMatchObject({ read: 600, sent: 600 });
  const delivered = sim.deliveries();
  expect(range(600).every((i) => delivered.get(ids[i] as string) === 1)).toBe(true);
  expect(sim.stats().maxInFlight).toBeLessThanOrEqual(4);

  // A wrong passphrase: the key cannot be used, so no connection: exit 5 with one line, nothing sent.
  const w2 = await workdir('mtls-cli-bad');
  sim.reset();
  const bad = await runCliHere(['send', '--json', file], {
    env: { ...env, SVC_LEDGER_PATH: w2.ledger, SVC_REJECTS_PATH: w2.rejects, MTLS_KEY_PASS: 'wrong' },
  });
  expect(bad.code).toBe(5);
  expect(bad.stderr.trim().split('\n')).toHaveLength(1);
  expect(bad.stderr).toMatch(
    /^svc-ingest: SEND_UNAVAILABLE: .*TLS handshake or certificate verification failed/,
  );
  expect(bad.stderr).not.toContain('tls-pw-14');
  expect(sim.deliveries().size).toBe(0);
});
