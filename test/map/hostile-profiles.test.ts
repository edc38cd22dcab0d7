// Issue 23 item 6, tried as an attacker would: a `__proto__` column, paths into inherited properties, a profile
// nested 200,000 levels deep, and config / profile / token / password / PEM files that are devices, pipes or huge.
// Each gets a clear one-line error or works; none a stack trace or a hang.
import { execFileSync } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { readSmallFile } from '../../src/config/small-file.ts';
import { compileProfile } from '../../src/map/compile.ts';
import { compileGetter } from '../../src/map/path.ts';
import { fieldsBuilder, keyByKey } from '../../src/read/fields.ts';
import { runCliHere } from '../helpers/cli.ts';
import { CONST_RULES } from '../helpers/profiles.ts';

const STACK = /\n\s+at |Maximum call stack/;
let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-hostile-'));
});

async function profileFile(name: string, fields: Record<string, unknown>): Promise<string> {
  const p = join(dir, `${name}.json`);
  await writeFile(p, JSON.stringify({ fields: { ...CONST_RULES, ...fields } }));
  return p;
}

describe('a column named __proto__ works like any other', () => {
  it('the field builders keep it as an own property (both builders)', () => {
    for (const build of [fieldsBuilder(['id', '__proto__']), keyByKey(['id', '__proto__'])]) {
      const rec = build(['1', 'Tempe']);
      expect(Object.hasOwn(rec, '__proto__')).toBe(true);
      expect(compileGetter('__proto__')(rec)).toBe('Tempe');
    }
  });

  it('map reads it, a record without it is a reject naming the field, mapping check finds the column', async () => {
    const p = await profileFile('proto', { transactionId: 'ID', paymentNetworkMerchantCity: '__proto__' });
    const csv = join(dir, 'proto.csv');
    await writeFile(csv, 'ID,__proto__\n1,Tempe\n2,\n');
    const r = await runCliHere(['map', '--mapping', p, csv]);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout.trim()).paymentNetworkMerchantCity).toBe('Tempe');
    expect(r.stderr).toContain(`${csv}:3: paymentNetworkMerchantCity: required`);
    const check = await runCliHere(['mapping', 'check', p, csv]);
    expect(check.code, check.stderr).toBe(0);
  });
});

describe('paths read own properties only', () => {
  it('constructor, __proto__, toString of a record without them are missing, not functions', () => {
    expect(compileGetter('constructor')({})).toBeUndefined();
    expect(compileGetter('__proto__')({})).toBeUndefined();
    expect(compileGetter('a.toString')({ a: {} })).toBeUndefined();
    expect(compileGetter('events[0].constructor')({ events: [{}] })).toBeUndefined();
    expect(compileGetter('events[constructor=x].y')({ events: [{ y: 1 }] })).toBeUndefined();
    expect(compileGetter('a.constructor')({ a: { constructor: 'mine' } })).toBe('mine');
  });

  it('hash.of ["constructor"] on NDJSON: the part is missing, so the id is (a reject), never a hash of Object', () => {
    const p = compileProfile(
      { fields: { ...CONST_RULES, transactionId: { hash: { of: ['constructor', 'id'] } } } },
      't.json',
      't',
    );
    expect(p.mapValid({ id: 'x' }, false)).toEqual({
      ok: false,
      errors: [{ field: 'transactionId', message: 'required' }],
    });
    const r = p.mapValid(JSON.parse('{"id": "x", "constructor": "c"}'), false);
    expect(r.ok).toBe(true);
  });
});

describe('a profile nested 200,000 levels deep', () => {
  it('is refused at load with a clear error (mapping check, map, send)', async () => {
    const n = 200_000;
    const p = join(dir, 'deep.json');
    await writeFile(p, `{"fields":{"transactionId":${'['.repeat(n)}${']'.repeat(n)}}}`);
    for (const args of [
      ['mapping', 'check', p],
      ['map', '--mapping', p, 'samples/canonical.csv'],
      ['send', '--dry-run', '--mapping', p, 'samples/canonical.csv'],
    ]) {
      const r = await runCliHere(args);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr.trim()).toBe(
        'svc-ingest: MAPPING_INVALID: deep.json: the profile nests objects or arrays more than 32 levels deep (no rule needs more than a few)',
      );
      expect(r.stderr).not.toMatch(STACK);
    }
  });
});

describe('config, profile, token, password and PEM files: regular files under a cap', () => {
  it('readSmallFile refuses a device, a pipe, a directory and a file past its cap, and reads the rest', async () => {
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const big = join(dir, 'big');
    await writeFile(big, 'x'.repeat(2048));
    const fine = join(dir, 'fine');
    await writeFile(fine, 'token\n');
    const why = (path: string, max = 1024) => {
      try {
        return readSmallFile(path, max);
      } catch (err) {
        return (err as Error).message;
      }
    };
    expect(why('/dev/zero')).toBe('not a regular file (a device, a pipe or a socket)');
    expect(why(fifo)).toBe('not a regular file (a device, a pipe or a socket)');
    expect(why(dir)).toBe('is a directory');
    expect(why(big)).toBe('larger than 1 KiB (2048 bytes)');
    expect(why(join(dir, 'none'))).toBe('no such file');
    expect(why(fine)).toBe('token\n');
  });

  it('--config /dev/zero, a profile /dev/zero, a huge profile, a token file and a PEM /dev/zero: one clear line each, at once', async () => {
    const huge = join(dir, 'huge.json');
    await writeFile(huge, ' '.repeat(2 * 1024 * 1024));
    const cases: Array<[string[], NodeJS.ProcessEnv, string]> = [
      [
        ['send', '--dry-run', '--config', '/dev/zero', 'samples/canonical.csv'],
        {},
        'svc-ingest: CONFIG_FILE_UNREADABLE: cannot read config file /dev/zero: not a regular file (a device, a pipe or a socket)',
      ],
      [
        ['map', '--mapping', '/dev/zero', 'samples/canonical.csv'],
        {},
        'svc-ingest: MAPPING_UNREADABLE: mapping profile /dev/zero: not a regular file (a device, a pipe or a socket)',
      ],
      [
        ['mapping', 'check', huge],
        {},
        `svc-ingest: MAPPING_UNREADABLE: mapping profile ${huge}: larger than 1 MiB (2097152 bytes)`,
      ],
      [
        ['send', '--base-url', 'http://127.0.0.1:9', 'samples/canonical.csv'],
        { SVC_AUTH_TOKEN_FILE: '/dev/zero' },
        'svc-ingest: CONFIG_INVALID: config key auth.tokenFile: cannot read /dev/zero (not a regular file (a device, a pipe or a socket))',
      ],
      [
        ['simulate', '--tls-cert', '/dev/zero', '--tls-key', '/dev/zero'],
        {},
        'svc-ingest: USAGE_INVALID: --tls-cert: cannot read "/dev/zero" (not a regular file (a device, a pipe or a socket))',
      ],
    ];
    for (const [args, env, line] of cases) {
      const t = performance.now();
      const r = await runCliHere(args, { env });
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr.trim().split('\n').at(-1), args.join(' ')).toBe(line);
      expect(r.stderr).not.toMatch(STACK);
      expect(performance.now() - t).toBeLessThan(15_000);
    }
  });
});
