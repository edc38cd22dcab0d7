// Input resolution and reading: paths + --format → specs; one spec → chunks of records or rejects, in order.

import { createReadStream, fstatSync } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { SvcIngestError } from '../errors.ts';
import { maskCardNumbers } from '../mask/index.ts';
import { refuseTypedCardNumbers } from '../mask/typed.ts';
import type { InputFormat } from '../model/input.ts';
import { compressionOf, decompressed } from './decompress.ts';
import { readNdjson } from './ndjson.ts';
import type { RecordChunks } from './types.ts';

/**
 * One input to read. For standard input without --format, `sniff` is set and `format` is only a
 * placeholder: readInput decides from the first bytes.
 * @example { path: 'exports/a.csv.gz', format: 'csv', gzip: true }
 */
export interface InputSpec {
  /** '-' = standard input. */
  path: string;
  format: InputFormat;
  gzip: boolean;
  /** An input whose format readInput sniffs ('{' → ndjson, a letter, digit or quote → csv). */
  sniff?: boolean;
  /**
   * Read once, front to back: standard input, a pipe (`<(zcat x.gz)`, a FIFO) or a device. Its header is
   * checked as it is read, gzip is told from its first bytes, it is never split across worker threads.
   */
  stream?: boolean;
  /** The name the input goes by (--source-name), instead of its path, `stdin` or `/dev/fd/63`. */
  name?: string;
  /**
   * A stream's last record may lack its final line break (--allow-unterminated): read as a file's is. Otherwise a
   * stream that stops inside its last record fails the read (read/broken.ts); a file by path is read to its end
   * as it is (docs/sending.md, "An input cut short").
   */
  allowUnterminated?: boolean;
  /** `--format pgtext`: PostgreSQL's text format (read/pgtext.ts), with `format` 'csv' (a header, read in order). */
  dialect?: 'pgtext';
}

/** Options of readInput. */
export interface ReadOptions {
  /** CSV field delimiter, one character (default ','). */
  delimiter?: string;
  /** Longest NDJSON line (and CSV record) accepted, in bytes; longer ones become rejects. Default 1 MiB. */
  maxLineBytes?: number;
  stdin?: NodeJS.ReadableStream;
  /** Called once per CSV input with its header, before any record of it; may throw to stop the run. */
  onHeader?: (columns: string[], source: string) => void;
  /** Told how many bytes of the input were consumed (before gunzip), as they are read: for progress and ETA. */
  onBytes?: (n: number) => void;
  /** Bytes handed to the reader at a time (default SLICE_BYTES; a busy send takes BUSY_SLICE_BYTES). */
  sliceBytes?: number;
  /** Sees (and may hold back) the records read before they go on: control totals (send/control-totals.ts). */
  tap?: (chunks: RecordChunks) => RecordChunks;
}

export const DEFAULT_MAX_LINE_BYTES = 1024 * 1024;
const EXTENSIONS: Record<string, InputFormat> = { csv: 'csv', ndjson: 'ndjson', jsonl: 'ndjson' };

/** Standard input, a pipe or a device: an input that can be read only once, front to back. */
export function readOnce(spec: InputSpec): boolean {
  return spec.stream === true || spec.path === '-';
}

/**
 * The name a spec is shown under in records, the ledger's and the rejects' `source`, and messages: a card number
 * in a file name (a per-card export) is masked like any text we store or print.
 */
export function sourceName(spec: InputSpec): string {
  if (spec.name !== undefined) return maskCardNumbers(spec.name);
  return spec.path === '-' ? 'stdin' : maskCardNumbers(spec.path);
}

/** INPUT_UNREADABLE naming the file and why (no such file, permission denied, or the error's code). */
export function unreadable(file: string, err: unknown): SvcIngestError {
  const code = (err as NodeJS.ErrnoException)?.code;
  const why =
    code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : (code ?? String(err));
  return new SvcIngestError(
    'INPUT_UNREADABLE',
    `cannot read ${file}: ${why}`,
    { source: file },
    { cause: err },
  );
}

/**
 * Resolve paths + --format into specs. Format: --format if given, else the extension (.csv, .ndjson,
 * .jsonl, each optionally .gz); gzip by extension or magic bytes. '-' or no path = standard input.
 * Unreadable file → INPUT_UNREADABLE; unknown extension without --format → INPUT_FORMAT_UNKNOWN.
 * @example await resolveInputs(['a.csv.gz', '-'], { format: undefined })
 */
