// Mutual TLS: the client presents the configured certificate and trusts the configured CA (certs made by openssl).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SvcNetworkError } from '../../src/client/errors.ts';
import { createClient } from '../../src/client/index.ts';
import { type Simulator, startSimulator } from '../../src/simulator/index.ts';
import { configFor, makeTransactions } from './fixtures.ts';

const dir = mkdtempSync(join(tmpdir(), 'svc-mtls-'));
const p = (name: string) => join(dir, name);
const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });

function issue(name: string, subject: string, ext: string): void {
  ssl(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    p(`${name}.key`),
    '-subj',
    subject,
    '-out',
    p(`${name}.csr`),
  );
  writeFileSync(p(`${name}.ext`), ext);
  ssl(
    'x509',
    '-req',
    '-in',
    p(`${name}.csr`),
    '-CA',
    p('ca.pem'),
    '-CAkey',
    p('ca.key'),
    '-CAcreateserial',
    '-days',
    '2',
    '-out',
    p(`${name}.pem`),
    '-extfile',
    p(`${name}.ext`),
  );
}

let sim: Simulator;
beforeAll(async () => {
  ssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    p('ca.key'),
    '-subj',
    '/CN=test-ca',
    '-days',
    '2',
    '-out',
    p('ca.pem'),
  );
  issue('server', '/CN=127.0.0.1', 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  issue('client', '/CN=partner', 'extendedKeyUsage=clientAuth\n');
  const read = (n: string) => readFileSync(p(n), 'utf8');
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
      'tls.certFile': { value: p('client.pem'), flag: '--x' },
      'tls.keyFile': { value: p('client.key'), flag: '--x' },
      'tls.caFile': { value: p('ca.pem'), flag: '--x' },
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
  const noCert = createClient(configFor(sim.url, { 'tls.caFile': { value: p('ca.pem'), flag: '--x' } }));
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
