// Reading a small file a person names (a config, a mapping profile, a token, a password, a PEM): it must be a regular
// file, and it is read only up to a cap, so `--config /dev/zero` or a FIFO is a clear error, never memory growing
// without end or a read that never returns.
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';

/** Caps, in bytes, of the small files the tool reads. */
export const FILE_CAPS = {
  config: 1024 * 1024,
  profile: 1024 * 1024,
  secret: 64 * 1024,
  pem: 1024 * 1024,
} as const;

/** Why a small file could not be read: `reason` is said after the file's name in the caller's message. */
export class SmallFileError extends Error {
  readonly reason: string;
  readonly code: string;
  constructor(reason: string, code: string) {
    super(reason);
    this.reason = reason;
    this.code = code;
  }
}

function mib(n: number): string {
  return n >= 1024 * 1024 ? `${n / (1024 * 1024)} MiB` : `${n / 1024} KiB`;
}

/**
 * The text of a regular file of at most `max` bytes (UTF-8). Throws SmallFileError: `no such file`, `is a
 * directory`, `not a regular file (a device, a pipe or a socket)`, `larger than 1 MiB`, or the fs error's code.
 * @example readSmallFile('config.json', FILE_CAPS.config)
 */
export function readSmallFile(path: string, max: number): string {
  return readSmallBytes(path, max).toString('utf8');
}

/** readSmallFile's bytes, for a file that may not be text (a DER key). */
export function readSmallBytes(path: string, max: number): Buffer {
  let fd: number;
  try {
    // Non-blocking, so opening a FIFO without a writer does not wait; the check below refuses it anyway.
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'EIO';
    throw new SmallFileError(
      code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : code,
      code,
    );
  }
  try {
    const st = fstatSync(fd);
    if (st.isDirectory()) throw new SmallFileError('is a directory', 'EISDIR');
    if (!st.isFile())
      throw new SmallFileError('not a regular file (a device, a pipe or a socket)', 'ENOTREG');
    if (st.size > max) throw new SmallFileError(`larger than ${mib(max)} (${st.size} bytes)`, 'EFBIG');
    // Read up to one byte past the cap: a file that grew since fstat is refused, not read without end.
    const buf = Buffer.allocUnsafe(max + 1);
    let n = 0;
    for (;;) {
      const got = readSync(fd, buf, n, buf.length - n, null);
      if (got === 0) break;
      n += got;
      if (n > max) throw new SmallFileError(`larger than ${mib(max)}`, 'EFBIG');
    }
    return buf.subarray(0, n);
  } finally {
    closeSync(fd);
  }
}
