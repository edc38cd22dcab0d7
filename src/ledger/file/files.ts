// State files (ledger, rejects, lock owner): never opened through a symbolic link, regular files only, mode 0600,
// their folders created (mode 0700) on first use. The one place that decides what a state path may be.
import { constants, type Stats } from 'node:fs';
import { type FileHandle, lstat, mkdir, open } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { SvcIngestError } from '../../errors.ts';

/** What the file is, for messages: "ledger /x is a directory". */
export type StateFileKind = 'ledger' | 'rejects file' | 'lock owner file';

/**
 * An open state file and its identity (device and inode: the same file whatever path reached it).
 * @example const f = await openStateFile('ledger/transactions.ndjson', 'ledger', 'append'); f.dev, f.ino
 */
export interface StateFile {
  /** The path as given. */
  path: string;
  /** The absolute path (for logs and summaries). */
  absPath: string;
  handle: FileHandle;
  dev: number;
  ino: number;
  size: number;
}

/**
 * - `append`: read and append, created if missing (with its folders), mode set to 0600;
 * - `write`: write from the start (emptied), created if missing, mode 0600;
 * - `read`: read only, a missing file gives null, the mode is left alone.
 */
export type StateFileMode = 'append' | 'write' | 'read';

// O_NOFOLLOW refuses a link in the last component; O_NONBLOCK keeps a FIFO swapped in after the check from
// blocking the open (it has no effect on a regular file). Both are 0 where the platform lacks them.
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const NONBLOCK = constants.O_NONBLOCK ?? 0;
const FLAGS: Record<StateFileMode, number> = {
  append: constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | NOFOLLOW | NONBLOCK,
  write: constants.O_WRONLY | constants.O_CREAT | NOFOLLOW | NONBLOCK,
  read: constants.O_RDONLY | NOFOLLOW | NONBLOCK,
};

/** The kind of a file that is not a regular one, in words. */
function whatItIs(st: Stats): string {
  if (st.isSymbolicLink()) return 'a symbolic link';
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a named pipe (FIFO)';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSocket()) return 'a socket';
  return 'not a regular file';
}

function refuse(path: string, kind: StateFileKind, what: string): SvcIngestError {
  const advice =
    what === 'a symbolic link'
      ? 'state files are never opened through a link: name the file itself'
      : 'name a regular file, or a path where one can be created';
  return new SvcIngestError('LEDGER_PATH_INVALID', `${kind} ${resolve(path)} is ${what}; ${advice}`, {
    source: path,
  });
}

function cannot(path: string, kind: StateFileKind, verb: string, err: unknown): SvcIngestError {
  const code = kind === 'ledger' && verb === 'read' ? 'LEDGER_READ' : 'LEDGER_WRITE';
  return new SvcIngestError(code, `cannot ${verb} ${kind} ${resolve(path)}: ${(err as Error).message}`, {
    source: path,
  });
}

/**
 * Refuse, without opening anything, a state path that exists and is not a regular file (a symbolic link,
 * a directory, a FIFO, a device such as /dev/full, a socket). True when the file exists.
 * @throws SvcIngestError LEDGER_PATH_INVALID naming the path and what it is.
 */
export async function checkStateFile(path: string, kind: StateFileKind): Promise<boolean> {
  let st: Stats;
  try {
    st = await lstat(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return false;
    throw cannot(path, kind, 'check', err);
  }
  if (!st.isFile()) throw refuse(path, kind, whatItIs(st));
  return true;
}

/**
 * Open a state file safely: the last component is never followed if it is a link, anything but a regular
 * file is refused, the folders of a file to be created are made with mode 0700, and a file opened for
 * writing gets mode 0600 (an existing 0644 file too).
 * @throws SvcIngestError LEDGER_PATH_INVALID for what is not a regular file; LEDGER_WRITE / LEDGER_READ otherwise.
 */
export async function openStateFile(
  path: string,
  kind: StateFileKind,
  mode: StateFileMode,
): Promise<StateFile | null> {
  await checkStateFile(path, kind);
  const verb = mode === 'read' ? 'read' : 'open';
  let handle: FileHandle;
  try {
    if (mode !== 'read') {
      // EEXIST: a component is a file, not a folder; open() below says so (ENOTDIR).
      await mkdir(dirname(path), { recursive: true, mode: 0o700 }).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'EEXIST') throw err;
      });
    }
    handle = await open(path, FLAGS[mode], 0o600);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (mode === 'read' && code === 'ENOENT') return null;
    // ELOOP: the path became a link after the check above.
    if (code === 'ELOOP') throw refuse(path, kind, 'a symbolic link');
    throw cannot(path, kind, verb, err);
  }
  try {
    const st = await handle.stat();
    if (!st.isFile()) throw refuse(path, kind, whatItIs(st));
    if (mode !== 'read' && (st.mode & 0o777) !== 0o600) await handle.chmod(0o600);
    if (mode === 'write') await handle.truncate(0);
    return {
      path,
      absPath: resolve(path),
      handle,
      dev: st.dev,
      ino: st.ino,
      size: mode === 'write' ? 0 : st.size,
    };
  } catch (err) {
    await handle.close().catch(() => {});
    if (err instanceof SvcIngestError) throw err;
    throw cannot(path, kind, verb, err);
  }
}
