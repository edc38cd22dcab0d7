// The lock's embedded addon where the temporary folder is mounted noexec (a hardened host's /tmp): the load fails
// with an error naming the folder it tried and why, which the ledger logs once (ledger.lock.fallback: the run of
// the executable itself is in test/dist/executable.test.ts). Run in a mount namespace of its own (`unshare -m`) with
// a noexec tmpfs, the addon being npm's prebuilt file for this platform, the bytes the executable embeds.
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.ts';
import { isolationUnavailable } from '../helpers/isolate.ts';

const why = isolationUnavailable();
const ADDON = join(
  ROOT,
  `node_modules/fs-native-extensions/prebuilds/${process.platform}-${process.arch}/fs-native-extensions.node`,
);

/** embeddedLocks(folder, the prebuilt addon) in a child whose `folder` is a fresh tmpfs mounted with `options`. */
function loadIn(folder: string, options: string): { code: number | null; out: string } {
  const script = `
    import { openSync, readFileSync } from 'node:fs';
    import { embeddedLocks, LockAddonError } from ${JSON.stringify(join(ROOT, 'src/ledger/file/embedded-addon.ts'))};
    try {
      const locks = embeddedLocks(${JSON.stringify(folder)}, () => readFileSync(${JSON.stringify(ADDON)}));
      console.log(JSON.stringify({ loaded: true, locked: locks.tryLock(openSync(${JSON.stringify(join(ROOT, 'package.json'))}, 'r'), 0, 0, { shared: true }) }));
    } catch (err) {
      console.log(JSON.stringify({ loaded: false, error: err instanceof LockAddonError, folder: err.folder, reason: err.reason, message: err.message }));
    }`;
  const node = join(ROOT, 'node_modules/.bin/node');
  const r = spawnSync(
    'unshare',
    [
      '-m',
      'sh',
      '-c',
      `mount --make-rprivate / && mount -t tmpfs -o ${options},mode=0755 tmpfs "$1" && exec "$2" --input-type=module -e "$3"`,
      'sh',
      folder,
      node,
      script,
    ],
    { encoding: 'utf8' },
  );
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

describe.skipIf(why !== null)('the lock addon in a temporary folder mounted noexec', () => {
  let folder = '';
  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'svc-noexec-'));
  });
  afterAll(async () => {
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  it('noexec: the load fails with the folder it tried and why; an exec folder loads and locks', () => {
    const refused = loadIn(folder, 'noexec');
    expect(refused.code, refused.out).toBe(0);
    const r = JSON.parse(refused.out);
    expect(r).toMatchObject({ loaded: false, error: true, folder });
    expect(r.reason).toMatch(/failed to map segment|operation not permitted/i);
    expect(r.message).toBe(`the lock's native addon could not be loaded from ${folder} (${r.reason})`);
    // The reason names no file of the private folder (it is gone): the folder is given apart.
    expect(r.reason).not.toContain('svc-ingest-addon-');

    const loaded = loadIn(folder, 'exec');
    expect(loaded.code, loaded.out).toBe(0);
    expect(JSON.parse(loaded.out)).toEqual({ loaded: true, locked: true });
  });
});

if (why !== null) describe.skip(`the lock addon under noexec: skipped, ${why}`, () => {});
