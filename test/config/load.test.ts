// Configuration: precedence (default < file < env < flag), and errors that name the key, the source and the expectation.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, readSecret } from '../../src/config/index.ts';
import { SvcIngestError } from '../../src/errors.ts';

const dir = mkdtempSync(join(tmpdir(), 'svc-config-'));
function file(name: string, content: string): string {
  const p = join(dir, name);
  writeFileSync(p, content);
  return p;
}
function failure(fn: () => unknown): SvcIngestError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(SvcIngestError);
    return err as SvcIngestError;
  }
  throw new Error('expected an error');
}

describe('loadConfig', () => {
  it('gives the documented defaults', () => {
    const c = loadConfig({ env: {} });
    expect(c.baseUrl).toBe('http://127.0.0.1:8080');
    expect(c.timeoutMs).toBe(30000);
    expect(c.send).toEqual({
      concurrency: 4,
      batchSize: 50,
      maxRetries: 5,
      retryBaseMs: 500,
      retryMaxMs: 30000,
      splitRetries: 1,
      outageMaxMs: 120_000,
      healthCheckWindowMs: 60_000,
      ledgerPath: 'ledger/transactions.ndjson',
      rejectsPath: 'ledger/rejects.ndjson',
      resume: true,
      progressIntervalMs: 30000,
      maxRejects: 100_000,
      maxRejectBytes: 64 * 1024 * 1024,
      maxRejectPercent: 90,
      rejectSample: 1000,
    });
    expect(c.metrics).toEqual({});
    expect(c.prepare).toEqual({ workers: 'auto', chunkBytes: 524_288 });
    expect(c.session.provider).toBe('startSession');
    expect(c.auth).toEqual({ header: 'Authorization', scheme: 'Bearer' });
    expect(c.tls).toEqual({});
    expect(c.institutionId).toBeUndefined();
  });

  it('the worker pool and the split/outage settings are keys, their env names the older SVC_PREPARE_* ones', () => {
    const c = loadConfig({
      env: { SVC_PREPARE_WORKER: 'on', SVC_PREPARE_THREADS: '3', SVC_PREPARE_CHUNK_BYTES: '4096' },
      flags: {
        'send.splitRetries': { value: '0', flag: '--split-retries' },
        'send.outageMaxMs': { value: '10000', flag: '--outage-max-ms' },
      },
    });
    expect(c.prepare).toEqual({ workers: 'on', threads: 3, chunkBytes: 4096 });
    expect([c.send.splitRetries, c.send.outageMaxMs]).toEqual([0, 10_000]);
    expect(() => loadConfig({ env: { SVC_PREPARE_WORKER: 'sometimes' } })).toThrow(
      'config key prepare.workers (from env SVC_PREPARE_WORKER): expected one of auto, on, off, got "sometimes"',
    );
    expect(() =>
      loadConfig({ env: {}, flags: { 'send.splitRetries': { value: '-1', flag: '--split-retries' } } }),
    ).toThrow(
      'config key send.splitRetries (from flag --split-retries): expected an integer from 0 to 100, got "-1"',
    );
    expect(() => loadConfig({ env: { SVC_SEND_OUTAGE_MAX_MS: 'soon' } })).toThrow(
      /config key send\.outageMaxMs \(from env SVC_SEND_OUTAGE_MAX_MS\): expected an integer/,
    );
  });

  it('layers default < SVC_CONFIG file < --config file < env < flag', () => {
    const envFile = file(
      'env.json',
      JSON.stringify({ send: { concurrency: 5, batchSize: 10 }, timeoutMs: 1000 }),
    );
    const flagFile = file('flag.json', JSON.stringify({ send: { concurrency: 6 }, log: { level: 'debug' } }));
    const env = {
      SVC_CONFIG: envFile,
      SVC_SEND_BATCH_SIZE: '20',
      SVC_TIMEOUT_MS: '2000',
      SVC_SEND_CONCURRENCY: '7',
    };
    const c = loadConfig({
      env,
      file: flagFile,
      flags: { 'send.concurrency': { value: '8', flag: '--concurrency' } },
    });
    expect(c.send.concurrency).toBe(8);
    expect(c.send.batchSize).toBe(20);
    expect(c.timeoutMs).toBe(2000);
    expect(c.log.level).toBe('debug');
    expect(c.send.maxRetries).toBe(5);
    const noFlag = loadConfig({ env, file: flagFile });
    expect(noFlag.send.concurrency).toBe(7);
  });

  it('parses env booleans, lists and optional strings', () => {
    const c = loadConfig({
      env: {
        SVC_SEND_RESUME: 'false',
        SVC_SESSION_SCOPES: 'a, b,,c',
        SVC_INSTITUTION_ID: 'inst-9',
        SVC_BASE_URL: 'http://10.0.0.1:9000/',
        SVC_ALLOW_INSECURE_HTTP: 'yes',
      },
    });
    expect(c.send.resume).toBe(false);
    expect(c.session.scopes).toEqual(['a', 'b', 'c']);
    expect(c.institutionId).toBe('inst-9');
    expect(c.baseUrl).toBe('http://10.0.0.1:9000');
    expect(c.allowInsecureHttp).toBe(true);
  });

  it('names key, flag source and expectation', () => {
    const e = failure(() =>
      loadConfig({ env: {}, flags: { 'send.concurrency': { value: '0', flag: '--concurrency' } } }),
    );
    expect(e.code).toBe('CONFIG_INVALID');
    expect(e.message).toBe(
      'config key send.concurrency (from flag --concurrency): expected an integer from 1 to 256, got "0"',
    );
  });

  it('names the env variable', () => {
    const e = failure(() => loadConfig({ env: { SVC_SEND_BATCH_SIZE: '51' } }));
    expect(e.message).toContain(
      'send.batchSize (from env SVC_SEND_BATCH_SIZE): expected an integer from 1 to 50',
    );
    const e2 = failure(() => loadConfig({ env: { SVC_TIMEOUT_MS: 'soon' } }));
    expect(e2.message).toContain('timeoutMs (from env SVC_TIMEOUT_MS): expected an integer');
    const e3 = failure(() => loadConfig({ env: { SVC_LOG_LEVEL: 'loud' } }));
    expect(e3.message).toContain('log.level (from env SVC_LOG_LEVEL): expected one of trace, debug');
  });

  it('names the config file, and refuses unknown keys and wrong JSON types', () => {
    const bad = file('bad.json', JSON.stringify({ send: { batchSize: '50' } }));
    expect(failure(() => loadConfig({ env: {}, file: bad })).message).toBe(
      `config key send.batchSize (from file ${bad}): expected an integer from 1 to 50, got "50"`,
    );
    const typo = file('typo.json', JSON.stringify({ send: { concurency: 3 } }));
    expect(failure(() => loadConfig({ env: {}, file: typo })).message).toContain('send.concurency');
    const notJson = file('nj.json', '{');
    expect(failure(() => loadConfig({ env: {}, file: notJson })).message).toContain('not valid JSON');
    const e = failure(() => loadConfig({ env: {}, file: join(dir, 'missing.json') }));
    expect(e.code).toBe('CONFIG_FILE_UNREADABLE');
  });

  it('demands https for a non-loopback host unless allowInsecureHttp', () => {
    const e = failure(() => loadConfig({ env: { SVC_BASE_URL: 'http://svc.example.com' } }));
    expect(e.message).toContain(
      'baseUrl (from env SVC_BASE_URL): expected an https URL for a non-loopback host',
    );
    expect(loadConfig({ env: { SVC_BASE_URL: 'https://svc.example.com/api' } }).baseUrl).toBe(
      'https://svc.example.com/api',
    );
    expect(loadConfig({ env: { SVC_BASE_URL: 'http://localhost:1234' } }).baseUrl).toBe(
      'http://localhost:1234',
    );
    expect(loadConfig({ env: { SVC_BASE_URL: 'http://[::1]:1234' } }).baseUrl).toBe('http://[::1]:1234');
    const ok = loadConfig({
      env: { SVC_BASE_URL: 'http://svc.example.com' },
      flags: { allowInsecureHttp: { value: true, flag: '--insecure-http' } },
    });
    expect(ok.allowInsecureHttp).toBe(true);
    expect(failure(() => loadConfig({ env: { SVC_BASE_URL: 'not a url' } })).message).toContain(
      'absolute http(s) URL',
    );
    expect(failure(() => loadConfig({ env: { SVC_BASE_URL: 'ftp://x' } })).message).toContain(
      'http: or https:',
    );
  });

  it('checks TLS files are readable and come as a pair', () => {
    const cert = file('c.pem', 'x');
    expect(
      failure(() => loadConfig({ env: { SVC_TLS_CERT_FILE: join(dir, 'nope.pem') } })).message,
    ).toContain('tls.certFile (from env SVC_TLS_CERT_FILE): expected a readable file');
    expect(failure(() => loadConfig({ env: { SVC_TLS_CERT_FILE: cert } })).message).toContain('tls.keyFile');
    const c = loadConfig({ env: { SVC_TLS_CERT_FILE: cert, SVC_TLS_KEY_FILE: cert, SVC_TLS_CA_FILE: cert } });
    expect(c.tls).toEqual({ certFile: cert, keyFile: cert, caFile: cert });
  });

  it('checks the session provider has what it needs', () => {
    expect(failure(() => loadConfig({ env: { SVC_SESSION_PROVIDER: 'static' } })).message).toContain(
      'session.tokenEnv',
    );
    expect(failure(() => loadConfig({ env: { SVC_SESSION_PROVIDER: 'command' } })).message).toContain(
      'session.command',
    );
    expect(failure(() => loadConfig({ env: { SVC_SESSION_PROVIDER: 'magic' } })).message).toContain(
      'one of startSession, static, command',
    );
    const c = loadConfig({ env: { SVC_SESSION_PROVIDER: 'command', SVC_SESSION_COMMAND: 'echo t' } });
    expect(c.session.command).toBe('echo t');
  });

  it('refuses retryMaxMs below retryBaseMs', () => {
    const e = failure(() =>
      loadConfig({
        env: {},
        flags: {
          'send.retryBaseMs': { value: '5000', flag: '--retry-base-ms' },
          'send.retryMaxMs': { value: 100, flag: '--retry-max-ms' },
        },
      }),
    );
    expect(e.message).toContain('send.retryMaxMs (from flag --retry-max-ms)');
  });
});

