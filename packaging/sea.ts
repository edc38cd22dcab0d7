// `make dist`: the single executable, .out/dist/svc-ingest-<version>-linux-<arch> — Node's single executable
// application (SEA) over one CommonJS bundle of the CLI (esbuild), with the files the CLI reads at run time as
// embedded assets: the built-in profiles, the pool worker's own bundle and the lock's addon.
// Usage: node packaging/sea.ts [--arch x64|arm64] [--node PATH] [--out DIR] [--no-code-cache]
// (arm64: --node names a linux-arm64 Node of the same version, packaging/node-arm64.sh fetches it from npm).
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';
import { LOCK_ADDON_ASSET } from '../src/ledger/file/embedded-addon.ts';
import { gitCommit, VERSION } from '../src/version.ts';
import { launcherHeapFlags } from './heap-flags.ts';
import { plainRequire } from './plain-require.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const { values } = parseArgs({
  options: {
    arch: { type: 'string', default: process.arch },
    node: { type: 'string' },
    out: { type: 'string', default: path.join(ROOT, '.out/dist') },
    'no-code-cache': { type: 'boolean', default: false },
  },
});
const arch = values.arch;
const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
if (pkg.version !== VERSION) throw new Error(`package.json says ${pkg.version}, src/version.ts ${VERSION}`);
const commit = gitCommit(ROOT) ?? 'commit unknown';
const work = path.join(values.out, `sea-${arch}`);
rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });

async function bundle(entry: string, outfile: string): Promise<void> {
  await build({
    entryPoints: [path.join(ROOT, entry)],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node24',
    minifySyntax: true,
    minifyWhitespace: true,
    keepNames: true,
    legalComments: 'none',
    logLevel: 'warning',
    plugins: [plainRequire],
    // Loaded from the embedded asset instead (src/ledger/file/embedded-addon.ts); pg's optional native and Cloudflare clients are
    // never used.
    external: ['fs-native-extensions', 'pg-native', 'pg-cloudflare', 'cloudflare:sockets'],
    define: {
      SVC_INGEST_COMMIT: JSON.stringify(commit),
      // Paths computed from the module's own place resolve beside the executable (shipped files come from assets).
      'import.meta.url': '__svcMetaUrl',
      'import.meta.dirname': '__svcMetaDirname',
    },
    banner: {
      js: "var __svcMetaUrl = require('node:url').pathToFileURL(process.execPath).href, __svcMetaDirname = require('node:path').dirname(process.execPath);",
    },
  });
}

await bundle('src/cli/main.ts', path.join(work, 'main.cjs'));
await bundle('src/prepare/pool-worker.ts', path.join(work, 'pool-worker.js'));

const assets: Record<string, string> = {
  'pool-worker.js': path.join(work, 'pool-worker.js'),
  [LOCK_ADDON_ASSET]: path.join(
    ROOT,
    `node_modules/fs-native-extensions/prebuilds/linux-${arch}/fs-native-extensions.node`,
  ),
};
for (const f of readdirSync(path.join(ROOT, 'config/mappings')).filter((f) => f.endsWith('.json'))) {
  assets[`config/mappings/${f}`] = path.join(ROOT, 'config/mappings', f);
}
// V8's code cache is made for the Node (and its architecture) that builds the blob: only for the build machine's own.
const codeCache = arch === process.arch && !values['no-code-cache'];
const blob = path.join(work, 'sea.blob');
writeFileSync(
  path.join(work, 'sea-config.json'),
  JSON.stringify({
    main: path.join(work, 'main.cjs'),
    output: blob,
    disableExperimentalSEAWarning: true,
    useCodeCache: codeCache,
    useSnapshot: false,
    // The launcher's heap flags (the executable has none of its own; the old generation's limit the CLI sets at run
    // time, src/runtime/heap-growth.ts): docs/install.md. SVC_INGEST_HEAP is the launcher's alone: the executable runs these.
    execArgv: launcherHeapFlags(ROOT),
    assets,
  }),
);
execFileSync(process.execPath, ['--experimental-sea-config', path.join(work, 'sea-config.json')], {
  stdio: 'inherit',
});

const exe = path.join(values.out, `svc-ingest-${VERSION}-linux-${arch}`);
copyFileSync(values.node ?? process.execPath, exe);
chmodSync(exe, 0o755);
// Stripped as Debian's dh_strip does (the symbol table and the comment; the dynamic symbols an addon links against
// stay): 3 MB less, and lintian's unstripped-binary error gone. Before the blob goes in: a strip after would drop it.
// Another architecture's binary needs that architecture's strip (binutils-aarch64-linux-gnu); without it, unstripped.
const strip = arch === process.arch ? 'strip' : 'aarch64-linux-gnu-strip';
try {
  execFileSync(strip, ['--remove-section=.comment', '--strip-unneeded', exe], { stdio: 'ignore' });
} catch (err) {
  if (arch === process.arch) throw err;
  process.stderr.write(`sea: no ${strip}: the ${arch} executable keeps its symbols\n`);
}
execFileSync(
  process.execPath,
  [
    path.join(ROOT, 'node_modules/postject/dist/cli.js'),
    exe,
    'NODE_SEA_BLOB',
    blob,
    '--sentinel-fuse',
    'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2',
  ],
  // postject's ELF library warns about Node's many notes ("Can't find string offset"): said only on a failure.
  { stdio: ['ignore', 'ignore', 'pipe'] },
);
const mib = (f: string) => `${(statSync(f).size / 2 ** 20).toFixed(1)} MiB`;
process.stdout.write(`${exe} (${mib(exe)}; bundle ${mib(path.join(work, 'main.cjs'))}; ${commit})\n`);
