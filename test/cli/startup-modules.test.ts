// What a start loads: `--version` prints and exits without the logger (pino and its transport machinery, ~29
// modules) or the ledger lock's native addon; a command that logs loads pino when it first writes to stderr.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';

/** A preload that lists, at exit, the CommonJS packages loaded that the test asks about. */
async function preload(): Promise<string> {
  const file = join(await mkdtemp(join(tmpdir(), 'svc-startup-')), 'loaded.cjs');
  await writeFile(
    file,
    `process.on('exit', () => {
  const loaded = Object.keys(require.cache);
  const seen = ['/node_modules/pino/', '/node_modules/thread-stream/', '/node_modules/fs-native-extensions/']
    .filter((p) => loaded.some((k) => k.includes(p)));
  process.stderr.write('LOADED ' + JSON.stringify(seen) + '\\n');
});\n`,
  );
  return file;
}

const loadedOf = (stderr: string | undefined): string[] =>
  JSON.parse(/LOADED (\[.*\])/.exec(stderr ?? '')?.[1] ?? 'null') as string[];

describe('start-up loads only what the command uses', () => {
  it('--version loads neither the logger nor the lock addon; a command that writes a log line loads pino', async () => {
    const env = { NODE_OPTIONS: `--require ${await preload()}` };
    const version = await runCli(['--version'], { env });
    expect(version.code).toBe(0);
    expect(version.stdout).toMatch(/^\d+\.\d+\.\d+ /);
    expect(loadedOf(version.rawStderr)).toEqual([]);
    const bad = await runCli(['send', '--no-such-flag'], { env });
    expect(bad.code).toBe(1);
    expect(loadedOf(bad.rawStderr)).toContain('/node_modules/pino/');
    expect(loadedOf(bad.rawStderr)).not.toContain('/node_modules/fs-native-extensions/');
  });
});
