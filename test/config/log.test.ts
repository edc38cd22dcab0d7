// Logging: NDJSON on stderr of a real child process, with secrets and card numbers redacted and nothing lost at exit.
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { ROOT, runCliHere } from '../helpers/cli.ts';

const logModule = fileURLToPath(new URL('../../src/log.ts', import.meta.url));

it('writes redacted NDJSON to stderr, synchronously, even with process.exit right after', () => {
  const script = `
    const { createLogger } = await import(${JSON.stringify(logModule)});
    const log = createLogger({ level: 'debug', pretty: false });
    log.info({ headers: { authorization: 'Bearer abc', 'x-svc-session-token': 'jwt' }, sessionToken: 'jwt2',
      record: { pan: '4111111111111111', cardNumber: '5500005555555559', last4: '1111' }, passphrase: 'pw' }, 'first');
    log.debug('card 4111111111111111 seen');
    for (let i = 0; i < 200; i++) log.info({ i }, 'many');
    process.exit(0);`;
  const res = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  expect(res.stdout).toBe('');
  const lines = res.stderr
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  expect(lines).toHaveLength(202);
  const first = lines[0];
  expect(first.msg).toBe('first');
  expect(first.headers).toEqual({ authorization: '[redacted]', 'x-svc-session-token': '[redacted]' });
  expect(first.sessionToken).toBe('[redacted]');
  expect(first.passphrase).toBe('[redacted]');
  expect(first.record).toEqual({ pan: '[redacted]', cardNumber: '[redacted]', last4: '1111' });
  // The one masking rule of src/mask/index.ts: first 6 and last 4 digits kept.
  expect(lines[1].msg).toBe('card 411111******1111 seen');
  expect(res.stderr).not.toMatch(/\d{15,19}/);
  expect(res.stderr).not.toContain('abc');
});

it('pretty prints when asked, still on stderr', () => {
  const script = `
    const { createLogger } = await import(${JSON.stringify(logModule)});
    createLogger({ level: 'info', pretty: true }).warn({ token: 'zzz' }, 'pretty one');`;
  const res = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  expect(res.stdout).toBe('');
  expect(res.stderr).toContain('pretty one');
  expect(res.stderr).toContain('WARN');
  expect(res.stderr).not.toContain('zzz');
});

it('censors a header name as a credential only in a headers object or as a field of its own, not as data', () => {
  const script = `
    const { createLogger } = await import(${JSON.stringify(logModule)});
    const log = createLogger({ level: 'info', pretty: false });
    log.info({ authorization: 'Bearer top', request: { headers: { Authorization: 'Bearer deep', Cookie: 'c=1' } },
      codes: { transactionType: { AUTHORIZATION: 3, COOKIE: 1 } } }, 'mixed');`;
  const res = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  const line = JSON.parse(res.stderr.trim());
  expect(line.authorization).toBe('[redacted]');
  expect(line.request.headers).toEqual({ Authorization: '[redacted]', Cookie: '[redacted]' });
  expect(line.codes).toEqual({ transactionType: { AUTHORIZATION: 3, COOKIE: 1 } });
  expect(res.stderr).not.toContain('Bearer');
});

it('a real run: run.end counts the code AUTHORIZATION instead of censoring it', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-log-codes-'));
  const rows = (await readFile(join(ROOT, 'samples/canonical.csv'), 'utf8')).split('\n').slice(0, 3);
  const csv = rows.map((r, i) => (i === 0 ? r : r.replace(',AUTHORIZED,', ',AUTHORIZATION,'))).join('\n');
  await writeFile(join(dir, 'a.csv'), `${csv}\n`);
  const r = await runCliHere(['send', '--dry-run', join(dir, 'a.csv')], {
    env: { SVC_LOG_FORMAT: 'json', SVC_LOG_LEVEL: 'info' },
  });
  expect(r.code).toBe(0);
  const end = (r.rawStderr ?? '')
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { event?: string; codes?: Record<string, Record<string, unknown>> })
    .find((l) => l.event === 'run.end');
  expect(end?.codes?.transactionType).toEqual({ AUTHORIZATION: 2 });
  expect(r.rawStderr).not.toContain('[redacted]');
});