export async function resolveInputs(
  paths: string[],
  opts: { format?: InputFormat; sourceName?: string; allowUnterminated?: boolean },
): Promise<InputSpec[]> {
  let specs = await resolveSpecs(paths, opts);
  if (opts.allowUnterminated === true)
    specs = specs.map((s) => (readOnce(s) ? { ...s, allowUnterminated: true } : s));
  return opts.sourceName === undefined ? specs : nameTheStream(specs, opts.sourceName);
}

/**
 * `--source-name NAME`: the export goes by NAME in the ledger's and the rejects' `source` and in messages. It names
 * the one input when there is one (a file, standard input or a pipe: a unit's fixed path like the pipe's
 * `/dev/fd/63`), and among several inputs the one read as a stream. Several inputs with no stream among them, or
 * with two, leave nothing or two to name: a usage error.
 */
function nameTheStream(specs: InputSpec[], name: string): InputSpec[] {
  if (name.trim() === '' || /[\u0000-\u001f\u007f]/.test(name))
    throw new SvcIngestError(
      'USAGE_INVALID',
      '--source-name: expected a non-empty name without control characters',
    );
  refuseTypedCardNumbers([['--source-name', name]]);
  if (specs.length === 1) return [{ ...specs[0]!, name }];
  const streams = specs.filter(readOnce);
  if (streams.length !== 1)
    throw new SvcIngestError(
      'USAGE_INVALID',
      streams.length === 0
        ? `--source-name names one input, and ${specs.length} files are given (each goes by its path)`
        : `--source-name names one input, and ${streams.length} are standard input or pipes`,
    );
  return specs.map((s) => (readOnce(s) ? { ...s, name } : s));
}

async function resolveSpecs(paths: string[], opts: { format?: InputFormat }): Promise<InputSpec[]> {
  const list = paths.length === 0 ? ['-'] : paths;
  if (list.filter((p) => p === '-').length > 1) {
    throw new SvcIngestError('USAGE_INVALID', 'standard input (-) can be read only once');
  }
  const specs: InputSpec[] = [];
  for (const p of list) {
    if (p === '-') {
      specs.push(
        opts.format
          ? { path: p, format: opts.format, gzip: false, stream: true }
          : { path: p, format: 'csv', gzip: false, sniff: true, stream: true },
      );
      continue;
    }
    let regular: boolean;
    try {
      const st = await stat(p);
      regular = st.isFile();
      if (!regular && !st.isFIFO() && !st.isCharacterDevice() && !st.isSocket()) {
        throw Object.assign(new Error(st.isDirectory() ? 'a directory' : 'not a regular file'), {
          code: st.isDirectory() ? 'a directory' : 'not a regular file',
        });
      }
    } catch (err) {
      throw unreadable(p, err);
    }
    if (!regular) {
      // A pipe or a device is read once: its first bytes tell gzip (and the format, unless named) as it is read.
      const named = opts.format ?? formatByExtension(p);
      specs.push(
        named
          ? { path: p, format: named, gzip: false, stream: true }
          : { path: p, format: 'csv', gzip: false, sniff: true, stream: true },
      );
      continue;
    }
    let magic: Buffer;
    try {
      const fh = await open(p, 'r');
      try {
        const { buffer, bytesRead } = await fh.read(Buffer.alloc(2), 0, 2, 0);
        magic = buffer.subarray(0, bytesRead);
      } finally {
        await fh.close();
      }
    } catch (err) {
      throw unreadable(p, err);
    }
    const gzExt = p.toLowerCase().endsWith('.gz');
    const format = opts.format ?? formatByExtension(p);
    if (format === undefined) {
      throw new SvcIngestError(
        'INPUT_FORMAT_UNKNOWN',
        `cannot tell the format of ${p}: expected .csv, .ndjson or .jsonl (optionally .gz), or --format`,
        { source: p },
      );
    }
    specs.push({ path: p, format, gzip: gzExt || (magic[0] === 0x1f && magic[1] === 0x8b) });
  }
  return specs;
}

/** The format an input's name gives: .csv, .ndjson or .jsonl, each optionally followed by .gz. */
function formatByExtension(p: string): InputFormat | undefined {
  const lower = p.toLowerCase();
  const base = lower.endsWith('.gz') ? lower.slice(0, -3) : lower;
  const ext = base.slice(base.lastIndexOf('.') + 1);
  return Object.hasOwn(EXTENSIONS, ext) ? EXTENSIONS[ext] : undefined;
}

/**
 * Bytes handed to a reader at a time. csv-parse handles what it is given synchronously, so on the thread that
 * also handles the service's answers an answer (or the ledger's sync) waits for at most one slice: 4 KiB is ~11
 * canonical rows, ~0.3 ms. Between slices the event loop gets a turn (setImmediate, ~1 µs; a 4 KiB read instead
 * would cost a thread-pool round trip each).
 */
