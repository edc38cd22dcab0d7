// Ledger writer: appends batch outcomes as NDJSON; each line is on disk (fdatasync) before append() resolves.
// Appends that arrive while a write is under way are committed together (group commit): one write, one sync.
import { writeSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { SvcIngestError } from '../../errors.ts';
import { openStateFile, type StateFile } from './files.ts';
import type { LedgerLine, LedgerMark } from './line.ts';

export interface LedgerWriter {
  readonly path: string;
  /** True if the file ended in a torn line (a crash mid-write) that was closed off at open. */
  readonly repairedTornLine: boolean;
  /** Resolves once the line is written and synced; rejects with LEDGER_WRITE, after which every append rejects. */
  append(line: LedgerLine | LedgerMark): Promise<void>;
  close(): Promise<void>;
  /** Groups synced so far (one write and one fdatasync each), how many waited for more outcomes first, and the
   *  lines they held. */
  readonly groups: { readonly synced: number; readonly delayed: number; readonly lines: number };
}

interface Pending {
  text: string;
  resolve: () => void;
  reject: (err: Error) => void;
}

/** Where the bytes go: a FileHandle's write (a seam, so a test can make every write a short one). */
export interface WriteTarget {
  write(buffer: Buffer, offset: number, length: number): Promise<{ bytesWritten: number }>;
}

/** What the writer does to the ledger's open file: write and sync (a test wraps it to inject a fault). */
export interface LedgerHandle extends WriteTarget {
  datasync(): Promise<void>;
}

export interface LedgerWriterOptions {
  /** Wraps the file's handle for every append (tests: a write error after N lines); never set in production. */
  wrapHandle?: (handle: LedgerHandle) => LedgerHandle;
  /** Requests in flight now, their outcomes' appends included (the send's slots): outcomes still to come are
   *  waited for before a sync (see COMMIT_DELAY_MS). Without it every group syncs at once. */
  inFlight?: () => number;
}

/**
 * Group commit at every concurrency, adaptive to what waiting catches (as PostgreSQL's commit_delay, sized by
 * the run): when a group's first outcome is queued while other requests are still out, the group may wait up to
 * COMMIT_DELAY_MS for their outcomes before its sync, ended early once every request in flight has its outcome
 * queued (nothing else can arrive). It waits while waiting pays: while at least half of the recent waits caught
 * another outcome (an average over ~8 waits); below that only a probe waits, every PROBE_EVERY-th group at first, to
 * see whether it pays again, and each probe while waits still do not pay makes the next one twice as far off (up to
 * MAX_PROBE_EVERY groups); once they pay again (probes that caught outcomes bring the share back over a half),
 * every group waits again and probes start over at PROBE_EVERY. Each probe that catches nothing has held its
 * group's slots for the whole delay: at concurrency 8 a probe every 8 groups cost ~1 % of the delivered rate
 * (docs/performance.md). So a busy sender (concurrency 32 against a 50 ms service: an outcome every ~1.6 ms, ~70 % of
 * waits catch one) shares its syncs, and one whose outcomes come spread out (concurrency 8: one every ~6.5 ms,
 * ~25 %) does not lengthen each slot's cycle for nothing; outcomes that come in bursts are caught at any
 * concurrency. A sync costs ~100 µs of CPU (the syscall and the thread pool's round trip). With nothing else in
 * flight (concurrency 1, the end of a run) a group syncs at once.
 * A slot is still freed only once its outcome is durable: the kill -9 bound is unchanged.
 */
export const COMMIT_DELAY_MS = 2;
/** While waits seldom pay, a probe waits anyway (and so measures whether they pay again), first every this many groups. */
export const PROBE_EVERY = 8;
/** The longest interval between probes, after probes in a row found that waiting did not pay. */
export const MAX_PROBE_EVERY = 256;

/**
 * Write every byte of `buf`, or throw: a write(2) may write only part (a nearly full disk writes what fits and
 * the next call fails with ENOSPC), and a part counted as whole would lose a ledger line.
 */
export async function writeAll(target: WriteTarget, buf: Buffer): Promise<void> {
  let done = 0;
  while (done < buf.length) {
    const { bytesWritten } = await target.write(buf, done, buf.length - done);
    if (!(bytesWritten > 0)) {
      const e = new Error('EIO: write wrote nothing') as NodeJS.ErrnoException;
      e.code = 'EIO';
      throw e;
    }
    done += bytesWritten;
  }
}

/**
 * The ledger's own handle: the write is synchronous (into the page cache: a few µs for a group's lines), the sync
 * goes to the thread pool. A write on the thread pool costs a second round trip per group, and each round trip
 * waits for the event loop: measured inside the send slot's cycle (issue 14), so it is saved here.
 */
function directHandle(fh: FileHandle): LedgerHandle {
  return {
    write(buffer, offset, length) {
      try {
        return Promise.resolve({ bytesWritten: writeSync(fh.fd, buffer, offset, length) });
      } catch (err) {
        return Promise.reject(err);
      }
    },
    datasync: () => fh.datasync(),
  };
}

/**
 * Ends a torn last line (a crash mid-write) so the next line starts clean (the reader skips the torn one); true if
 * it did. On an error the handle is closed when the writer opened it (`owned`).
 * @throws SvcIngestError LEDGER_WRITE.
 */
async function repairTornLine(file: StateFile, owned: boolean): Promise<boolean> {
  const fh = file.handle;
  try {
    const size = (await fh.stat()).size;
    if (size === 0) return false;
    const last = Buffer.alloc(1);
    await fh.read(last, 0, 1, size - 1);
    if (last[0] === 0x0a) return false;
    await writeAll(fh, Buffer.from('\n'));
    await fh.datasync();
    return true;
  } catch (err) {
    if (owned) await fh.close().catch(() => {});
    throw new SvcIngestError(
      'LEDGER_WRITE',
      `cannot open ledger ${file.absPath} for writing: ${(err as Error).message}`,
      {
        source: file.path,
      },
    );
  }
}

/**
 * Open the ledger for appending: a path (opened here, and closed by close()) or the file the ledger lock holds
 * open (left open by close(): the lock closes it). A torn last line is closed off first.
 * @throws SvcIngestError LEDGER_PATH_INVALID (a link, not a regular file) or LEDGER_WRITE.
 */
export async function openLedgerWriter(
  ledger: string | StateFile,
  opts: LedgerWriterOptions = {},
): Promise<LedgerWriter> {
  const file =
    typeof ledger === 'string' ? ((await openStateFile(ledger, 'ledger', 'append')) as StateFile) : ledger;
  const path = file.absPath;
  const owned = typeof ledger === 'string';
  const fh = file.handle;
  const repairedTornLine = await repairTornLine(file, owned);
  const direct = directHandle(fh);
  const out: LedgerHandle = opts.wrapHandle ? opts.wrapHandle(direct) : direct;
  let queue: Pending[] = [];
  let writing = false;
  let broken: Error | null = null;
  let idle: Promise<void> = Promise.resolve();
  let markIdle: () => void = () => {};
  const groups = { synced: 0, delayed: 0, lines: 0 };
  // The share of recent waits that caught another outcome, groups since the last probe, the gathering group's wake-up.
  let paying = 1;
  let sinceProbe = 0;
  let probeEvery = PROBE_EVERY;
  let wake: (() => void) | null = null;
  const outstanding = () => (opts.inFlight ? opts.inFlight() - queue.length : 0);

  /** Waits for the outcomes still out, up to COMMIT_DELAY_MS, when that pays; false if it did not wait. */
  async function gather(): Promise<boolean> {
    if (outstanding() <= 0) return false;
    const probing = paying < 0.5;
    if (probing && ++sinceProbe < probeEvery) return false;
    sinceProbe = 0;
    const before = queue.length;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        wake = null;
        resolve();
      }, COMMIT_DELAY_MS);
      wake = () => {
        if (outstanding() > 0) return;
        clearTimeout(timer);
        wake = null;
        resolve();
      };
    });
    const caught = queue.length > before;
    paying += ((caught ? 1 : 0) - paying) / 8;
    // While waits do not pay, each probe makes the next one twice as far off; once they pay again, PROBE_EVERY.
    if (paying >= 0.5) probeEvery = PROBE_EVERY;
    else if (probing) probeEvery = Math.min(probeEvery * 2, MAX_PROBE_EVERY);
    return true;
  }

  async function drain(): Promise<void> {
    writing = true;
    idle = new Promise((r) => {
      markIdle = r;
    });
    let first = true;
    while (queue.length > 0) {
      // After a group, its slots free themselves a few promise hops later: counted once they have.
      if (!first && opts.inFlight) await new Promise((r) => setImmediate(r));
      first = false;
      if (!broken && (await gather())) groups.delayed++;
      const group = queue;
      queue = [];
      try {
        if (broken) throw broken;
        let text = '';
        for (const p of group) text += p.text;
        await writeAll(out, Buffer.from(text, 'utf8'));
        await out.datasync();
        groups.synced++;
        groups.lines += group.length;
        for (const p of group) p.resolve();
      } catch (err) {
        broken ??=
          err instanceof SvcIngestError
            ? err
            : new SvcIngestError('LEDGER_WRITE', `cannot write ledger ${path}: ${(err as Error).message}`, {
                source: path,
              });
        for (const p of group) p.reject(broken);
      }
    }
    writing = false;
    markIdle();
  }

  return {
    path,
    repairedTornLine,
    groups,
    append(line: LedgerLine | LedgerMark): Promise<void> {
      if (broken) return Promise.reject(broken);
      return new Promise<void>((resolve, reject) => {
        queue.push({ text: `${JSON.stringify(line)}\n`, resolve, reject });
        if (!writing) void drain();
        else wake?.();
      });
    },
    async close() {
      if (writing) await idle;
      if (owned) await fh.close().catch(() => {});
    },
  };
}
