// The lock's native addon (fs-native-extensions) in the single executable: its prebuilt .node file is an embedded
// asset (packaging/sea.ts), written to a private temporary folder (mode 0700, made for this process alone, so no
// other user can have put a file there), loaded with process.dlopen, and the folder removed at once (the loaded
// library stays mapped). ~1.5 ms of CPU and one 37 KB write, paid only by the commands that lock a ledger (docs/install.md).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import sea from 'node:sea';

/** What the lock needs of fs-native-extensions (its index.js's tryLock and unlock, over the binding). */
export interface NativeLocks {
  tryLock(fd: number, offset?: number, length?: number, opts?: { shared?: boolean }): boolean;
  unlock(fd: number, offset?: number, length?: number): void;
}

export interface LockBinding {
  tryLock(fd: number, offset: number, length: number, exclusive: boolean): void;
  unlock(fd: number, offset: number, length: number): void;
}

/** The embedded addon's asset name. */
export const LOCK_ADDON_ASSET = 'fs-native-extensions.node';

/** The addon could not be loaded from `folder` (the temporary folder tried): `reason` says why (noexec, …). */
export class LockAddonError extends Error {
  readonly folder: string;
  readonly reason: string;
  constructor(folder: string, reason: string) {
    super(`the lock's native addon could not be loaded from ${folder} (${reason})`);
    this.folder = folder;
    this.reason = reason;
  }
}

/** The first line of a load error, without the file's path (the folder is named apart). */
function reasonOf(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  const first = String(e?.message ?? err).split('\n')[0] ?? '';
  return first.replace(/\/\S*svc-ingest-addon-\S*/g, '…').trim() || (e?.code ?? 'error');
}

/**
 * fs-native-extensions loaded from the executable's asset, written below `parent` (the temporary folder: TMPDIR or
 * /tmp); throws a LockAddonError when it cannot be (a folder it cannot write, one mounted noexec, a platform it was
 * not built for): the caller then uses the socket lock, and says so once (lock.ts).
 */
export function embeddedLocks(
  parent = tmpdir(),
  bytes: () => Uint8Array = () => Buffer.from(sea.getRawAsset(LOCK_ADDON_ASSET) as ArrayBuffer),
): NativeLocks {
  const mod = { exports: {} as LockBinding };
  let dir = '';
  try {
    dir = mkdtempSync(path.join(parent, 'svc-ingest-addon-'));
    const file = path.join(dir, LOCK_ADDON_ASSET);
    writeFileSync(file, bytes(), { mode: 0o500 });
    process.dlopen(mod, file);
  } catch (err) {
    throw new LockAddonError(parent, reasonOf(err));
  } finally {
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
  return locksOver(mod.exports);
}

/** fs-native-extensions' tryLock and unlock (its index.js) over its binding, the prebuilt .node file's exports. */
export function locksOver(binding: LockBinding): NativeLocks {
  return {
    tryLock(fd, offset = 0, length = 0, opts = {}) {
      try {
        binding.tryLock(fd, offset, length, opts.shared !== true);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EAGAIN') return false;
        throw err;
      }
      return true;
    },
    unlock(fd, offset = 0, length = 0) {
      binding.unlock(fd, offset, length);
    },
  };
}