export const SLICE_BYTES = 4 * 1024;
/**
 * Slices of a busy send (many requests in flight: prepare/choose.ts). There our CPU, not the answers' latency, sets
 * the pace, and each slice costs a turn of the event loop and a trip through the chain's generators: test/bench
 * e2e-c32 (300k rows) 35.5 µs/tx at 16 KiB against 37.4 at 4 KiB, event-loop p99 9.9–14.8 ms. At concurrency 8 the
 * answers' wait is what counts: 16 KiB delivered 0.941–0.949 of the ceiling against 0.956–0.960 at 4 KiB.
 */
export const BUSY_SLICE_BYTES = 16 * 1024;

/** A chunk as slices of at most SLICE_BYTES, the event loop getting a turn between two slices. */
async function* sliced(chunk: Buffer, size: number): AsyncGenerator<Buffer> {
  if (chunk.length <= size) {
    yield chunk;
    return;
  }
  for (let at = 0; at < chunk.length; at += size) {
    if (at > 0) await new Promise<void>((resolve) => setImmediate(resolve));
    yield chunk.subarray(at, at + size);
  }
}

/**
 * Bytes of one input, decompressed when needed (read/decompress.ts); a stream is sniffed for its compression. Files are read
 * `readBytes` at a time (default 64 KiB) and handed on in slices of SLICE_BYTES: the slices keep event-loop
 * stalls short (test/bench e2e-c8 with whole reads handed to csv-parse: p99 loop delay 28 ms at 256 KiB, 9-15 ms
 * at 64 KiB, ~10 ms at 16 KiB), the larger reads save thread-pool round trips.
 */
export async function* inputBytes(
  spec: InputSpec,
  stdin: NodeJS.ReadableStream | undefined,
  readBytes = 64 * 1024,
  onBytes?: (n: number) => void,
  /** Slices handed on (SLICE_BYTES); Infinity = whole reads (the pool's splitter, which parses nothing). */
  sliceBytes = SLICE_BYTES,
): AsyncGenerator<Buffer> {
  const source = sourceName(spec);
  // Standard input, a pipe or a device is read once: its first bytes tell whether (and how) it is compressed. A
  // file's gzip is known before (resolveSpecs): a backfill cuts a plain file into ranges, never a compressed one.
  const from =
    spec.path === '-' ? (stdin ?? process.stdin) : createReadStream(spec.path, { highWaterMark: readBytes });
  const it = from[Symbol.asyncIterator]() as AsyncIterator<Buffer | string>;
  let first: IteratorResult<Buffer | string>;
  try {
    first = await it.next();
  } catch (err) {
    throw unreadable(source, err);
  }
  if (first.done) return;
  const head = typeof first.value === 'string' ? Buffer.from(first.value) : first.value;
  const kind = spec.gzip ? 'gzip' : readOnce(spec) ? compressionOf(head) : undefined;
  let raw: AsyncIterable<Buffer | string> = (async function* () {
    yield head;
    for (let r = await it.next(); !r.done; r = await it.next()) yield r.value;
  })();
  if (onBytes) raw = counted(raw, onBytes);
  try {
    const bytes = kind === undefined ? raw : decompressed(raw, kind, source);
    for await (const chunk of bytes)
      yield* sliced(typeof chunk === 'string' ? Buffer.from(chunk) : chunk, sliceBytes);
  } catch (err) {
    if (err instanceof SvcIngestError) throw err;
    throw unreadable(source, err);
  }
}

/** The same chunks, each reported to `onBytes` as it passes. */
async function* counted(
  raw: AsyncIterable<Buffer | string>,
  onBytes: (n: number) => void,
): AsyncGenerator<Buffer | string> {
  for await (const chunk of raw) {
    onBytes(typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length);
    yield chunk;
  }
}

/** Peek the first non-empty chunk of a byte stream and hand back a stream that still starts with it. */
async function peek(
  bytes: AsyncGenerator<Buffer>,
): Promise<{ head: Buffer | undefined; all: AsyncGenerator<Buffer> }> {
  let first = await bytes.next();
  while (!first.done && first.value.length === 0) first = await bytes.next();
  if (first.done) return { head: undefined, all: bytes };
  const head = first.value;
  return {
    head,
    all: (async function* () {
      yield head;
      yield* bytes;
    })(),
  };
}

