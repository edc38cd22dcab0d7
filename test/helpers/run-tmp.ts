// vitest's globalSetup, first of them: one temporary folder for the whole run, named to the test workers and every
// process they start through TMPDIR (Node's os.tmpdir(), mkdtemp in the tests, the CLI's own temporary files), and
// removed when the run ends. The tests make ~330 folders a run; they no longer pile up in the machine's temp folder
// (a developer's /tmp held 21,000 of them, 27 GB). The machine's temp folder stays named in SVC_TEST_TMP_ROOT, for
// what is meant to outlast a run (the copy of PostgreSQL's binaries, postgres-binaries.ts). A run stopped hard (kill
// -9 of vitest) leaves its folder, one instead of hundreds. Traversable by others (0755): the PostgreSQL server and
// the shipped units' tests run as other users. The folder is made in memory (/dev/shm, memory-folder.ts) when that
// is usable with 2 GiB free, else in the machine's temp folder: the tests' ledgers, rejects and fdatasyncs then
// cost no disk journal (~2 % of the suite's CPU, most of it the kernel's). The cache folder (XDG_CACHE_HOME) of
// the processes the run starts is the clone's node_modules/.cache: an installed launcher started by a shell with the
// test's environment keeps its compile cache there (svc-ingest-compile), not in the user's ~/.cache.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './cli.ts';
import { memoryFolder } from './memory-folder.ts';

export default function setup(): () => void {
  const root = process.env.SVC_TEST_TMP_ROOT ?? tmpdir();
  const dir = mkdtempSync(join(memoryFolder(2 * 1024 ** 3) ?? root, 'svc-test-run-'));
  chmodSync(dir, 0o755);
  const before = {
    TMPDIR: process.env.TMPDIR,
    SVC_TEST_TMP_ROOT: process.env.SVC_TEST_TMP_ROOT,
    XDG_CACHE_HOME: process.env.XDG_CACHE_HOME,
  };
  process.env.SVC_TEST_TMP_ROOT = root;
  process.env.TMPDIR = dir;
  process.env.XDG_CACHE_HOME = join(ROOT, 'node_modules/.cache');
  return () => {
    for (const [k, v] of Object.entries(before)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    rmSync(dir, { recursive: true, force: true });
  };
}
