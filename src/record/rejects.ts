// Rejects file: one NDJSON line per rejected record (source, line, every error, the masked record), appended
// under a cap on lines and bytes per run; a reject the file already holds (same source, line and record) is
// not appended again.
import { createHash } from 'node:crypto';
import type { WriteStream } from 'node:fs';
import type { Config } from '../config/index.ts';
import { SvcIngestError } from '../errors.ts';
import { openStateFile, type StateFile } from '../ledger/file/files.ts';
import { createLineSplitter, type SplitLine } from '../ledger/file/lines.ts';
import { maskDeep } from '../mask/index.ts';
import { createSpillingFingerprintSet, type FingerprintSet } from '../sorted-runs/fingerprint-set.ts';

/**
 * One reject line (CONTRACT.md). Nothing in it holds a full card number: the writer masks every string, key
 * and number of the line (src/mask/index.ts) on its way to the file. `recordHash` (written by us) is the
 * first 16 hex digits of the SHA-256 of the record's JSON: with source and line it says "this record again".
 * @example {"source":"a.csv","line":17,"errors":[{"field":"postedAmount","message":"…"}],"record":{…},"runId":"…","recordHash":"…"}
 */
export interface RejectLine {
  source: string;
  line: number;
  errors: Array<{ field: string; message: string }>;
  record?: unknown;
  runId?: string;
  recordHash?: string;
}

/** What became of one reject: appended, already in the file from an earlier run, or dropped at the byte cap. */
export type RejectWrite = 'written' | 'known' | 'dropped';

/** The caps on what one run appends, the table's: send.maxRejects (lines), send.maxRejectBytes; 0 = no limit. */
export type RejectsLimits = Pick<Config['send'], 'maxRejects' | 'maxRejectBytes'>;

export interface RejectsWriter {
  write(line: RejectLine): RejectWrite;
  /** Lines and bytes appended by this run. */
  readonly written: number;
  readonly bytes: number;
  /** Which cap was reached (no more lines are appended after it), if any. */
  readonly full: 'lines' | 'bytes' | null;
  /** How many of the lines appended are in the file (written to it, not only queued): they are written in order. */
  readonly flushed?: number;
  close(): Promise<void>;
}

export interface RejectsOpenOptions {
  caps: RejectsLimits;
  /** Sources of this run: only their earlier rejects are remembered (keeps the known-reject index small). */
  sources?: Iterable<string>;
}

function hashRecord(json: string): string {
  return createHash('sha256').update(json).digest('hex').slice(0, 16);
}

const keyOf = (source: string, line: number, recordHash: string) => `${source}\n${line}\n${recordHash}`;

/**
 * Stream the rejects file once and remember (as 64-bit fingerprints, flat memory) the key of every reject of
 * one of `sources`. Lines over 1 MiB, torn or foreign lines are ignored.
 */
async function loadKnown(file: StateFile, sources: Set<string>): Promise<FingerprintSet> {
  const known = createSpillingFingerprintSet();
  if (file.size === 0 || sources.size === 0) return known;
  const splitter = createLineSplitter();
  const onLine = ({ text }: SplitLine): void => {
    if (!text) return;
    let r: Partial<RejectLine>;
    try {
      r = JSON.parse(text) as Partial<RejectLine>;
    } catch {
      return;
    }
    if (typeof r?.source !== 'string' || !sources.has(r.source) || typeof r.line !== 'number') return;
    const hash =
      typeof r.recordHash === 'string'
        ? r.recordHash
        : hashRecord(r.record === undefined ? '' : JSON.stringify(r.record));
    known.add(keyOf(r.source, r.line, hash));
  };
  let position = 0;
  const buf = Buffer.allocUnsafe(1 << 20);
  while (position < file.size) {
    const { bytesRead } = await file.handle.read(
      buf,
      0,
      Math.min(buf.length, file.size - position),
      position,
    );
    if (bytesRead === 0) break;
    splitter.push(buf.subarray(0, bytesRead), onLine);
    position += bytesRead;
  }
  splitter.end(onLine);
  return known;
}

