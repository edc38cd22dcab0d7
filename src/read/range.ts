// Reads one byte range of an input file — a backfill partition — as records, with the line numbers and the CSV
// header of the whole file: a partition that does not start the file holds no header row, so the header (and the
// record delimiter csv-parse found at the start) are handed in. A .gz file cannot be entered mid-stream: its only
// range is the whole file.
import { createReadStream } from 'node:fs';
import { SvcIngestError } from '../errors.ts';
import { maskCardNumbers } from '../mask/index.ts';
import type { InputFormat } from '../model/input.ts';
import { readCsv } from './csv.ts';
import { readNdjson } from './ndjson.ts';
import { DEFAULT_MAX_LINE_BYTES, inputBytes, unreadable } from './open.ts';
import type { RecordChunks } from './types.ts';

/**
 * One partition of a file to read.
 * @example { path: '/data/2019.csv', format: 'csv', gzip: false, start: 67108864, end: 134217801, firstLine: 412337, columns: ['transactionId', …], recordDelimiter: '\n', delimiter: ',' }
 */
export interface RangeSpec {
  path: string;
  format: InputFormat;
  gzip: boolean;
  /** First byte (a record boundary; 0 = the start of the file, header included). */
  start: number;
  /** One past the last byte (a record boundary, or the end of the file). */
  end: number;
  /** Line number of the byte at `start` (1 at the start of the file). */
  firstLine: number;
  /** CSV: the file's header, for a range that does not start at byte 0. */
  columns?: string[];
  /** CSV: the record delimiter of the file ('\n' or '\r\n'), for a range that does not start at byte 0. */
  recordDelimiter?: string;
  /** CSV field delimiter (default ','). */
  delimiter?: string;
}

/**
 * The bytes [start, end) of a file, `readBytes` at a time.
 * @example for await (const buf of rangeBytes('/data/a.csv', 1024, 4096)) …
 */
export async function* rangeBytes(
  path: string,
  start: number,
  end: number,
  readBytes = 16 * 1024,
  onBytes?: (n: number) => void,
): AsyncGenerator<Buffer> {
  if (end <= start) return;
  try {
    for await (const chunk of createReadStream(path, { start, end: end - 1, highWaterMark: readBytes })) {
      onBytes?.((chunk as Buffer).length);
      yield chunk as Buffer;
    }
  } catch (err) {
    throw unreadable(path, err);
  }
}

/**
 * Read one range of a file as chunks of records and rejects, in order, with the line numbers a reader of the whole
 * file would give. Records carry `source: spec.path`. `onBytes` is told of the file's bytes as they are read (a .gz
 * file: its compressed bytes).
 * @example for await (const items of readRange(partitionSpec, {})) …
 */
export function readRange(
  spec: RangeSpec,
  opts: { maxLineBytes?: number; readBytes?: number; onBytes?: (n: number) => void } = {},
): RecordChunks {
  const maxLineBytes = opts.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  let bytes: AsyncIterable<Buffer>;
  if (spec.gzip) {
    if (spec.start !== 0) {
      throw new SvcIngestError(
        'USAGE_INVALID',
        `${spec.path}: a gzipped file can only be read whole, not from byte ${spec.start}`,
        {
          source: spec.path,
        },
      );
    }
    bytes = inputBytes(
      { path: spec.path, format: spec.format, gzip: true },
      undefined,
      opts.readBytes,
      opts.onBytes,
    );
  } else bytes = rangeBytes(spec.path, spec.start, spec.end, opts.readBytes, opts.onBytes);
  // The source name records carry into the ledger (batches.source) and rejects: masked, as send names its inputs.
  const source = maskCardNumbers(spec.path);
  if (spec.format === 'ndjson') return readNdjson(bytes, source, maxLineBytes, spec.firstLine);
  const mid = spec.start > 0;
  if (mid && spec.columns === undefined)
    throw new SvcIngestError(
      'USAGE_INVALID',
      `${spec.path}: a CSV range after byte 0 needs the file's header`,
      {
        source: spec.path,
      },
    );
  return readCsv(bytes, source, {
    delimiter: spec.delimiter ?? ',',
    maxLineBytes,
    firstLine: spec.firstLine,
    ...(mid ? { columns: spec.columns, recordDelimiter: spec.recordDelimiter } : {}),
  });
}
