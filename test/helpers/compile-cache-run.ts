// vitest's globalSetup, after run-tmp.ts: the test workers' compile cache (compile-cache.ts) is kept in the run's
// folder in memory while the run lasts, and its lasting entries saved to node_modules/.cache/svc-ingest-vitest-compile
// when it ends. In the run, the workers write their entries after every file (so that a fresh clone's workers share
// what one has compiled): on the disk, a slow journal commit held all four in those writes at once. And vitest imports
// each test file, and the setup files before it, under a URL of its own every run (`…?vitest=<time>`): Node caches
// those (~1,300 entries a run) and no run reads them again, so they are not saved (and are removed from the folder
// on the disk, where earlier runs left them).
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './cli.ts';

/** Where the test workers' compile cache lasts between runs (one folder per Node version and V8 flags inside). */
export const WORKER_COMPILE_CACHE = join(ROOT, 'node_modules/.cache/svc-ingest-vitest-compile');
/** The environment variable naming the folder the workers use during a run. */
export const RUN_CACHE_ENV = 'SVC_TEST_COMPILE_CACHE';

const ONE_RUN = Buffer.from('?vitest=');

/** Each entry file of a compile cache: [version folder, file name]. */
function entries(dir: string): Array<[string, string]> {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .flatMap((d) => readdirSync(join(dir, d.name)).map((name): [string, string] => [d.name, name]));
}

/** Whether an entry is one no later run reads (its module's URL carries vitest's per-run query). */
const oneRun = (file: string): boolean => readFileSync(file).includes(ONE_RUN);

/** Copies one entry of a compile cache from the folder `from` to `to`. */
function copy(from: string, to: string, version: string, name: string): void {
  mkdirSync(join(to, version), { recursive: true });
  cpSync(join(from, version, name), join(to, version, name));
}

/**
 * Saves the entries of the run's cache written since `since` (ms) that a later run can read.
 * @example saveLasting(runDir, WORKER_COMPILE_CACHE, start) // ~1,100 entries on a fresh clone, ~0 on the next run
 */
export function saveLasting(from: string, to: string, since: number): void {
  for (const [version, name] of entries(from)) {
    const file = join(from, version, name);
    if (statSync(file).mtimeMs >= since && !oneRun(file)) copy(from, to, version, name);
  }
}

/** Copies the entries of `from` (the folder on the disk) into `to` (the run's); removes from `from` those no run reads. */
export function seed(from: string, to: string): void {
  for (const [version, name] of entries(from)) {
    const file = join(from, version, name);
    if (oneRun(file)) rmSync(file, { force: true });
    else copy(from, to, version, name);
  }
}

export default function setup(): () => void {
  const tmp = process.env.TMPDIR;
  if (!tmp) return () => {};
  const run = join(tmp, 'vitest-compile');
  seed(WORKER_COMPILE_CACHE, run);
  const start = Date.now();
  process.env[RUN_CACHE_ENV] = run;
  return () => {
    delete process.env[RUN_CACHE_ENV];
    saveLasting(run, WORKER_COMPILE_CACHE, start);
  };
}