/** '{' → ndjson; a letter, digit, quote or underscore → csv (after a BOM and whitespace); else undefined. */
export function sniffFormat(head: Buffer): InputFormat | undefined {
  let i = head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf ? 3 : 0;
  while (i < head.length && (head[i] === 0x20 || head[i] === 0x09 || head[i] === 0x0a || head[i] === 0x0d))
    i++;
  const c = head[i];
  if (c === undefined) return undefined;
  if (c === 0x7b) return 'ndjson';
  const ch = String.fromCharCode(c);
  return /[A-Za-z0-9"_]/.test(ch) ? 'csv' : undefined;
}

/**
 * Read one input as chunks of items in order (records and parse rejects). CSV: header row, RFC 4180
 * quotes, BOM, CRLF, delimiter; values stay strings; a ragged row is a reject. NDJSON: blank lines
 * skipped, a bad line or a non-object is a reject, an overlong line is rejected without being kept
 * in memory. Each record carries its source and the 1-based line where it starts.
 * @example for await (const items of readInput(spec, {})) for (const it of items) if (it.kind === 'record') use(it.record)
 */
export function readInput(spec: InputSpec, opts: ReadOptions): RecordChunks {
  return opts.tap === undefined ? readItems(spec, opts) : opts.tap(readItems(spec, opts));
}

async function* readItems(spec: InputSpec, opts: ReadOptions): RecordChunks {
  const source = sourceName(spec);
  const maxLineBytes = opts.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  let bytes = inputBytes(spec, opts.stdin, undefined, opts.onBytes, opts.sliceBytes);
  let format = spec.format;
  if (spec.sniff) {
    const { head, all } = await peek(bytes);
    if (head === undefined) return;
    const sniffed = sniffFormat(head);
    if (sniffed === undefined) {
      throw new SvcIngestError(
        'INPUT_FORMAT_UNKNOWN',
        `cannot tell the format of ${spec.path === '-' ? 'standard input' : source}: use --format csv|ndjson`,
        {
          source,
        },
      );
    }
    format = sniffed;
    bytes = all;
  }
  const wholeEnd = readOnce(spec) && spec.allowUnterminated !== true && !stdinIsFile(spec, opts.stdin);
  if (spec.dialect === 'pgtext') {
    const { readPgText } = await import('./pgtext.ts');
    yield* readPgText(bytes, source, { maxLineBytes, onHeader: opts.onHeader, wholeEnd });
  } else if (format === 'ndjson') yield* readNdjson(bytes, source, maxLineBytes, 1, wholeEnd);
  else
    yield* (await csvReader())(bytes, source, {
      delimiter: opts.delimiter ?? ',',
      maxLineBytes,
      onHeader: opts.onHeader,
      wholeEnd,
    });
}

/**
 * Standard input redirected from a regular file (`send - < export.csv`): complete, with a known size, so its end is
 * read as a file's is (a pipe's or a FIFO's end says nothing of whether its producer finished).
 */
function stdinIsFile(spec: InputSpec, stdin: NodeJS.ReadableStream | undefined): boolean {
  if (spec.path !== '-' || (stdin !== undefined && stdin !== process.stdin)) return false;
  try {
    return fstatSync(0).isFile();
  } catch {
    return false;
  }
}

/** The CSV reader, loaded on the first CSV input: an NDJSON run never loads csv-parse (~11 ms of CPU a start). */
async function csvReader(): Promise<typeof import('./csv.ts').readCsv> {
  return (await import('./csv.ts')).readCsv;
}

/**
 * Read just the header row of a CSV input (to check every file before anything is sent).
 * An empty file gives [].
 * @example await readCsvHeader({ path: 'a.csv', format: 'csv', gzip: false }, {}) // ['transactionId', ...]
 */
export async function readCsvHeader(spec: InputSpec, opts: { delimiter?: string }): Promise<string[]> {
  let columns: string[] = [];
  const onHeader = (c: string[]): void => {
    columns = c;
  };
  if (spec.dialect === 'pgtext') {
    const { readPgText } = await import('./pgtext.ts');
    const o = { maxLineBytes: DEFAULT_MAX_LINE_BYTES, onHeader, headerOnly: true };
    for await (const _items of readPgText(inputBytes(spec, undefined), sourceName(spec), o)) break;
    return columns;
  }
  const readCsv = await csvReader();
  for await (const _items of readCsv(inputBytes(spec, undefined), sourceName(spec), {
    delimiter: opts.delimiter ?? ',',
    maxLineBytes: DEFAULT_MAX_LINE_BYTES,
    onHeader,
    headerOnly: true,
  })) {
    break;
  }
  return columns;
}
