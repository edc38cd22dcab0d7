// The npm package's entry (dist/cli/main.cjs, packaging/bundle.ts) loads the rest of the CLI, dist/cli/app.cjs,
// through this module: compiled with V8's code cache of an earlier run of the same command, made after that run
// (vm.Script's createCachedData), so it holds the functions the command ran. Node's compile cache keeps only what is
// compiled at load, and V8 compiles most functions on their first call: a 50-row send costs ~12 % less CPU this way
// (docs/performance.md, "Start-up").
// The cache files go in svc-ingest-app/ under Node's compile-cache folder (NODE_COMPILE_CACHE, which the launcher
// sets); without that variable app.cjs is required as it is. One file per command and build of app.cjs (V8's version
// and the file's inode, size and time name it: V8 itself checks only the source's length). Written once, at exit,
// when there was none or V8 refused it, into a temporary file renamed into place (runs side by side are safe), and
// then the files of other builds go; a folder that cannot be written costs the cache, never the run.
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import vm from 'node:vm';
import { parserBudgetBack } from '../src/runtime/parser-tier.ts';
import { startFlagsBack } from '../src/runtime/heap-growth.ts';

declare const __dirname: string;

type AppExports = Record<string, unknown>;

/** The cache file for this command and this build of `file`, or undefined without a compile-cache folder. */
function cacheFileFor(file: string): string | undefined {
  const dir = process.env.NODE_COMPILE_CACHE;
  if (!dir) return undefined;
  const st = statSync(file);
  const command = /^-*([a-z][a-z-]{0,30})$/.exec(process.argv[2] ?? '')?.[1] ?? 'other';
  const build = `${process.versions.v8}-${st.ino}-${st.size}-${Math.trunc(st.mtimeMs)}`;
  return path.join(dir, 'svc-ingest-app', `${build}-${command}.bin`);
}

/** Writes the code cache (into place by a rename), and removes the files of other builds (an upgrade's leftovers). */
function save(cacheFile: string, script: vm.Script): void {
  try {
    const dir = path.dirname(cacheFile);
    mkdirSync(dir, { recursive: true });
    const tmp = `${cacheFile}.${process.pid}.tmp`;
    // V8 stamps the cache with its flags as they are now: as Node started, as the next start reads it.
    startFlagsBack();
    parserBudgetBack();
    writeFileSync(tmp, script.createCachedData());
    renameSync(tmp, cacheFile);
    const build = path.basename(cacheFile).replace(/-[a-z-]+\.bin$/, '-');
    for (const f of readdirSync(dir))
      if (f.endsWith('.bin') && !f.startsWith(build)) rmSync(path.join(dir, f), { force: true });
  } catch {
    // An unwritable folder: the next run compiles as this one did.
  }
}

function loadApp(): AppExports {
  const file = path.join(__dirname, 'app.cjs');
  const appRequire = createRequire(file);
  let cacheFile: string | undefined;
  let cached: Buffer | undefined;
  try {
    cacheFile = cacheFileFor(file);
    if (cacheFile) cached = readFileSync(cacheFile);
  } catch {
    // No cache yet (or an unreadable one): made at exit.
  }
  if (!cacheFile) return appRequire(file) as AppExports;
  // The wrapper CommonJS gives a module, on the source's first line: stack traces keep app.cjs's line numbers.
  const script = new vm.Script(
    `(function (exports, require, module, __filename, __dirname) {${readFileSync(file, 'utf8')}\n})`,
    {
      filename: file,
      cachedData: cached,
      importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
    },
  );
  const mod = { exports: {} as AppExports };
  (script.runInThisContext() as (...args: unknown[]) => void)(
    mod.exports,
    appRequire,
    mod,
    file,
    path.dirname(file),
  );
  const target = cacheFile;
  if (!cached || script.cachedDataRejected) process.once('exit', () => save(target, script));
  return mod.exports;
}

const app = loadApp();
export const { processIo, main, stderrLine } = app;
