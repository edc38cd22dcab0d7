// Splits an input's bytes into chunks that start at a record boundary, so each chunk can be parsed on its own
// thread and the results, put back in order, equal one parser reading the whole input.
//
// NDJSON: every LF ends a record. CSV: an LF ends a record unless it is inside a quoted value, which is decided
// by replaying csv-parse's quote rules (relax_quotes: a quote opens a value only at the start of a field; inside
// one, "" is a quote and any other quote closes it). Only lines that contain a quote are replayed byte by byte.
// Where the input is not simple enough to be sure (a lone CR as the first line ending, a lone LF in a CRLF
// file), the splitter stops splitting and the rest of the input is one chunk: slower, never different.

/** One piece of the input, in order; `last` marks the last piece of a chunk (a record boundary follows it). */
export interface Piece {
  bytes: Buffer;
  /** Line feeds in `bytes` (line numbers of the next chunk start after them). */
  newlines: number;
  last: boolean;
}

export interface SplitterOptions {
  format: 'csv' | 'ndjson';
  /** CSV field delimiter: one ASCII character. */
  delimiter: string;
  /** Physical lines longer than this are cut out by the reader; the splitter ignores their quotes too. */
  maxLineBytes: number;
  /**
   * A piece ends at the first record boundary after this many bytes (a pool's chunk: prepare.chunkBytes; a
   * backfill partition: its partition size).
   */
  pieceBytes: number;
}

export interface Splitter {
  /** Split the next buffer of input into pieces (in order). */
  push(buf: Buffer): Piece[];
  /** The rest, at the end of input (a final piece, possibly empty, with last = true). */
  end(): Piece;
  /** CSV: the record delimiter the input uses (as csv-parse would discover it), once known. */
  readonly recordDelimiter: '\n' | '\r\n' | undefined;
}

const LF = 10;
const CR = 13;
const QUOTE = 34;

/** Can this input be split by the splitter? (single-byte ASCII delimiter, not the quote or a line end). */
export function splittable(delimiter: string): boolean {
  if (delimiter.length !== 1) return false;
  const c = delimiter.charCodeAt(0);
  return c < 128 && c !== QUOTE && c !== LF && c !== CR;
}

export function createSplitter(o: SplitterOptions): Splitter {
  const csv = o.format === 'csv';
  const delim = o.delimiter.charCodeAt(0);
  // CSV state at the current position of the scan.
  let quoting = false;
  let fieldStart = true;
  /** Set once the input is not simple enough to split: everything after is one chunk. */
  let unsure = csv && !splittable(o.delimiter);
  let recordDelimiter: '\n' | '\r\n' | undefined;
  let atStart = true; // before the first byte of the input (a BOM is skipped)
  // The current physical line, when it spans buffers: its earlier parts (kept only while it may need a replay).
  let lineParts: Buffer[] = [];
  let lineLen = 0;
  let lineQuote = false; // the parts so far hold a quote
  let prevCR = false; // the last byte of the previous buffer was a CR
  // Bytes of the current chunk already handed out.
  let chunkLen = 0;

  /** Replay csv-parse's quote rules over one complete physical line (without its LF). */
  const replay = (line: Buffer): void => {
    for (let i = 0; i < line.length; i++) {
      const c = line[i] as number;
      if (quoting) {
        if (c === QUOTE) {
          if (line[i + 1] === QUOTE) i++;
          else {
            quoting = false;
            fieldStart = false;
          }
        }
      } else if (c === QUOTE) {
        if (fieldStart) quoting = true;
        fieldStart = false;
      } else fieldStart = c === delim;
    }
  };

  /** A complete physical line ends (its LF at `nl` of `buf`): update the state; is the LF a record boundary? */
  const endLine = (buf: Buffer, from: number, nl: number, hasQuote: boolean): boolean => {
    if (!csv) return true;
    const len = lineLen + (nl - from);
    const crlf = nl > from ? buf[nl - 1] === CR : prevCR;
    const whole = (): Buffer =>
      lineLen > 0 ? Buffer.concat([...lineParts, buf.subarray(from, nl)]) : buf.subarray(from, nl);
    if (recordDelimiter === undefined && !unsure) {
      // csv-parse takes the first line ending it meets as the record delimiter of the whole input.
      const cr = len <= o.maxLineBytes ? whole().indexOf(CR) : 0;
      if (cr !== -1 && cr !== len - 1)
        unsure = true; // a lone CR first ("\r" records), or an overlong first line
      else recordDelimiter = crlf ? '\r\n' : '\n';
    }
    // Overlong lines never reach the parser (the reader cuts them out): their quotes do not count.
    if (len <= o.maxLineBytes && (hasQuote || lineQuote)) {
      const line = whole();
      replay(atStart && line[0] === 0xef && line[1] === 0xbb && line[2] === 0xbf ? line.subarray(3) : line);
    }
    atStart = false;
    lineParts = [];
    lineLen = 0;
    lineQuote = false;
    if (quoting) return false;
    if (recordDelimiter === '\r\n' && !crlf) {
      unsure = true; // a lone LF in a CRLF file is a value's character to csv-parse, not a record's end
      return false;
    }
    fieldStart = true;
    return !unsure;
  };

  const push = (buf: Buffer): Piece[] => {
    const pieces: Piece[] = [];
    let start = 0; // first byte of buf not yet handed out
    let newlines = 0; // LFs in buf[start..pos)
    let pos = 0;
    let nextQuote = csv ? buf.indexOf(QUOTE) : -1;
    while (pos < buf.length) {
      if (nextQuote !== -1 && nextQuote < pos) nextQuote = buf.indexOf(QUOTE, pos);
      const nl = buf.indexOf(LF, pos);
      if (nl === -1) {
        // A partial line: its parts are kept (for the replay) only while it could still be replayed.
        if (csv) {
          lineLen += buf.length - pos;
          if (lineLen <= o.maxLineBytes) {
            lineParts.push(buf.subarray(pos));
            lineQuote ||= nextQuote !== -1;
          } else lineParts = [];
        }
        break;
      }
      const boundary = endLine(buf, pos, nl, nextQuote !== -1 && nextQuote < nl);
      newlines++;
      pos = nl + 1;
      if (boundary && chunkLen + (pos - start) >= o.pieceBytes) {
        pieces.push({ bytes: buf.subarray(start, pos), newlines, last: true });
        chunkLen = 0;
        start = pos;
        newlines = 0;
      }
    }
    if (buf.length > 0) prevCR = buf[buf.length - 1] === CR;
    if (start < buf.length) {
      pieces.push({ bytes: buf.subarray(start), newlines, last: false });
      chunkLen += buf.length - start;
    }
    return pieces;
  };

  return {
    push,
    end: () => ({ bytes: Buffer.alloc(0), newlines: 0, last: true }),
    get recordDelimiter() {
      return recordDelimiter;
    },
  };
}
