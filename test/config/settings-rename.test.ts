// A key renamed in the settings table (src/config/schema.ts) fails to compile where the key is consumed: each
// consumer takes its slice of the Config type (a Pick of a group), not options of the same names by coincidence.
// On a copy of src/ with three keys renamed in the table, `tsc --noEmit` reports an error at each consumer.
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.ts';

/** The key renamed in the table, its new name, and the files that consume it (where the errors must be). */
const RENAMES = [
  ['send.maxRejectPercent', 'send.maxRejectPct', ['src/record/rejecter.ts']],
  ['send.outageMaxMs', 'send.outageLimitMs', ['src/send/dispatcher.ts', 'src/send/breaker.ts']],
  ['webhook.maxConnections', 'webhook.maxConns', ['src/tickets/webhook.ts']],
] as const;

const dir = mkdtempSync(join(tmpdir(), 'settings-rename-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function tsc(): Promise<string> {
  try {
    await promisify(execFile)(join(ROOT, 'node_modules/.bin/tsc'), ['--noEmit', '-p', dir], { cwd: dir });
    return '';
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    return `${e.stdout ?? ''}${e.stderr ?? ''}`;
  }
}

describe('a key renamed in the settings table', () => {
  it('fails to compile at its consumer', { timeout: 60_000 }, async () => {
    cpSync(join(ROOT, 'src'), join(dir, 'src'), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
    cpSync(join(ROOT, 'package.json'), join(dir, 'package.json'));
    const config = JSON.parse(readFileSync(join(ROOT, 'tsconfig.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ ...config, include: ['src/**/*.ts'] }));
    const tablePath = join(dir, 'src/config/schema.ts');
    let table = readFileSync(tablePath, 'utf8');
    for (const [from, to] of RENAMES) {
      expect(table, from).toContain(`path: '${from}',`);
      table = table.replace(`path: '${from}',`, `path: '${to}',`);
    }
    writeFileSync(tablePath, table);
    const out = await tsc();
    // At the consumer's slice: the Pick names a key the group no longer has (TS2344).
    for (const [from, , consumers] of RENAMES)
      for (const consumer of consumers)
        expect(out, `${from}:\n${out}`).toMatch(new RegExp(`^${consumer}\\(\\d+,\\d+\\): error TS2344`, 'm'));
    // Nowhere but there and in the CLI that hands the configuration over.
    const files = new Set([...out.matchAll(/^(src\/[^(]+)\(\d+,\d+\): error/gm)].map((m) => m[1]));
    const allowed = new Set<string>(RENAMES.flatMap(([, , consumers]) => consumers));
    expect([...files].filter((f) => !allowed.has(f as string) && !f?.startsWith('src/cli/'))).toEqual([]);
  });
});
