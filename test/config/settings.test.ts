// The settings table (src/config/schema.ts) against what is derived from it and what documents it: the defaults
// (config/default.json equal to them), every env name (the documented ones, literally), every flag on the commands
// its group names, with the table's default (or its env name) in its help; the Config type; docs/configuration.md's
// table has each key, env name, default and flag, docs/contract.md's send table each flag of send and its default;
// a flag given reaches its key.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { flagNameOf, settingFlags, shownDefault } from '../../src/cli/settings.ts';
import {
  CONFIG_KEYS,
  type Config,
  type ConfigFlags,
  defaultConfig,
  defaultValue,
  loadConfig,
  SETTING_GROUPS,
  type SettingPath,
} from '../../src/config/index.ts';
import { ROOT, runCliHere } from '../helpers/cli.ts';

const withFlags = CONFIG_KEYS.filter((k) => k.flag !== undefined) as Array<
  (typeof CONFIG_KEYS)[number] & { flag: NonNullable<(typeof CONFIG_KEYS)[number]['flag']> }
>;

describe('the settings table', () => {
  it('declares the defaults: config/default.json (the file the packages install as an example) is equal to them', () => {
    const file = JSON.parse(readFileSync(join(ROOT, 'config/default.json'), 'utf8')) as unknown;
    // On a difference: the table is right; write its defaults into config/default.json.
    expect(file).toEqual(defaultConfig());
    for (const k of CONFIG_KEYS) expect(k.optional === true || k.default !== undefined, k.path).toBe(true);
    expect(defaultValue('send.maxRejectPercent')).toBe(90);
  });

  it('env names: SVC_ and the key in upper snake case, but for the three older names', () => {
    const odd = CONFIG_KEYS.filter(
      (k) =>
        k.env !==
        `SVC_${k.path
          .replace(/([A-Z])/g, '_$1')
          .replace(/\./g, '_')
          .toUpperCase()}`,
    );
    expect(odd.map((k) => [k.path, k.env])).toEqual([
      ['send.ledgerPath', 'SVC_LEDGER_PATH'],
      ['send.rejectsPath', 'SVC_REJECTS_PATH'],
      ['prepare.workers', 'SVC_PREPARE_WORKER'],
    ]);
    // Literal names scripts and units set (docs/configuration.md, deploy/): derived, they must not move.
    const envs = new Set(CONFIG_KEYS.map((k) => k.env));
    for (const name of [
      'SVC_BASE_URL',
      'SVC_SEND_MAX_RETRIES',
      'SVC_SEND_HEALTH_CHECK_WINDOW_MS',
      'SVC_SEND_MAX_REJECT_PERCENT',
      'SVC_LEDGER_URL',
      'SVC_LOG_LEVEL',
      'SVC_METRICS_LABELS',
    ])
      expect(envs.has(name), name).toBe(true);
    expect(envs.size).toBe(CONFIG_KEYS.length);
  });

  it('each flag: its name, its default in the help, on every command of its group', async () => {
    expect(withFlags.map(flagNameOf)).toEqual([
      '--base-url',
      '--insecure-http',
      '--timeout',
      '--concurrency',
      '--batch-size',
      '--max-retries',
      '--retry-base-ms',
      '--retry-max-ms',
      '--rejects',
      '--no-resume',
      '--split-retries',
      '--outage-max-ms',
      '--health-check-window-ms',
      '--progress-interval',
      '--metrics-file',
      '--metrics-port',
      '--metrics-label',
      '--max-rejects',
      '--max-reject-bytes',
      '--max-reject-percent',
      '--reject-sample',
      '--ledger-url',
      '--log-level',
    ]);
    expect(shownDefault(withFlags.find((k) => k.path === 'send.maxRetries')!)).toBe('5');
    expect(shownDefault(withFlags.find((k) => k.path === 'send.progressIntervalMs')!)).toBe('30');
    for (const command of new Set(Object.values(SETTING_GROUPS).flat())) {
      const help = await runCliHere([...command.split(' '), '--help'], { env: { COLUMNS: '1000' } });
      // Each option on one line: its wrapped lines (indented past the flags' column) joined to it.
      const text = help.stdout.replace(/\n {4,}/g, ' ');
      for (const k of withFlags) {
        if (!(SETTING_GROUPS[k.flag.group] as readonly string[]).includes(command)) continue;
        const shown = shownDefault(k);
        const arg = k.flag.arg ? ` ${k.flag.arg}` : '';
        const line = text.match(new RegExp(`^ +${flagNameOf(k)}${arg} +(.*)$`, 'm'))?.[1];
        expect(line, `${command} ${flagNameOf(k)}`).toBeDefined();
        if (k.flag.show === 'env') expect(line, `${command} ${flagNameOf(k)}`).toContain(`(env ${k.env})`);
        else if (shown !== undefined) {
          expect(line, `${command} ${flagNameOf(k)}`).toContain(`(default ${shown})`);
          const v = defaultValue(k.path);
          if (typeof v === 'number')
            expect(Number(shown.split(' ')[0]) * (k.flag.scale ?? 1), k.path).toBe(v);
          else expect(shown, k.path).toBe(String(v));
        }
      }
    }
  });

  it('a flag given reaches its key, in the flag’s unit', () => {
    const flags = settingFlags(
      { maxRetries: '7', healthCheckWindowMs: '0', maxRejectPercent: '12', progressInterval: '1.5' },
      'dispatch',
      'rejectCaps',
      'progress',
    );
    const config = loadConfig({ env: {}, flags });
    expect(config.send).toMatchObject({
      maxRetries: 7,
      healthCheckWindowMs: 0,
      maxRejectPercent: 12,
      progressIntervalMs: 1500,
    });
    expect(flags['send.maxRetries']).toEqual({ value: '7', flag: '--max-retries' });
    // A switch counts when given only: commander gives --no-resume's key true when it is not.
    expect(settingFlags({ resume: true, baseUrl: 'http://127.0.0.1:1' }, 'resume', 'connection')).toEqual({
      baseUrl: { value: 'http://127.0.0.1:1', flag: '--base-url' },
    });
    const given = settingFlags(
      { resume: false, insecureHttp: true, logLevel: 'warn' },
      'resume',
      'connection',
      'logging',
    );
    expect(loadConfig({ env: {}, flags: given })).toMatchObject({
      allowInsecureHttp: true,
      send: { resume: false },
      log: { level: 'warn' },
    });
  });

  it('the Config type is the table’s: each key typed by its kind, optional where the table says', () => {
    expectTypeOf<Config['send']['maxRetries']>().toEqualTypeOf<number>();
    expectTypeOf<Config['send']['resume']>().toEqualTypeOf<boolean>();
    expectTypeOf<Config['baseUrl']>().toEqualTypeOf<string>();
    expectTypeOf<Config['session']['scopes']>().toEqualTypeOf<string[]>();
    expectTypeOf<Config['prepare']['workers']>().toEqualTypeOf<'auto' | 'on' | 'off'>();
    expectTypeOf<Config['log']['level']>().toEqualTypeOf<
      'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent'
    >();
    expectTypeOf<Config['metrics']>().toEqualTypeOf<{ file?: string; port?: number; labels?: string[] }>();
    expectTypeOf<keyof Config>().toEqualTypeOf<
      | 'baseUrl'
      | 'allowInsecureHttp'
      | 'timeoutMs'
      | 'userAgent'
      | 'institutionId'
      | 'auth'
      | 'tls'
      | 'session'
      | 'send'
      | 'metrics'
      | 'webhook'
      | 'ledger'
      | 'prepare'
      | 'log'
    >();
    // A flag's key is one of the table's paths: a misspelt one does not compile.
    expectTypeOf<keyof ConfigFlags>().toEqualTypeOf<SettingPath>();
    // @ts-expect-error: not a key of the table
    const misspelt: ConfigFlags = { 'send.maxRetry': { value: '1', flag: '--max-retries' } };
    expect(misspelt).toBeDefined();
    // At run time: every key the table does not call optional has a value in the loaded configuration.
    const config = loadConfig({ env: {} }) as unknown as Record<string, Record<string, unknown>>;
    for (const k of CONFIG_KEYS.filter((k) => !k.optional)) {
      const [head, tail] = k.path.split('.') as [string, string | undefined];
      expect(tail === undefined ? config[head] : config[head]?.[tail], k.path).toBeDefined();
    }
  });

  it('docs/configuration.md: each key and env name, and each flag’s default as the table says it', () => {
    const doc = readFileSync(join(ROOT, 'docs/configuration.md'), 'utf8');
    const rows = doc.split('\n').filter((l) => l.startsWith('| `'));
    for (const k of CONFIG_KEYS) {
      const row = rows.find((r) => r.split('|')[1]!.includes(`\`${k.path}\``));
      expect(row, k.path).toBeDefined();
      expect(row!.split('|')[2], k.path).toContain(`\`${k.env}\``);
      const v = defaultValue(k.path);
      if (typeof v === 'number') expect(row!.split('|')[3], k.path).toContain(String(v));
      else if (typeof v === 'string' || typeof v === 'boolean')
        expect(row!.split('|')[3], k.path).toContain(`\`${v}\``);
      if (k.flag) expect(row, k.path).toContain(`\`${flagNameOf(k as (typeof withFlags)[number])}`);
    }
  });

  it('docs/contract.md: each flag of send that is a setting has its row there, with the table’s default', () => {
    const doc = readFileSync(join(ROOT, 'docs/contract.md'), 'utf8');
    const rows = doc.split('\n').filter((l) => l.startsWith('| `--'));
    // The connection and logging flags are named in the contract's prose, as every command's (test/cli/help.test.ts).
    const common: readonly string[] = ['connection', 'logging'];
    for (const k of withFlags) {
      const groups = SETTING_GROUPS[k.flag.group] as readonly string[];
      if (!groups.includes('send') || common.includes(k.flag.group)) continue;
      const flag = flagNameOf(k);
      const row = rows.find((r) => r.split('|')[1]!.includes(`\`${flag}`));
      expect(row, flag).toBeDefined();
      const shown = shownDefault(k);
      if (shown !== undefined)
        expect(row!.split('|').slice(2).join('|'), flag).toContain(shown.split(' = ').pop());
    }
  });

  it('a setting used in one place is named on at most five lines of src/', () => {
    for (const [name, key, env] of [
      ['max-retries', 'maxRetries', 'MAX_RETRIES'],
      ['health-check-window-ms', 'healthCheckWindowMs', 'HEALTH_CHECK_WINDOW_MS'],
      ['max-reject-percent', 'maxRejectPercent', 'MAX_REJECT_PERCENT'],
    ] as const) {
      const out = execFileSync('grep', ['-rn', '-e', name, '-e', key, '-e', env, 'src', '--include=*.ts'], {
        cwd: ROOT,
        encoding: 'utf8',
      });
      const lines = out.split('\n').filter((l) => l !== '' && !l.startsWith('src/simulator/'));
      expect(lines.length, `${name}:\n${out}`).toBeLessThanOrEqual(5);
    }
  });
});
