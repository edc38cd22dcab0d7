// Logging: NDJSON on stderr of a real child process, with secrets and card numbers redacted and nothing lost at exit.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

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
  // The one masking rule of src/mask.ts: first 6 and last 4 digits kept.
  expect(lines[1].msg).toBe('card 411111******1111 seen');
  expect(res.stderr).not.toMatch(/\d{15,19}/);
  expect(res.stderr).not.toContain('abc');
});

it('pretty prints when asked, still on stderr', () => {
  const script = `
    const { createLogger } = await import(${JSON.stringify(logModule)});
    createLogger({ pretty: true }).warn({ token: 'zzz' }, 'pretty one');`;
  const res = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  expect(res.stdout).toBe('');
  expect(res.stderr).toContain('pretty one');
  expect(res.stderr).toContain('WARN');
  expect(res.stderr).not.toContain('zzz');
});
