// CSV reader: csv-parse streaming (values stay strings), header row, ragged rows and bad quoting as rejects.

import { isUtf8 } from 'node:buffer';
import type { CsvError, InfoRecord } from 'csv-parse';
import { parse } from 'csv-parse';
import { SvcIngestError } from '../errors.ts';
import { maskCardNumbers, maskExcerpt } from '../mask.ts';
import { type FieldsBuilder, fieldsBuilder } from './fields.ts';
import type { RawRecord, ReadItem, RecordChunks } from './types.ts';

/** Options of readCsv. */
export interface CsvOptions {
  delimiter: string;
  maxLineBytes: number;
  onHeader?: (columns: string[], source: string) => void;
  /** Stop after the header (readCsvHeader). */
  headerOnly?: boolean;
  /** The header, when these bytes are a later chunk of the input (they then hold no header row). */
  columns?: string[];
  /** Line number of the first byte (a later chunk of the input); default 1. */
  firstLine?: number;
  /** The input's record delimiter, when these bytes are a later chunk (csv-parse discovers it otherwise). */
  recordDelimiter?: string;
}

const NEWLINE = Buffer.from('\n');
const CRLF = Buffer.from('\r\n');

/** The line csv-parse names in an error (it counts each line inside a quoted value). */
function line0(err: CsvError): number {
  return typeof err.lines === 'number' ? err.lines : 0;
}

/** The raw text of a rejected piece: 200 characters, masked before it is cut so no card number half survives. */
export function rejectText(text: string): string {
  return maskExcerpt(text, 200);
}

/** csv-parse's message without the field value some of its messages quote (`…, value is "…"`). */
function csvErrorMessage(err: CsvError): string {
  const m = err.message.replace(/ at line \d+/, '');
  const quoted = m.indexOf(', value is ');
  return maskCardNumbers(quoted === -1 ? m : m.slice(0, quoted));
}

const NO_BREAKS = { chars: 0, lines: 0 } as const;

function countBreaks(values: string[]): { chars: number; lines: number } {
  let chars = 0;
  let lines = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i] as string;
    if (v.indexOf('\n') === -1 && v.indexOf('\r') === -1) continue;
    for (let j = 0; j < v.length; j++) {
      const c = v.charCodeAt(j);
      if (c === 10) {
        chars++;
        lines++;
      } else if (c === 13) {
        chars++;
        if (v.charCodeAt(j + 1) !== 10) lines++;
      }
    }
  }
  return { chars, lines };
}

/**
 * Read CSV bytes into record / reject items. The first row is the header; every value stays a string.
 * @example for await (const items of readCsv(bytes, 'a.csv', { delimiter: ',', maxLineBytes: 1 << 20 })) ...
 */
