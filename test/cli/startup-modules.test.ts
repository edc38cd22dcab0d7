// What a start loads: `--version` prints and exits from the bin entry alone (src/cli/main.ts and src/version.ts: no
// commander, no logger, no masking rules); a command that writes a log line loads pino (with its transport
// machinery, ~29 modules) when it first writes to stderr, and the ledger lock's native addon only when it locks.
// The clone's start, on the sources (CLONE_BIN): the built CLI holds our modules and most packages in one file.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLONE_BIN, runCli } from '../helpers/cli.ts';
import { useSimulator } from '../helpers/simulator.ts';
import { csvOf, makeTx, range } from '../helpers/transactions.ts';

/** A preload that lists, at exit, every module file loaded (ES modules and CommonJS alike, through Node's hooks). */
async function preload(): Promise<string> {
  const file = join(await mkdtemp(join(tmpdir(), 'svc-startup-')), 'loaded.cjs');
  await writeFile(
    file,
    `const loaded = [];
require('node:module').registerHooks({
  load(url, context, next) {
    if (url.startsWith('file:')) loaded.push(url);
    return next(url, context);
  },
});
process.on('exit', () => process.stderr.write('LOADED ' + JSON.stringify(loaded) + '\\n'));\n`,
  );
  return file;
}

const loadedOf = (stderr: string | undefined): string[] =>
  JSON.parse(/LOADED (\[.*\])/.exec(stderr ?? '')?.[1] ?? 'null') as string[];
const packages = (loaded: string[]) =>
  [
    ...new Set(loaded.map((u) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(u)?.[1]).filter(Boolean)),
  ].sort();
const ours = (loaded: string[]) =>
  loaded.filter((u) => !u.includes('/node_modules/')).map((u) => u.replace(/^.*\/src\//, ''));

const sim = useSimulator({ seed: 33 });

describe('start-up loads only what the command uses', () => {
  it('--version loads two modules of ours and no package; a command that writes a log line loads pino, not the lock addon', async () => {
    const env = { NODE_OPTIONS: `--require ${await preload()}` };
    const version = await runCli(['--version'], { env, bin: CLONE_BIN });
    expect(version.code).toBe(0);
    expect(version.stdout).toMatch(/^\d+\.\d+\.\d+ /);
    const atVersion = loadedOf(version.rawStderr);
    expect(ours(atVersion)).toEqual(['cli/main.ts', 'version.ts']);
    expect(packages(atVersion)).toEqual([]);
    const bad = await runCli(['send', '--no-such-flag'], { env, bin: CLONE_BIN });
    expect(bad.code).toBe(1);
    const atBad = packages(loadedOf(bad.rawStderr));
    expect(atBad).toContain('pino');
    expect(atBad).toContain('commander');
    expect(atBad).not.toContain('fs-native-extensions');
    // Neither the HTTP stack nor PostgreSQL's client for a command line that is refused.
    for (const p of ['ky', 'undici', 'pg', 'csv-parse']) expect(atBad).not.toContain(p);
  });

  it("a send talks through Node's own undici (its Agent), not the npm package's too", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-startup-send-'));
    const csv = join(dir, 'export.csv');
    await writeFile(csv, csvOf(range(50).map((i) => makeTx(i, 'su'))));
    const r = await runCli(
      ['send', '--ledger', join(dir, 'ledger'), '--rejects', join(dir, 'rejects'), csv],
      {
        env: { NODE_OPTIONS: `--require ${await preload()}`, SVC_BASE_URL: sim.url },
        bin: CLONE_BIN,
      },
    );
    expect(r.code, r.rawStderr).toBe(0);
    expect(sim.stats().transactions.distinct).toBe(50);
    const atSend = packages(loadedOf(r.rawStderr));
    expect(atSend).toContain('csv-parse');
    expect(atSend).not.toContain('undici');
  });
});
