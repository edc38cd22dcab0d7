// CSV reader: csv-parse streaming (values stay strings), header row, ragged rows and bad quoting as rejects.
// Three steps, top to bottom: LineCutter (csv-lines.ts) feeds the parser whole lines and cuts overlong ones out;
// csv-parse turns them into values or errors (ParserOutput); CsvRecords turns those into records and rejects with
// their line numbers.

import { type CsvError, Parser } from 'csv-parse';
import { SvcIngestError } from '../errors.ts';
import { maskCardNumbers, maskExcerpt } from '../mask/index.ts';
import { brokenInput, ENDED_MID_RECORD, endedMidRecord } from './broken.ts';
import { LineCutter } from './csv-lines.ts';
import { rejectText } from './excerpt.ts';
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
  /**
   * A stream whose last record must be terminated (read/broken.ts): a last line without a line break, or a quoted
   * value still open at the end, is rejected as "input ended mid-record" and the read then fails (INPUT_TRUNCATED).
   */
  wholeEnd?: boolean;
}

/**
 * Read CSV bytes into record / reject items. The first row is the header; every value stays a string.
 * @example for await (const items of readCsv(bytes, 'a.csv', { delimiter: ',', maxLineBytes: 1 << 20 })) ...
 */
export async function* readCsv(bytes: AsyncIterable<Buffer>, source: string, opts: CsvOptions): RecordChunks {
  const out = new ParserOutput(source);
  const parser = openParser(opts, out);
  const lines = new LineCutter(parser, opts.maxLineBytes);
  const records = new CsvRecords(source, opts, lines);
  for await (const chunk of bytes) {
    lines.feed(chunk);
    out.check();
    const items = records.drain(out, false);
    if (opts.headerOnly && records.columns !== undefined) return;
    if (items.length > 0) yield items;
  }
  const held = lines.end(opts.wholeEnd ? 'hold' : 'feed');
  parser.end();
  await parserEnded(parser);
  out.check();
  const items = records.drain(out, true);
  const cut = endedAt(records, held, (opts.firstLine ?? 1) - 1);
  if (cut !== undefined && records.columns !== undefined)
    items.push({
      kind: 'reject',
      reject: {
        source,
        line: cut.line,
        message: `${ENDED_MID_RECORD} (${cut.why})`,
        ...(cut.raw === undefined ? {} : { raw: rejectText(cut.raw) }),
      },
    });
  if (items.length > 0) yield items;
  out.check();
  if (cut !== undefined) throw endedMidRecord(source, cut.line, cut.why);
}

/**
 * Where a stream read with `wholeEnd` stops inside its last record, and how: a quoted value still open at the end
 * (the record starts where the quote's does), or a last line with no line break after it (held back from the
 * parser). A last line of blanks only is no record. Undefined: the stream ended between records.
 */
function endedAt(
  records: CsvRecords,
  held: { line: number; text?: string } | undefined,
  base: number,
): { line: number; why: string; raw?: string } | undefined {
  if (records.unclosedAt !== undefined)
    return { line: records.unclosedAt, why: 'a quoted value is not closed' };
  if (held === undefined || held.text?.trim() === '') return undefined;
  return { line: base + held.line, why: 'no line break after it', raw: held.text };
}

/**
 * What csv-parse handed over since the last drain, in order: a record's values or the error of a row it skipped,
 * and beside it csv-parse's line count at that record (two arrays rather than an object per record); and the
 * error that ends the read, if any.
 */
class ParserOutput {
  readonly pending: Array<string[] | CsvError> = [];
  readonly pendingLines: number[] = [];
  failure: Error | undefined;
  private readonly source: string;

  constructor(source: string) {
    this.source = source;
  }

  /** Throw the error that ends the read, if there is one. */
  check(): void {
    const f = this.failure;
    if (f)
      throw new SvcIngestError(
        'INPUT_PARSE',
        `${this.source}: ${f.message}`,
        { source: this.source },
        { cause: f },
      );
  }

  clear(): void {
    this.pending.length = 0;
    this.pendingLines.length = 0;
  }
}

/**
 * csv-parse's stream, each record handed to `out` with the parser's line count at that moment (its public `info`)
 * rather than pushed on: csv-parse calls `push` once per record. An `on_record` hook would do the same, but csv-parse
 * then builds an info object per record (two spreads of ~10 fields: ~17 % of the young generation's allocation of
 * the parse alone, measured by scavenges), of which the line count is all that is read.
 */
class RecordParser extends Parser {
  private readonly out: ParserOutput;

  constructor(options: ConstructorParameters<typeof Parser>[0], out: ParserOutput) {
    super(options);
    this.out = out;
    everyLengthExpected(this);
  }

  override push(chunk: unknown, encoding?: BufferEncoding): boolean {
    if (chunk === null) return super.push(chunk, encoding);
    this.out.pending.push(chunk as string[]);
    this.out.pendingLines.push(this.info.lines);
    return true;
  }
}

