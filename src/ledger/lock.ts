// Ledger lock: one run per ledger. A lock file names its owner; a lock left by a dead process is taken over.
import { open, readFile, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { SvcIngestError } from '../errors.ts';

export interface LedgerLock {
  path: string;
  /** True when a stale lock of a dead process was taken over. */
  tookOver: { pid: number; startedAt?: string } | null;
  release(): Promise<void>;
}

interface LockOwner {
  pid: number;
  host: string;
  startedAt: string;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Take `${ledgerPath}.lock`, or fail with LEDGER_LOCKED naming the process that holds it. */
export async function acquireLedgerLock(ledgerPath: string): Promise<LedgerLock> {
  const path = `${ledgerPath}.lock`;
  const me: LockOwner = { pid: process.pid, host: hostname(), startedAt: new Date().toISOString() };
  let tookOver: LedgerLock['tookOver'] = null;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fh = await open(path, 'wx', 0o600);
      await fh.writeFile(`${JSON.stringify(me)}\n`);
      await fh.close();
      let released = false;
      return {
        path,
        tookOver,
        async release() {
          if (released) return;
          released = true;
          await unlink(path).catch(() => {});
        },
      };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'EEXIST') {
        throw new SvcIngestError('LEDGER_WRITE', `cannot create lock ${path}: ${(err as Error).message}`, {
          source: path,
        });
      }
    }
    let owner: Partial<LockOwner> = {};
    try {
      owner = JSON.parse(await readFile(path, 'utf8')) as Partial<LockOwner>;
    } catch {
      // An empty or torn lock file: its writer died between open and write.
    }
    const sameHost = owner.host === undefined || owner.host === me.host;
    if (typeof owner.pid === 'number' && sameHost && alive(owner.pid) && owner.pid !== process.pid) {
      throw new SvcIngestError(
        'LEDGER_LOCKED',
        `ledger ${ledgerPath} is in use by process ${owner.pid} (started ${owner.startedAt ?? 'at an unknown time'}); ` +
          `wait for it to finish, or remove ${path} if that process is gone`,
        { source: ledgerPath, pid: owner.pid },
      );
    }
    if (!sameHost) {
      throw new SvcIngestError(
        'LEDGER_LOCKED',
        `ledger ${ledgerPath} is locked by process ${owner.pid} on host ${owner.host}; remove ${path} if that run is over`,
        { source: ledgerPath, pid: owner.pid },
      );
    }
    tookOver = { pid: owner.pid ?? -1, startedAt: owner.startedAt };
    await unlink(path).catch(() => {});
  }
  throw new SvcIngestError('LEDGER_LOCKED', `could not take the lock ${path}`, { source: ledgerPath });
}
