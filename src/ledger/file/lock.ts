// Ledger lock: one run per ledger file. A kernel lock on the open ledger itself, so it follows the file (its
// device and inode) whatever path reached it, and the kernel frees it when the process dies, even by kill -9.
// An owner file beside the ledger (<ledger>.lock) only names the holder for the message; it locks nothing.

import { unlink } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createServer, type Server } from 'node:net';
import { hostname } from 'node:os';
import { IN_EXECUTABLE } from '../../config/builtin.ts';
import { SvcIngestError } from '../../errors.ts';
import { sleep } from '../../sleep.ts';
import {
  embeddedLocks,
  LockAddonError,
  type LockBinding,
  locksOver,
  type NativeLocks,
} from './embedded-addon.ts';
import { checkStateFile, openStateFile, type StateFile } from './files.ts';

/**
 * How the lock is held:
 * - `native`: an exclusive lock on the ledger's open file (fs-native-extensions: fcntl F_OFD_SETLK on Linux,
 *   flock on macOS, LockFileEx on Windows), prebuilt for the common platforms;
 * - `socket`: where that binary does not load, on Linux, a listening Unix socket in the abstract namespace
 *   named after the ledger's device and inode (a second bind fails while the holder lives).
 */
export type LockMethod = 'native' | 'socket';

export interface LedgerLock {
  /** The ledger, open for appending (mode 0600, a regular file), held for the life of the lock. */
  file: StateFile;
  /** The owner file's path (<ledger>.lock). */
  ownerPath: string;
  method: LockMethod;
  /** Set when an owner file of an earlier run was left behind (that run died holding the ledger). */
  tookOver: { pid: number; startedAt?: string } | null;
  /** Remove the owner file, drop the lock and close the ledger. */
  release(): Promise<void>;
}

interface LockOwner {
  pid: number;
  host: string;
  startedAt: string;
  ledger: string;
  dev: number;
  ino: number;
}

let nativeLocks: NativeLocks | null | undefined;

/** Why this process holds ledgers with the socket lock although it carries the addon: the folder it tried, why. */
export interface LockFallback {
  folder: string;
  reason: string;
}

let fallback: LockFallback | null = null;
let fallbackTold = false;

/**
 * The embedded addon's load failure, the first time it is asked for in this process (then null): the caller logs
 * it once, whatever number of ledgers the process locks.
 */
export function takeLockFallback(): LockFallback | null {
  if (fallbackTold) return null;
  fallbackTold = true;
  return fallback;
}

/**
 * fs-native-extensions, loaded once (in the single executable from its embedded copy, embedded-addon.ts); null where
 * its prebuilt binary does not load on this platform.
 */
function loadNativeLocks(): NativeLocks | null {
  if (nativeLocks === undefined) {
    try {
      nativeLocks = IN_EXECUTABLE ? embeddedLocks() : packageLocks();
    } catch (err) {
      nativeLocks = null;
      if (err instanceof LockAddonError) fallback = { folder: err.folder, reason: err.reason };
    }
  }
  return nativeLocks;
}

/**
 * From node_modules: this platform's prebuilt binary itself when there is one (fs-native-extensions' own loader,
 * require-addon, finds the same file through ~13 modules: ~5 ms of a start), else the package as it loads itself.
 */
function packageLocks(): NativeLocks {
  try {
    return locksOver(
      createRequire(import.meta.url)(
        `fs-native-extensions/prebuilds/${process.platform}-${process.arch}/fs-native-extensions.node`,
      ) as LockBinding,
    );
  } catch {
    return createRequire(import.meta.url)('fs-native-extensions') as NativeLocks;
  }
}

/** Which method this platform uses (see LockMethod). */
export function defaultLockMethod(): LockMethod | null {
  if (loadNativeLocks()) return 'native';
  return process.platform === 'linux' ? 'socket' : null;
}

/** Bind the abstract socket named after the file; null when another process has it. */
function bindSocket(file: StateFile): Promise<Server | null> {
  const server = createServer((conn) => conn.destroy());
  return new Promise((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EADDRINUSE') resolve(null);
      else reject(err);
    });
    server.listen(`\0svc-ingest-ledger-${file.dev}-${file.ino}`, () => {
      server.unref();
      resolve(server);
    });
  });
}