/**
 * Ragged rows are ours to find (CsvRecords compares each record with the header), but csv-parse, even relaxed, builds
 * a CsvError for each record whose length differs from the first one's, and drops it: a stack trace and a JSON copy
 * of its context, ~45 µs a row, ten times a good row's whole read (200,000 ragged rows: 45 against ~7 µs a row). So
 * its record step is entered with the length it expects set to the record's own, and that error is never built. Not
 * a documented option: test/read/read.test.ts checks that csv-parse still has both (else ragged rows are only
 * slower, never read differently).
 */
export function everyLengthExpected(parser: Parser): void {
  const api = (parser as unknown as { api?: CsvParseApi }).api;
  const onRecord = api?.__onRecord;
  if (api === undefined || typeof onRecord !== 'function') return;
  api.__onRecord = function (this: CsvParseApi, push: unknown) {
    this.state.expectedRecordLength = this.state.record.length;
    return onRecord.call(this, push);
  };
}

/** The part of csv-parse's parser state everyLengthExpected steers. */
interface CsvParseApi {
  state: { record: unknown[]; expectedRecordLength: number | null };
  __onRecord: (push: unknown) => unknown;
}

/** csv-parse, set to hand every record and every skipped row's error to `out`, flowing. */
function openParser(opts: CsvOptions, out: ParserOutput): Parser {
  const parser = new RecordParser(
    {
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
      // chunk. Hitting it ends the read with a clear error (see CsvRecords.skipped) rather than losing records.
      max_record_size: 4 * opts.maxLineBytes,
      on_skip: (err: CsvError | undefined) => {
        if (err) {
          out.pending.push(err);
          out.pendingLines.push(0);
        }
      },
    },
    out,
  );
  parser.on('error', (err) => {
    out.failure = err;
  });
  parser.resume();
  return parser;
}

/** Resolves once the ended parser has handed over its last record (or failed). */
function parserEnded(parser: Parser): Promise<void> {
  return new Promise<void>((resolve) => {
    if (parser.readableEnded || parser.destroyed) resolve();
    else {
      parser.once('end', () => resolve());
      parser.once('error', () => resolve());
      parser.once('close', () => resolve());
    }
  });
}

const NO_BREAKS = { chars: 0, lines: 0 } as const;

/** A tab-separated value `\N`: PostgreSQL's NULL, never sent as text; the run stops naming the fix. */
function pgNull(source: string, line: number): SvcIngestError {
  return brokenInput(
    'INPUT_PARSE',
    `${source}: line ${line} holds \\N, PostgreSQL's NULL: this is COPY's text format, not CSV. Read it with ` +
      '--format pgtext, or export CSV: \\copy (…) TO STDOUT WITH CSV HEADER',
    { source, line, brief: `${source}: \\N (PostgreSQL's NULL) at line ${line}` },
  );
}

/** Line breaks inside a record's values: characters (csv-parse counts each CR and LF) and lines (CRLF is one). */
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

/** csv-parse's message without the field value some of its messages quote (`…, value is "…"`). */
function csvErrorMessage(err: CsvError): string {
  const m = err.message.replace(/ at line \d+/, '');
  const quoted = m.indexOf(', value is ');
  return maskCardNumbers(quoted === -1 ? m : m.slice(0, quoted));
}

/**
 * The parser's output as records and rejects, each with the line it starts on: the header first (checked), then
 * records of as many values as it has columns; ragged rows, rows csv-parse skipped and lines cut out as overlong
 * become rejects, in line order.
 */
class CsvRecords {
  columns: string[] | undefined;
  /** With `wholeEnd`: the line of a record whose quoted value is still open where the input ends. */
  unclosedAt: number | undefined;
  private build: FieldsBuilder | undefined;
  private readonly source: string;
  private readonly opts: CsvOptions;
  private readonly lines: LineCutter;
  /** Line number of the first byte, less one. */
  private readonly base: number;
  /** csv-parse counts each CR and LF inside a quoted value as a line; this is how far it is ahead. */
  private overcount = 0;
  /** csv-parse's line count at the previous record (NaN: unknown, scan the next one). */
  private prevLines = 0;
  /** The next of lines.badUtf8 to match. */
  private badUtf8At = 0;

  constructor(source: string, opts: CsvOptions, lines: LineCutter) {
    this.source = source;
    this.opts = opts;
    this.lines = lines;
    this.base = (opts.firstLine ?? 1) - 1;
    this.columns = opts.columns;
    this.build = opts.columns === undefined ? undefined : fieldsBuilder(opts.columns);
  }

  /** Everything the parser handed over since the last drain, as items; `ended`: also the last overlong lines. */
  drain(out: ParserOutput, ended: boolean): ReadItem[] {
    const items: ReadItem[] = [];
    const { pending, pendingLines } = out;
    for (let k = 0; k < pending.length; k++) {
      const p = pending[k] as string[] | CsvError;
      if (Array.isArray(p)) this.record(p, pendingLines[k] as number, items);
      else if (!this.skipped(p, out, items)) break;
    }
    out.clear();
    if (ended) this.overlongBefore(Number.POSITIVE_INFINITY, items);
    return items;
  }

