// The settings table (src/config/schema.ts) against what is derived from it and what documents it: every env
// name (the documented ones, literally), every flag on the commands its group names, with the default of
// config/default.json in its help; docs/configuration.md's table has each key, env name and default; a flag
// given reaches its key.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { flagNameOf, settingFlags, shownDefault } from '../../src/cli/settings.ts';
import { CONFIG_KEYS, defaultValue, loadConfig, SETTING_GROUPS } from '../../src/config/index.ts';
import { ROOT, runCliHere } from '../helpers/cli.ts';

const withFlags = CONFIG_KEYS.filter((k) => k.flag !== undefined) as Array<
  (typeof CONFIG_KEYS)[number] & { flag: NonNullable<(typeof CONFIG_KEYS)[number]['flag']> }
>;

describe('the settings table', () => {
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
      '--concurrency',
      '--batch-size',
      '--max-retries',
      '--retry-base-ms',
      '--retry-max-ms',
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
        const line = text.match(new RegExp(`^ +${flagNameOf(k)} ${k.flag.arg} +(.*)$`, 'm'))?.[1];
        expect(line, `${command} ${flagNameOf(k)}`).toBeDefined();
        if (shown !== undefined) {
          expect(line, `${command} ${flagNameOf(k)}`).toContain(`(default ${shown})`);
          const v = defaultValue(k.path) as number;
          expect(Number(shown.split(' ')[0]) * (k.flag.scale ?? 1), k.path).toBe(v);
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
  });

  it('docs/configuration.md: each key and env name, and each flag’s default as the table says it', () => {
    const doc = readFileSync(join(ROOT, 'docs/configuration.md'), 'utf8');
    const rows = doc.split('\n').filter((l) => l.startsWith('| `'));
    for (const k of CONFIG_KEYS) {
      const row = rows.find((r) => r.split('|')[1]!.includes(`\`${k.path}\``));
      expect(row, k.path).toBeDefined();
      expect(row!.split('|')[2], k.path).toContain(`\`${k.env}\``);
      const v = defaultValue(k.path);
      if (k.flag && typeof v === 'number') expect(row!.split('|')[3], k.path).toContain(String(v));
    }
  });

  it('a setting used in one place is named on at most five lines of src/', () => {
    const { execFileSync } = require('node:child_process') as typeof import('node:child_process');
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