/**
 * Open the rejects file for appending (created with its folders, mode 0600; a link or anything but a regular
 * file is refused). Writes are buffered; close() flushes.
 * @example const r = await openRejectsWriter('ledger/rejects.ndjson', { caps: config.send, sources: ['a.csv'] })
 */
export async function openRejectsWriter(path: string, opts: RejectsOpenOptions): Promise<RejectsWriter> {
  const { maxRejects: maxLines, maxRejectBytes: maxBytes } = opts.caps;
  const file = (await openStateFile(path, 'rejects file', 'append')) as StateFile;
  let known: FingerprintSet;
  let stream: WriteStream;
  try {
    known = await loadKnown(file, new Set(opts.sources ?? []));
    stream = file.handle.createWriteStream();
  } catch (err) {
    await file.handle.close().catch(() => {});
    throw new SvcIngestError(
      'LEDGER_WRITE',
      `cannot open rejects file ${file.absPath}: ${(err as Error).message}`,
      { source: path },
    );
  }
  let error: Error | null = null;
  stream.on('error', (err) => {
    error = err;
  });
  let written = 0;
  let flushed = 0;
  let bytes = 0;
  let full: RejectsWriter['full'] = null;
  const failed = (err: Error) =>
    new SvcIngestError('LEDGER_WRITE', `cannot write rejects file ${file.absPath}: ${err.message}`, {
      source: path,
    });
  return {
    write(unmasked) {
      if (error) throw failed(error);
      // The last pass before the disk: every value, key and message of the line, whoever built it (src/mask/index.ts;
      // idempotent, so a record masked already hashes the same).
      let line: RejectLine;
      try {
        line = maskDeep(unmasked) as RejectLine;
      } catch {
        // A record too deep to walk (hostile nesting): the line goes without it, as below.
        line = maskDeep({ ...unmasked, record: undefined }) as RejectLine;
      }
      let recordJson: string | undefined;
      try {
        recordJson = line.record === undefined ? undefined : JSON.stringify(line.record);
      } catch {
        // A record too deep or too big to serialise (JSON.stringify's RangeError): the line goes without it.
        recordJson = undefined;
      }
      const recordHash = hashRecord(recordJson ?? '');
      const key = keyOf(line.source, line.line, recordHash);
      if (known.has(key)) return 'known';
      if (full) return 'dropped';
      if (maxLines > 0 && written >= maxLines) {
        full = 'lines';
        return 'dropped';
      }
      const text =
        `{"source":${JSON.stringify(line.source)},"line":${line.line},"errors":${JSON.stringify(line.errors)}` +
        (recordJson === undefined ? '' : `,"record":${recordJson}`) +
        (line.runId === undefined ? '' : `,"runId":${JSON.stringify(line.runId)}`) +
        `,"recordHash":"${recordHash}"}\n`;
      const size = Buffer.byteLength(text);
      if (maxBytes > 0 && bytes + size > maxBytes) {
        full = 'bytes';
        return 'dropped';
      }
      stream.write(text, (err) => {
        if (!err) flushed++;
      });
      written++;
      bytes += size;
      return 'written';
    },
    get written() {
      return written;
    },
    get bytes() {
      return bytes;
    },
    get full() {
      return full;
    },
    get flushed() {
      return flushed;
    },
    async close() {
      known.close?.();
      await new Promise<void>((resolve) => stream.end(resolve));
      await file.handle.close().catch(() => {});
      if (error) throw failed(error);
    },
  };
}

/** A rejects sink that discards (dry run without an explicit --rejects). */
export function nullRejectsWriter(): RejectsWriter {
  return {
    write: () => 'written',
    written: 0,
    bytes: 0,
    full: null,
    async close() {},
  };
}
