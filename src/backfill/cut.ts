// Cuts an input file into byte-range partitions for a backfill: each starts at a record boundary, found by the
// worker pool's splitter (src/prepare/split.ts: csv-parse's quote rules replayed, so a line break inside a quoted
// value is never a boundary), and carries the line number of its first byte. Reading the partitions one by one
// (src/read/range.ts) gives exactly the records, lines and rejects of one reader over the whole file.
// A gzipped file cannot be entered in the middle of its stream: it is one partition.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { SvcIngestError } from '../errors.ts';
import { createSplitter } from '../prepare/split.ts';
import { type InputSpec, unreadable } from '../read/open.ts';

/**
 * One partition: bytes [start, end) of its file, the first at line `firstLine`.
 * @example { start: 0, end: 67109012, firstLine: 1 }
 */
export interface PartitionCut {
  start: number;
  end: number;
  firstLine: number;
}

/** What cutting a file found. */
export interface FileCuts {
  size: number;
  mtimeMs: number;
  partitions: PartitionCut[];
  /** CSV: the record delimiter (as csv-parse takes it from the first line ending), once known. */
  recordDelimiter?: '\n' | '\r\n';
}

export interface CutOptions {
  delimiter: string;
  maxLineBytes: number;
  /** A partition ends at the first record boundary after this many bytes. */
  partitionBytes: number;
  /** Read size (default 1 MiB: the scan only looks for line feeds and quotes). */
  readBytes?: number;
}

/**
 * Scan a file once and cut it into partitions. An empty file has none; a file that the splitter cannot be sure of
 * (a lone CR as line ending, a lone LF in a CRLF file) stops being cut where it stops being sure.
 * @example const { partitions } = await cutFile({ path: 'a.csv', format: 'csv', gzip: false }, { delimiter: ',', maxLineBytes: 1 << 20, partitionBytes: 64 << 20 })
 */
export async function cutFile(spec: InputSpec, o: CutOptions): Promise<FileCuts> {
  const st = await stat(spec.path);
  const size = st.size;
  if (spec.gzip || size === 0) {
    return {
      size,
      mtimeMs: Math.floor(st.mtimeMs),
      partitions: size === 0 ? [] : [{ start: 0, end: size, firstLine: 1 }],
    };
  }
  const splitter = createSplitter({
    format: spec.format,
    delimiter: o.delimiter,
    maxLineBytes: o.maxLineBytes,
    pieceBytes: o.partitionBytes,
  });
  const partitions: PartitionCut[] = [];
  let pos = 0; // bytes scanned
  let line = 1; // line number at pos
  let start = 0; // the open partition's first byte
  let firstLine = 1;
  const take = (p: { bytes: Buffer; newlines: number; last: boolean }): void => {
    pos += p.bytes.length;
    line += p.newlines;
    if (p.last && pos > start) {
      partitions.push({ start, end: pos, firstLine });
      start = pos;
      firstLine = line;
    }
  };
  try {
    for await (const buf of createReadStream(spec.path, { highWaterMark: o.readBytes ?? 1024 * 1024 })) {
      for (const p of splitter.push(buf as Buffer)) take(p);
    }
  } catch (err) {
    throw unreadable(spec.path, err);
  }
  take(splitter.end());
  if (pos !== size)
    throw new SvcIngestError(
      'INPUT_UNREADABLE',
      `${spec.path} changed while it was being planned (${size} bytes, then ${pos})`,
      {
        source: spec.path,
      },
    );
  return {
    size: pos,
    mtimeMs: Math.floor(st.mtimeMs),
    partitions,
    recordDelimiter: splitter.recordDelimiter,
  };
}
