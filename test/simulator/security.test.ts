// requireToken (bearer auth on every endpoint but startSession and /__sim/*) and https with mutual TLS.
import { rmSync } from 'node:fs';
import { request } from 'node:https';
import { describe, expect, it } from 'vitest';
import { startSimulator } from '../../src/simulator/index.ts';
import { hasOpenssl, makeTestPki } from '../helpers/pki.ts';
import { call, makeTx, postTx } from './helpers.ts';

describe('requireToken', () => {
  it('401 without the bearer token, 200 with it; startSession and /__sim are exempt', async () => {
    const sim = await startSimulator({ requireToken: 's3cret' });
    try {
      const none = await postTx(sim.url, [makeTx(1)]);
      expect(none.status).toBe(401);
      expect(none.body).toMatchObject({ status: 401, type: 'Unauthorized' });
      expect((await postTx(sim.url, [makeTx(1)], { Authorization: 'Bearer wrong' })).status).toBe(401);
      expect((await postTx(sim.url, [makeTx(1)], { Authorization: 'Bearer s3cret' })).status).toBe(200);
      expect((await call(`${sim.url}/csaapi/v2/tickets/x`)).status).toBe(401);
      const s = await call(`${sim.url}/v2/session/startSession`, {
        body: { sourceCustomerId: 'cust-0001', scopes: [], organizationId: 'o' },
      });
      expect(s.status).toBe(200);
      expect((await call(`${sim.url}/__sim/stats`)).status).toBe(200);
      expect(sim.deliveries().size).toBe(1);
    } finally {
      await sim.close();
    }
  });
});

describe.skipIf(!hasOpenssl())('mutual TLS', () => {
  it('serves https and demands a client certificate signed by the CA', async () => {
    const pki = makeTestPki();
    const pem = pki.pem;
    try {
      const sim = await startSimulator({
        tls: { cert: pem('server.pem'), key: pem('server.key'), ca: pem('ca.pem'), requestCert: true },
      });
      expect(sim.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      const post = (withCert: boolean) =>
        new Promise<number>((ok, fail) => {
          const req = request(
            `${sim.url}/v2/data/transactions`,
            {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              ca: pem('ca.pem'),
              ...(withCert ? { cert: pem('client.pem'), key: pem('client.key') } : {}),
            },
            (res) => {
              res.resume();
              res.on('end', () => ok(res.statusCode ?? 0));
            },
          );
          req.on('error', fail);
          req.end(JSON.stringify({ transactions: [makeTx(1)] }));
        });
      try {
        expect(await post(true)).toBe(200);
        await expect(post(false)).rejects.toThrow();
        expect(sim.deliveries().size).toBe(1);
      } finally {
        await sim.close();
      }
    } finally {
      rmSync(pki.dir, { recursive: true, force: true });
    }
  }, 20_000);
});
