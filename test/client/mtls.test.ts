// Mutual TLS: the client presents the configured certificate and trusts the configured CA (certs made by openssl).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SvcNetworkError } from '../../src/client/errors.ts';
import { createClient } from '../../src/client/index.ts';
import { type Simulator, startSimulator } from '../../src/simulator/index.ts';
import { makeTestPki, type TestPki } from '../helpers/pki.ts';
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