  /** One record's values, at csv-parse's line count `lines`: the header, a record or a ragged row's reject. */
  private record(values: string[], lines: number, items: ReadItem[]): void {
    // A record one line after the previous one holds no line break: the scan is skipped (most records).
    const breaks = lines - this.prevLines === 1 ? NO_BREAKS : countBreaks(values);
    this.prevLines = lines;
    const rel = lines - this.overcount - breaks.chars;
    this.overlongBefore(rel, items);
    const line = this.base + rel;
    this.overcount += breaks.chars - breaks.lines;
    const invalidUtf8 = this.invalidUtf8(rel, breaks.lines);
    const columns = this.columns;
    if (columns === undefined) this.header(values, line);
    else if (values.length !== columns.length) items.push(this.ragged(values, line, columns.length));
    else if (this.opts.delimiter === '\t' && values.includes('\\N')) throw pgNull(this.source, line);
    else {
      const record: RawRecord = { source: this.source, line, fields: (this.build as FieldsBuilder)(values) };
      if (invalidUtf8) record.invalidUtf8 = true;
      items.push({ kind: 'record', record });
    }
  }

  /** A row csv-parse skipped: a reject; false when the read cannot go on (`out.failure` is set). */
  private skipped(err: CsvError, out: ParserOutput, items: ReadItem[]): boolean {
    if (err.code === 'CSV_MAX_RECORD_SIZE') {
      const near = this.base + (typeof err.lines === 'number' ? err.lines : 0) - this.overcount;
      out.failure = new SvcIngestError(
        'INPUT_PARSE',
        `${this.source}: a record starting near line ${near} runs over ${4 * this.opts.maxLineBytes} bytes ` +
          '(an unclosed quote?); the rest of the file cannot be read reliably',
        { source: this.source },
      );
      return false;
    }
    this.prevLines = Number.NaN; // the next record is scanned
    const rel = typeof err.lines === 'number' ? err.lines - this.overcount : 0;
    this.overlongBefore(rel, items);
    const line = rel === 0 ? 0 : this.base + rel;
    if (err.code === 'CSV_QUOTE_NOT_CLOSED' && this.opts.wholeEnd) {
      this.unclosedAt = line; // readCsv rejects it as ended mid-record, then fails the read
      return true;
    }
    items.push({
      kind: 'reject',
      reject: { source: this.source, line, message: `CSV: ${csvErrorMessage(err)}` },
    });
    return true;
  }

  /** The first record is the header: its names must differ. */
  private header(values: string[], line: number): void {
    if (values.length === 1 && this.opts.delimiter !== '\t' && (values[0] as string).includes('\t'))
      throw new SvcIngestError(
        'INPUT_PARSE',
        `${this.source}: the header holds tabs and no ${JSON.stringify(this.opts.delimiter)}: tab-separated? ` +
          "Read it with --delimiter $'\\t', or --format pgtext for PostgreSQL's text output (COPY … TO STDOUT, \\N for NULL)",
        { source: this.source, line },
      );
    const seen = new Map<string, number>();
    for (let i = 0; i < values.length; i++) {
      const c = values[i] as string;
      const before = seen.get(c);
      if (before !== undefined) {
        // Named by position and masked: a header is input too.
        throw new SvcIngestError(
          'INPUT_PARSE',
          `${this.source}: header columns ${before + 1} and ${i + 1} have the same name ${JSON.stringify(maskExcerpt(c, 40))}`,
          { source: this.source, line },
        );
      }
      seen.set(c, i);
    }
    this.columns = values;
    this.build = fieldsBuilder(values);
    this.opts.onHeader?.(values, this.source);
  }

  private ragged(values: string[], line: number, expected: number): ReadItem {
    return {
      kind: 'reject',
      reject: {
        source: this.source,
        line,
        message: `expected ${expected} fields as in the header, got ${values.length}`,
        raw: rejectText(values.join(this.opts.delimiter)),
      },
    };
  }

  /** Rejects for the lines cut out as overlong before relative line `rel`. An overlong header ends the read: no
   *  line after it can be read as records without it. */
  private overlongBefore(rel: number, items: ReadItem[]): void {
    const held = this.lines.held;
    while (held.length > 0 && (held[0] as number) < rel) {
      const line = this.base + (held.shift() as number);
      const message = `line longer than ${this.opts.maxLineBytes} bytes`;
      if (this.columns === undefined)
        throw new SvcIngestError(
          'INPUT_PARSE',
          `${this.source}: the header (line ${line}) is longer than ${this.opts.maxLineBytes} bytes, the longest line ` +
            'read; no record can be read without it',
          { source: this.source, line },
        );
      items.push({ kind: 'reject', reject: { source: this.source, line, message } });
    }
  }

  /** Whether a physical line of the record starting at `rel` (with `breaks` line breaks) is not UTF-8. */
  private invalidUtf8(rel: number, breaks: number): boolean {
    const bad = this.lines.badUtf8;
    while (this.badUtf8At < bad.length && (bad[this.badUtf8At] as number) < rel) this.badUtf8At++;
    return this.badUtf8At < bad.length && (bad[this.badUtf8At] as number) <= rel + breaks;
  }
}