describe('readSecret', () => {
  it('reads the token from the named env variable or file, and none when unset', () => {
    expect(readSecret(loadConfig({ env: {} }), {})).toBeUndefined();
    const c = loadConfig({ env: { SVC_AUTH_TOKEN_ENV: 'MY_TOKEN' } });
    expect(readSecret(c, { MY_TOKEN: ' s3cret \n' })).toBe('s3cret');
    expect(failure(() => readSecret(c, {})).message).toContain('names env MY_TOKEN, which is not set');
    const f = file('token', 'from-file\n');
    expect(readSecret(loadConfig({ env: { SVC_AUTH_TOKEN_FILE: f } }))).toBe('from-file');
  });

  it("reads systemd's credential $CREDENTIALS_DIRECTORY/token when neither is set; a token set explicitly comes first", () => {
    const creds = mkdtempSync(join(tmpdir(), 'svc-creds-'));
    writeFileSync(join(creds, 'token'), 'from-systemd\n');
    const env = { CREDENTIALS_DIRECTORY: creds, MY_TOKEN: 'from-env' };
    expect(readSecret(loadConfig({ env: {} }), env)).toBe('from-systemd');
    expect(readSecret(loadConfig({ env: { SVC_AUTH_TOKEN_ENV: 'MY_TOKEN' } }), env)).toBe('from-env');
    const f = file('token', 'from-file\n');
    expect(readSecret(loadConfig({ env: { SVC_AUTH_TOKEN_FILE: f } }), env)).toBe('from-file');
    // A credentials folder without a `token` (the unit loaded other credentials): no token, as with none set.
    const other = mkdtempSync(join(tmpdir(), 'svc-creds-'));
    expect(readSecret(loadConfig({ env: {} }), { CREDENTIALS_DIRECTORY: other })).toBeUndefined();
    // An empty one is refused with a line naming where it was looked for, never its value.
    writeFileSync(join(other, 'token'), '\n');
    const e = failure(() => readSecret(loadConfig({ env: {} }), { CREDENTIALS_DIRECTORY: other }));
    expect(e.message).toBe(
      `systemd's credential token (none of auth.tokenEnv, auth.tokenFile set): ${join(other, 'token')} is empty`,
    );
  });
});
