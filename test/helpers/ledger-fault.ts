// Test-only fault injection at the file-system level of a CLI child process: loaded with
// NODE_OPTIONS=--import (see ledgerFaultEnv), it makes writes to one ledger file fail with EIO once the file
// holds N lines. The write that would cross the N-th line is cut short after it (as a nearly full disk does),
// so exactly N lines land whatever the writer's group commit puts together; the next write fails. Both ways a
// ledger is written are covered: a FileHandle's write and fs.writeSync (the file ledger's writer).
import fs, { readlinkSync, realpathSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

const FAIL_AFTER = 'SVC_TEST_LEDGER_FAIL_AFTER';
const LEDGER = 'SVC_TEST_LEDGER_PATH';

/** The child's env that loads this module against `ledger`, failing after `lines` lines. */
export function ledgerFaultEnv(ledger: string, lines: number): NodeJS.ProcessEnv {
  const self = pathToFileURL(import.meta.filename).href;
  return { NODE_OPTIONS: `--import ${self}`, [FAIL_AFTER]: String(lines), [LEDGER]: ledger };
}

type Write = (
  this: { fd: number },
  buf: unknown,
  offset?: number,
  length?: number,
  pos?: unknown,
) => Promise<{ bytesWritten: number }>;

const failAfter = Number(process.env[FAIL_AFTER]);
const ledgerPath = process.env[LEDGER];
if (Number.isInteger(failAfter) && ledgerPath) {
  const target = join(realpathSync(dirname(ledgerPath)), basename(ledgerPath));
  const probe = await open(import.meta.filename, 'r');
  const proto = Object.getPrototypeOf(probe) as { write: Write };
  await probe.close();
  const write = proto.write;
  let lines = 0;
  const pathOf = (fd: number): string => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      return ''; // not a file we can name: not the ledger
    }
  };
  /** The bytes of this write that may land (up to the N-th line), or an EIO once N lines are there. */
  const allowed = (bytes: Uint8Array): { end: number; n: number } => {
    if (lines >= failAfter) throw Object.assign(new Error('EIO: i/o error, write'), { code: 'EIO' });
    let end = bytes.length;
    let n = 0;
    for (let i = 0; i < bytes.length; i++) {
      if (bytes[i] !== 10) continue;
      n++;
      if (lines + n === failAfter) {
        end = i + 1;
        break;
      }
    }
    return { end, n };
  };
  proto.write = async function (this: { fd: number }, buf, offset, length, pos) {
    if (pathOf(this.fd) !== target || !Buffer.isBuffer(buf))
      return write.call(this, buf, offset, length, pos);
    const from = offset ?? 0;
    const { end, n } = allowed(buf.subarray(from, from + (length ?? buf.length - from)));
    const r = await write.call(this, buf, from, end, pos);
    lines += n;
    return r;
  };
  const writeSync = fs.writeSync as (...args: unknown[]) => number;
  fs.writeSync = ((fd: number, buf: unknown, offset?: unknown, length?: unknown, pos?: unknown) => {
    if (pathOf(fd) !== target || !Buffer.isBuffer(buf) || typeof offset !== 'number')
      return writeSync(fd, buf, offset, length, pos);
    const { end, n } = allowed(
      buf.subarray(offset, offset + ((length as number | undefined) ?? buf.length - offset)),
    );
    const r = writeSync(fd, buf, offset, end, pos);
    lines += n;
    return r;
  }) as typeof fs.writeSync;
  syncBuiltinESMExports(); // `import { writeSync } from 'node:fs'` sees the wrapper too
}
