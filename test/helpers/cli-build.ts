// vitest's globalSetup: the CLI that the tests start as a child process, built from the sources as the npm package
// installs it (the files package.json lists: the launcher, dist/ bundled by packaging/bundle.ts, config/, deploy/),
// in node_modules/.cache/svc-ingest-test-cli, its node_modules the clone's own. A start of the built CLI costs ~0.22
// s of CPU against ~0.36 s for the sources, whose ~180 modules Node resolves and loads one by one (a 60-row send,
// medians of 12 alternated runs, docs/testing.md); the suite starts ~250 of them. The tests whose subject is the
// clone's own start (the launcher in a clone, the modules a start loads) run the sources (CLONE_BIN in cli.ts), as
// do the tests run in-process. SVC_TEST_CLI=clone runs every child on the sources instead (no build).
// Built again at each run (~0.3 s of CPU), and put in place only when it differs from the one there: an unchanged
// build keeps its files, so the compile cache's entries for them stay valid.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  cpSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import { join, relative } from 'node:path';
import { BUILT_CLI, ROOT } from './cli.ts';

/** A digest of every file under `dir` (its path and bytes; links not followed): equal builds have equal digests. */
function digest(dir: string): string {
  const h = createHash('sha256');
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const p = join(d, e.name);
      h.update(relative(dir, p));
      if (e.isDirectory()) walk(p);
      else if (e.isSymbolicLink()) h.update(readlinkSync(p));
      else if (e.isFile()) h.update(readFileSync(p)).update(String(statSync(p).mode));
    }
  };
  walk(dir);
  return h.digest('hex');
}

function tryDigest(dir: string): string | null {
  try {
    return digest(dir);
  } catch {
    return null;
  }
}

export default function setup(): void {
  if (process.env.SVC_TEST_CLI === 'clone') return;
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { files: string[] };
  const next = `${BUILT_CLI}.${process.pid}`;
  rmSync(next, { recursive: true, force: true });
  mkdirSync(next, { recursive: true });
  const node = (...args: string[]) =>
    execFileSync(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  node('packaging/bundle.ts', join(next, 'dist'));
  node('packaging/build-info.ts', join(next, 'dist/build-info.json'));
  for (const f of pkg.files.filter((f) => !f.startsWith('dist')))
    cpSync(join(ROOT, f), join(next, f), { recursive: true });
  cpSync(join(ROOT, 'package.json'), join(next, 'package.json'));
  // Relative: the same node_modules wherever the clone is seen (a mount namespace shows it elsewhere, isolate.ts).
  symlinkSync(relative(BUILT_CLI, join(ROOT, 'node_modules')), join(next, 'node_modules'));
  if (tryDigest(next) === tryDigest(BUILT_CLI)) {
    rmSync(next, { recursive: true, force: true });
    return;
  }
  const old = `${BUILT_CLI}.old.${process.pid}`;
  try {
    renameSync(BUILT_CLI, old);
  } catch {}
  renameSync(next, BUILT_CLI);
  rmSync(old, { recursive: true, force: true });
}
