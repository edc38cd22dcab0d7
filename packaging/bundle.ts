// `npm run build` (and so `npm pack`): the JavaScript the npm package runs, bundled by esbuild from src/ into dist/cli/:
// - main.cjs, the bin entry alone (`--version` is answered there: src/cli/main.ts);
// - app.cjs, the rest of the CLI in one CommonJS file. Each command's modules stay behind the `import()` that loads
//   them (esbuild runs a module's body on its first import), so a start runs one command's code, as from the sources,
//   and the dependencies are `require`d where the code first needs them (docs/performance.md, "Start-up");
// - pool-worker.js, the prepare pool's worker (an ES module, found beside the pool's code).
// The dependencies a common command loads go into app.cjs too (BUNDLED: those published only as ES modules, which a
// CommonJS file would otherwise load with require(esm), and pino, csv-parse and the code lists, which a send loads:
// from the bundle they cost no module resolution and their functions come with the command's code cache). The rest
// stay in node_modules and are `require`d where first needed: pg (the PostgreSQL ledger), undici (only where Node's
// own is not of the same major version: src/client/transport.ts), pino-pretty (a terminal), the lock's addon.
// The commit `--version` prints is written in (SVC_INGEST_COMMIT, src/version.ts); a path the code computes from its
// own place is computed from dist/cli/, as from src/<folder>/.
// Usage: node packaging/bundle.ts [OUT_DIR]   (default dist)
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { type BuildOptions, build, type Plugin } from 'esbuild';
import { gitCommit } from '../src/version.ts';
import { plainRequire } from './plain-require.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const out = path.resolve(process.argv[2] ?? path.join(ROOT, 'dist'));
const BUNDLED = [
  ...['commander', 'ky', 'p-limit', 'p-retry'],
  ...['pino', 'csv-parse', 'currency-codes', 'i18n-iso-countries', 'countries-and-timezones'],
];
const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
};
const external = [
  ...Object.keys(pkg.dependencies).filter((d) => !BUNDLED.includes(d)),
  // pg's optional native and Cloudflare clients are never used.
  'pg-native',
  'pg-cloudflare',
  'cloudflare:sockets',
];

/**
 * main.ts's `import()`s of the rest of the CLI load app.cjs (one file, one instance of each module) through
 * packaging/app-loader.ts, with V8's code cache of an earlier run of the same command.
 */
const appImports: Plugin = {
  name: 'app-imports',
  setup(b) {
    b.onResolve({ filter: /^(\.\.\/io|\.\/run|\.\.\/log)\.ts$/ }, (args) =>
      args.importer.endsWith(`${path.sep}cli${path.sep}main.ts`)
        ? { path: path.join(ROOT, 'packaging/app-loader.ts') }
        : undefined,
    );
  },
};

const common: BuildOptions = {
  bundle: true,
  platform: 'node',
  target: 'node22',
  keepNames: true,
  legalComments: 'none',
  logLevel: 'warning',
  define: { SVC_INGEST_COMMIT: JSON.stringify(gitCommit(ROOT) ?? 'commit unknown') },
};
const commonJs: BuildOptions = {
  ...common,
  format: 'cjs',
  external,
  plugins: [appImports, plainRequire],
  define: { ...common.define, 'import.meta.url': '__svcMetaUrl', 'import.meta.dirname': '__dirname' },
  banner: { js: "'use strict';\nvar __svcMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
};

rmSync(out, { recursive: true, force: true });
await Promise.all([
  build({ ...commonJs, entryPoints: [path.join(ROOT, 'src/cli/main.ts')], outfile: path.join(out, 'cli/main.cjs') }),
  build({
    ...commonJs,
    stdin: {
      contents:
        "export { processIo } from './src/io.ts';\nexport { stderrLine } from './src/log.ts';\nexport { main } from './src/cli/run.ts';\n",
      resolveDir: ROOT,
      sourcefile: 'app.ts',
      loader: 'ts',
    },
    outfile: path.join(out, 'cli/app.cjs'),
  }),
  build({
    ...common,
    format: 'esm',
    packages: 'external',
    entryPoints: [path.join(ROOT, 'src/prepare/pool-worker.ts')],
    outfile: path.join(out, 'cli/pool-worker.js'),
  }),
]);
// app.cjs in ASCII alone: esbuild leaves the few other characters of regular expressions and comments (•, €, °) as
// they are, and one of them makes V8 hold the whole 1.4 MB source as a two-byte string, read and scanned at each start.
// A \u escape means the same in a string, a regular expression or a comment.
const appFile = path.join(out, 'cli/app.cjs');
writeFileSync(
  appFile,
  readFileSync(appFile, 'utf8').replace(
    /[\u0080-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  ),
);
