// Memory to keep the tests' files in: /dev/shm (a tmpfs on Linux) when it is there, writable, lets programs be run
// from it (not mounted noexec, as a container's may be) and has `needed` bytes free (Docker's default is 64 MB).
// Files there cost no journal and no disk: the run's temporary folder (run-tmp.ts) and the PostgreSQL servers' data
// folders (postgres.ts) go there when it is usable, else to the machine's temp folder. The tests keep nothing.
import { accessSync, constants, readFileSync, statfsSync, statSync } from 'node:fs';

const SHM = '/dev/shm';

/** Whether /proc/mounts lists /dev/shm with the noexec option (false where it cannot be read: not Linux). */
function mountedNoexec(): boolean {
  try {
    return readFileSync('/proc/mounts', 'utf8')
      .split('\n')
      .some((line) => {
        const [, at, , options = ''] = line.split(' ');
        return at === SHM && options.split(',').includes('noexec');
      });
  } catch {
    return false;
  }
}

/**
 * /dev/shm when it is usable for `needed` bytes, else undefined.
 * @example const parent = memoryFolder(2 * 1024 ** 3) ?? tmpdir()
 */
export function memoryFolder(needed: number): string | undefined {
  try {
    if (!statSync(SHM).isDirectory()) return undefined;
    accessSync(SHM, constants.W_OK | constants.X_OK);
    const fs = statfsSync(SHM);
    if (fs.bavail * fs.bsize < needed || mountedNoexec()) return undefined;
    return SHM;
  } catch {
    return undefined;
  }
}