export async function* readCsv(bytes: AsyncIterable<Buffer>, source: string, opts: CsvOptions): RecordChunks {
  // What csv-parse handed over since the last drain, in order: a record's values or the error of a row it skipped,
  // and beside it csv-parse's line count at that record (two arrays rather than an object per record).
  const pending: Array<string[] | CsvError> = [];
  const pendingLines: number[] = [];
  let failure: Error | undefined;
  const base = (opts.firstLine ?? 1) - 1;
  const parser = parse({
    // A later chunk of an input starts mid-file: no BOM, and the record delimiter found at the start.
    bom: opts.columns === undefined,
    ...(opts.recordDelimiter === undefined ? {} : { record_delimiter: opts.recordDelimiter }),
    delimiter: opts.delimiter,
    // Ragged rows are let through and turned into rejects here, so one bad row never aborts the file.
    relax_column_count: true,
    // A quote inside an unquoted value (37°36'37.8"N) is kept as text rather than failing the row.
    relax_quotes: true,
    skip_empty_lines: true,
    skip_records_with_error: true,
    // A backstop only (a quoted record spanning many lines, an unclosed quote): overlong physical lines are cut
    // out before the parser sees them, because csv-parse, skipping this error, drops the rest of every later
    // chunk. Hitting it ends the read with a clear error (see check()) rather than losing records silently.
    max_record_size: 4 * opts.maxLineBytes,
    on_record: (values: string[], info: InfoRecord) => {
      pending.push(values);
      pendingLines.push(info.lines);
      return null;
    },
    on_skip: (err: CsvError | undefined) => {
      if (err) {
        pending.push(err);
        pendingLines.push(0);
      }
    },
  });
  parser.on('error', (err) => {
    failure = err;
  });
  parser.resume();
  let columns: string[] | undefined = opts.columns;
  let build: FieldsBuilder | undefined = columns === undefined ? undefined : fieldsBuilder(columns);
  // csv-parse counts each CR and LF inside a quoted value as a line; this is how far it is ahead.
  let overcount = 0;
  /** csv-parse's line count at the previous record (NaN: unknown, scan the next one). */
  let prevLines = 0;
  const overlong = (line: number): ReadItem => ({
    kind: 'reject',
    reject: { source, line: base + line, message: `line longer than ${opts.maxLineBytes} bytes` },
  });
  const drain = (ended = false): ReadItem[] => {
    const items: ReadItem[] = [];
    for (let k = 0; k < pending.length; k++) {
      const p = pending[k] as string[] | CsvError;
      if (!Array.isArray(p)) {
        if (p.code === 'CSV_MAX_RECORD_SIZE') {
          failure = new SvcIngestError(
            'INPUT_PARSE',
            `${source}: a record starting near line ${base + line0(p) - overcount} runs over ${4 * opts.maxLineBytes} bytes ` +
              '(an unclosed quote?); the rest of the file cannot be read reliably',
            { source },
          );
          break;
        }
        prevLines = Number.NaN; // the next record is scanned
        const rel = typeof p.lines === 'number' ? p.lines - overcount : 0;
        while (held.length > 0 && (held[0] as number) < rel) items.push(overlong(held.shift() as number));
        const line = rel === 0 ? 0 : base + rel;
        items.push({
          kind: 'reject',
          reject: { source, line, message: `CSV: ${csvErrorMessage(p)}` },
        });
        continue;
      }
      const values = p;
      const lines = pendingLines[k] as number;
      // A record one line after the previous one holds no line break: the scan is skipped (most records).
      const breaks = lines - prevLines === 1 ? NO_BREAKS : countBreaks(values);
      prevLines = lines;
      const rel = lines - overcount - breaks.chars;
      while (held.length > 0 && (held[0] as number) < rel) items.push(overlong(held.shift() as number));
      const line = base + rel;
      overcount += breaks.chars - breaks.lines;
      // Physical lines of this record (relative to the chunk) that held bytes that are not UTF-8.
      while (badUtf8At < badUtf8.length && (badUtf8[badUtf8At] as number) < rel) badUtf8At++;
      const invalidUtf8 = badUtf8At < badUtf8.length && (badUtf8[badUtf8At] as number) <= rel + breaks.lines;
      if (columns === undefined) {
        const seen = new Map<string, number>();
        for (let i = 0; i < values.length; i++) {
          const c = values[i] as string;
          const before = seen.get(c);
          if (before !== undefined) {
            // Named by position and masked: a header is input too.
            throw new SvcIngestError(
              'INPUT_PARSE',
              `${source}: header columns ${before + 1} and ${i + 1} have the same name ${JSON.stringify(maskExcerpt(c, 40))}`,
              { source, line },
            );
          }
          seen.set(c, i);
        }
        columns = values;
        build = fieldsBuilder(columns);
        opts.onHeader?.(columns, source);
        continue;
      }
      if (values.length !== columns.length) {
        items.push({
          kind: 'reject',
          reject: {
            source,
            line,
            message: `expected ${columns.length} fields as in the header, got ${values.length}`,
            raw: rejectText(values.join(opts.delimiter)),
          },
        });
        continue;
      }
      const record: RawRecord = { source, line, fields: (build as FieldsBuilder)(values) };
      if (invalidUtf8) record.invalidUtf8 = true;
      items.push({ kind: 'record', record });
    }
    pending.length = 0;
    pendingLines.length = 0;
    if (ended) while (held.length > 0) items.push(overlong(held.shift() as number));
    return items;
  };
  const check = (): void => {
    if (failure)
      throw new SvcIngestError(
        'INPUT_PARSE',
        `${source}: ${failure.message}`,
        { source },
        { cause: failure },
      );
  };
  // Physical lines longer than maxLineBytes never reach the parser: complete lines are fed, the partial last
  // line is carried (at most maxLineBytes), and an overlong one is dropped as it streams past, leaving its
  // newline (so line numbers hold) and a reject in its place.
  let carry: Buffer[] = [];
  let carryLen = 0;
  let dropping = false;
  let droppedCR = false; // the last byte seen of the line being dropped is a CR
  /** Lines dropped as overlong; reported in line order, as the parser may still hold the record before one. */
  const held: number[] = [];
  let newlines = 0;
  /** Physical lines (relative, ascending) whose bytes are not valid UTF-8; badUtf8At: the next to match. */
  const badUtf8: number[] = [];
  let badUtf8At = 0;
  /** Feed the parser whole lines, the first being line `first`; one UTF-8 check each, per line if it fails. */
  const write = (buf: Buffer, first: number): void => {
    if (!isUtf8(buf)) {
      let from = 0;
      for (let l = first; from <= buf.length; l++) {
        let nl = buf.indexOf(10, from);
        if (nl === -1) nl = buf.length;
        if (!isUtf8(buf.subarray(from, nl))) badUtf8.push(l);
        from = nl + 1;
      }
    }
    parser.write(buf);
  };
  const countNewlines = (b: Buffer, from: number, to: number): void => {
    for (let i = b.indexOf(10, from); i !== -1 && i < to; i = b.indexOf(10, i + 1)) newlines++;
  };
  const feed = (chunk: Buffer): void => {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(10, start);
      const end = nl === -1 ? chunk.length : nl;
      if (!dropping && carryLen + (end - start) > opts.maxLineBytes) {
        dropping = true;
        carry = [];
        carryLen = 0;
      }
      if (nl === -1) {
        if (dropping && end > start) droppedCR = chunk[end - 1] === 13;
        if (!dropping && end > start) {
          carry.push(chunk.subarray(start));
          carryLen += end - start;
        }
        return;
      }
      if (dropping) {
        // The dropped line's own line ending, so a CRLF file's parser still sees a record delimiter there.
        parser.write((nl > start ? chunk[nl - 1] === 13 : droppedCR) ? CRLF : NEWLINE);
        held.push(newlines + 1);
        newlines++;
        dropping = false;
        start = nl + 1;
        continue;
      }
      // Feed the carry and every complete line up to the last newline of the chunk that is not overlong.
      let last = chunk.lastIndexOf(10);
      // Stop before a later overlong line: find the first line after `nl` that is too long, if any.
      let probe = nl + 1;
      while (probe <= last) {
        const next = chunk.indexOf(10, probe);
        if (next - probe > opts.maxLineBytes) {
          last = probe - 1;
          break;
        }
        probe = next + 1;
      }
      const block = chunk.subarray(start, last + 1);
      if (carryLen > 0) {
        carry.push(block);
        write(Buffer.concat(carry, carryLen + block.length), newlines + 1);
        carry = [];
        carryLen = 0;
      } else write(block, newlines + 1);
      countNewlines(chunk, start, last + 1);
      start = last + 1;
    }
  };
  for await (const chunk of bytes) {
    feed(chunk);
    check();
    const items = drain();
    if (opts.headerOnly && columns !== undefined) return;
    if (items.length > 0) yield items;
  }
  if (dropping) held.push(newlines + 1);
  else if (carryLen > 0) write(Buffer.concat(carry, carryLen), newlines + 1);
  parser.end();
  await new Promise<void>((resolve) => {
    if (parser.readableEnded || parser.destroyed) resolve();
    else {
      parser.once('end', () => resolve());
      parser.once('error', () => resolve());
      parser.once('close', () => resolve());
    }
  });
  check();
  const items = drain(true);
  if (items.length > 0) yield items;
  check();
}