/** The owner file's content, if it names a process (a torn, empty or foreign file gives null). */
async function readOwner(ownerPath: string): Promise<Partial<LockOwner> | null> {
  try {
    const f = await openStateFile(ownerPath, 'lock owner file', 'read');
    if (!f) return null;
    try {
      const buf = Buffer.alloc(4096);
      const { bytesRead } = await f.handle.read(buf, 0, buf.length, 0);
      const owner = JSON.parse(buf.toString('utf8', 0, bytesRead)) as Partial<LockOwner>;
      return typeof owner?.pid === 'number' ? owner : null;
    } finally {
      await f.handle.close();
    }
  } catch {
    return null;
  }
}

function lockedError(file: StateFile, owner: Partial<LockOwner> | null): SvcIngestError {
  const by =
    owner && owner.dev === file.dev && owner.ino === file.ino
      ? `process ${owner.pid}${owner.host && owner.host !== hostname() ? ` on host ${owner.host}` : ''} (started ${owner.startedAt ?? 'at an unknown time'})`
      : 'another process';
  return new SvcIngestError(
    'LEDGER_LOCKED',
    `ledger ${file.absPath} is in use by ${by}; one run per ledger: wait for it to finish`,
    { source: file.path, ...(owner?.pid !== undefined ? { pid: owner.pid } : {}) },
  );
}

/** The owner file beside a ledger: `<ledger>.lock`. */
export function ownerPathOf(ledgerFile: string): string {
  return `${ledgerFile}.lock`;
}

/**
 * Open the ledger (created, with its folders, if missing; refused if it is a link or not a regular file) and
 * take its lock, or fail with LEDGER_LOCKED naming the process that holds it (when its owner file says).
 * @example const lock = await acquireLedgerLock('ledger/transactions.ndjson'); try { … } finally { await lock.release() }
 */
export async function acquireLedgerLock(
  ledgerFile: string,
  opts: { method?: LockMethod } = {},
): Promise<LedgerLock> {
  const ownerPath = ownerPathOf(ledgerFile);
  await checkStateFile(ownerPath, 'lock owner file');
  const method = opts.method ?? defaultLockMethod();
  if (!method) {
    throw new SvcIngestError(
      'LEDGER_WRITE',
      `no kernel file lock on ${process.platform}-${process.arch} (the fs-native-extensions binary does not load), so two runs on one ledger could not be kept apart`,
      { source: ledgerFile },
    );
  }
  const file = (await openStateFile(ledgerFile, 'ledger', 'append')) as StateFile;
  let server: Server | null = null;
  try {
    let got: boolean;
    if (method === 'native') {
      const native = loadNativeLocks();
      if (!native) throw new Error('fs-native-extensions does not load on this platform');
      got = native.tryLock(file.handle.fd);
    } else {
      server = await bindSocket(file);
      got = server !== null;
    }
    if (!got) {
      // The holder writes its owner file right after taking the lock: give it a moment to appear.
      let owner = await readOwner(ownerPath);
      // Not send/retried.ts (ledger/ is below send/): five looks 20 ms apart for a file, with no failure to back off from.
      for (let i = 0; i < 5 && !(owner && owner.ino === file.ino); i++) {
        await sleep(20);
        owner = await readOwner(ownerPath);
      }
      throw lockedError(file, owner);
    }
  } catch (err) {
    await file.handle.close().catch(() => {});
    if (err instanceof SvcIngestError) throw err;
    throw new SvcIngestError(
      'LEDGER_WRITE',
      `cannot lock ledger ${file.absPath}: ${(err as Error).message}`,
      {
        source: ledgerFile,
      },
    );
  }

  // Ours now. An owner file still there belongs to a run that died holding the ledger (the kernel freed it).
  const stale = await readOwner(ownerPath);
  const tookOver =
    stale && stale.pid !== process.pid ? { pid: stale.pid as number, startedAt: stale.startedAt } : null;
  const me: LockOwner = {
    pid: process.pid,
    host: hostname(),
    startedAt: new Date().toISOString(),
    ledger: file.absPath,
    dev: file.dev,
    ino: file.ino,
  };
  let released = false;
  const release = async (): Promise<void> => {
    if (released) return;
    released = true;
    // The owner file goes first, while the lock still keeps every other run out.
    await unlink(ownerPath).catch(() => {});
    if (server) await new Promise<void>((r) => server?.close(() => r()));
    await file.handle.close().catch(() => {});
  };
  try {
    const owner = (await openStateFile(ownerPath, 'lock owner file', 'write')) as StateFile;
    try {
      await owner.handle.writeFile(`${JSON.stringify(me)}\n`);
    } finally {
      await owner.handle.close();
    }
  } catch (err) {
    await release();
    throw err;
  }
  return { file, ownerPath, method, tookOver, release };
}
