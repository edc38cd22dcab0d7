// A throw-away certificate authority with a server (127.0.0.1) and a client certificate, made by openssl,
// for the mutual-TLS tests of the client and of the simulator. Keys are EC P-256: an RSA-2048 key costs openssl
// ~0.1–0.3 s of CPU to generate (three a PKI, a PKI a file), a P-256 key about a millisecond; TLS treats both alike.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Paths of the PEM files, and `pem(name)` to read one ('ca.pem', 'server.key', 'client.pem', …). */
export interface TestPki {
  dir: string;
  path(name: string): string;
  pem(name: string): string;
}

export function hasOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** A new EC P-256 key for `openssl req`. */
const P256 = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1'];

export function makeTestPki(): TestPki {
  const dir = mkdtempSync(join(tmpdir(), 'svc-pki-'));
  const path = (name: string) => join(dir, name);
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const days = ['-days', '2'];
  ssl(
    'req',
    '-x509',
    ...P256,
    '-nodes',
    '-keyout',
    path('ca.key'),
    '-subj',
    '/CN=test-ca',
    ...days,
    '-out',
    path('ca.pem'),
  );
  const issue = (name: string, subject: string, ext: string) => {
    ssl(
      'req',
      ...P256,
      '-nodes',
      '-keyout',
      path(`${name}.key`),
      '-subj',
      subject,
      '-out',
      path(`${name}.csr`),
    );
    writeFileSync(path(`${name}.ext`), ext);
    ssl(
      'x509',
      '-req',
      '-in',
      path(`${name}.csr`),
      '-CA',
      path('ca.pem'),
      '-CAkey',
      path('ca.key'),
      '-CAcreateserial',
      ...days,
      '-out',
      path(`${name}.pem`),
      '-extfile',
      path(`${name}.ext`),
    );
  };
  issue('server', '/CN=127.0.0.1', 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  issue('client', '/CN=partner', 'extendedKeyUsage=clientAuth\n');
  return { dir, path, pem: (name) => readFileSync(path(name), 'utf8') };
}
