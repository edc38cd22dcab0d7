// The version and the commit a build was made from: `svc-ingest --version` prints `0.1.0 (3f2a9c1)`, with `-dirty`
// when the tree it was built from had changes. Where the commit comes from, first found wins:
// - the single executable: the bundler writes it in (SVC_INGEST_COMMIT, packaging/sea.ts);
// - the npm package: dist/build-info.json, written by `npm run build` (packaging/build-info.ts);
// - a clone: `git` at run time (only when asked: --version); without git, "commit unknown".
// A release bumps VERSION here and in package.json together (docs/install.md, "Releasing"); a test keeps them equal.
import { readFileSync } from 'node:fs';
import path from 'node:path';

/** The release this tree is. */
export const VERSION = '0.1.0';

declare const SVC_INGEST_COMMIT: string | undefined;

/**
 * The commit of the tree at `root` as `git` says it (7 hex digits, `-dirty` with tracked changes), or undefined
 * when `root` is not a git checkout or git is missing.
 * @example gitCommit('/src/svc-ingest') // '3f2a9c1-dirty'
 */
export function gitCommit(root: string): string | undefined {
  // child_process is loaded only here (a clone's --version), not on every start.
  const { execFileSync } = process.getBuiltinModule('node:child_process');
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', root, ...args], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  try {
    const head = git('rev-parse', '--short=7', 'HEAD');
    const dirty = git('status', '--porcelain', '--untracked-files=no') !== '';
    return dirty ? `${head}-dirty` : head;
  } catch {
    return undefined;
  }
}

/** The commit this build was made from (see the head of this file). */
export function buildCommit(): string {
  if (typeof SVC_INGEST_COMMIT === 'string') return SVC_INGEST_COMMIT;
  try {
    const info = JSON.parse(readFileSync(path.join(import.meta.dirname, 'build-info.json'), 'utf8')) as {
      commit?: unknown;
    };
    if (typeof info.commit === 'string') return info.commit;
  } catch {
    // Not a built package: a clone, where git knows.
  }
  return gitCommit(path.resolve(import.meta.dirname, '..')) ?? 'commit unknown';
}

/**
 * What `--version` prints.
 * @example versionLine() // '0.1.0 (3f2a9c1)'
 */
export function versionLine(): string {
  return `${VERSION} (${buildCommit()})`;
}
