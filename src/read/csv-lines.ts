// The CSV reader's physical lines: whole lines go to the parser; an overlong line is cut out as it streams past.
import { isUtf8 } from 'node:buffer';

const NEWLINE = Buffer.from('\n');
const CRLF = Buffer.from('\r\n');

/** Where whole lines go (csv-parse's stream). */
export interface LineSink {
  write(buf: Buffer): unknown;
}

/**
 * Physical lines longer than maxLineBytes never reach the parser: complete lines are fed, the partial last line
 * is carried (at most maxLineBytes), and an overlong one is dropped as it streams past, leaving its newline (so
 * line numbers hold) and its number in `held`. Line numbers are relative to the first byte fed (line 1).
 * @example const lines = new LineCutter(parser, 1 << 20); lines.feed(chunk); lines.end(); lines.held // [7]
 */
export class LineCutter {
  /** Lines dropped as overlong (ascending); the reader reports them in line order among the records. */
  readonly held: number[] = [];
  /** Lines (ascending) whose bytes are not valid UTF-8. */
  readonly badUtf8: number[] = [];
  private readonly sink: LineSink;
  private readonly maxLineBytes: number;
  private carry: Buffer[] = [];
  private carryLen = 0;
  private dropping = false;
  /** The last byte seen of the line being dropped is a CR. */
  private droppedCR = false;
  private newlines = 0;

  constructor(sink: LineSink, maxLineBytes: number) {
    this.sink = sink;
    this.maxLineBytes = maxLineBytes;
  }

  /** Feed one chunk of the input: its whole lines (with any carry) go on, its partial last line is carried. */
  feed(chunk: Buffer): void {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(10, start);
      const end = nl === -1 ? chunk.length : nl;
      if (!this.dropping && this.carryLen + (end - start) > this.maxLineBytes) this.startDropping();
      if (nl === -1) {
        this.keepPartial(chunk, start, end);
        return;
      }
      start = this.dropping ? this.endDropped(chunk, start, nl) : this.feedWhole(chunk, start, nl);
    }
  }

  /**
   * The input ended: the carried last line (no newline) goes on, or is counted overlong. With `hold` (a stream whose
   * last record must be terminated) it is kept back instead: its line and text are returned (text undefined when
   * it was overlong), and nothing of it reaches the parser.
   * @example lines.end('hold') // { line: 20001, text: '…,3386' }, or undefined when the input ended with a newline
   */
  end(partial: 'feed' | 'hold' = 'feed'): { line: number; text?: string } | undefined {
    const line = this.newlines + 1;
    if (partial === 'hold' && (this.dropping || this.carryLen > 0)) {
      if (this.dropping) return { line };
      return { line, text: Buffer.concat(this.carry, this.carryLen).toString('utf8') };
    }
    if (this.dropping) this.held.push(line);
    else if (this.carryLen > 0) this.write(Buffer.concat(this.carry, this.carryLen), line);
    return undefined;
  }

  private startDropping(): void {
    this.dropping = true;
    this.carry = [];
    this.carryLen = 0;
  }

  /** The line goes on past this chunk: carry it, or remember how the dropped one ends so far. */
  private keepPartial(chunk: Buffer, start: number, end: number): void {
    if (end <= start) return;
    if (this.dropping) this.droppedCR = chunk[end - 1] === 13;
    else {
      this.carry.push(chunk.subarray(start));
      this.carryLen += end - start;
    }
  }

  /** The dropped line ends at `nl`: the parser gets its line ending only. Returns where the next line starts. */
  private endDropped(chunk: Buffer, start: number, nl: number): number {
    // The dropped line's own line ending, so a CRLF file's parser still sees a record delimiter there.
    this.sink.write((nl > start ? chunk[nl - 1] === 13 : this.droppedCR) ? CRLF : NEWLINE);
    this.held.push(this.newlines + 1);
    this.newlines++;
    this.dropping = false;
    return nl + 1;
  }

  /** Feed the carry and every complete line from `start` up to the chunk's last newline, stopping before a later
   *  overlong line. Returns where the next line starts. */
  private feedWhole(chunk: Buffer, start: number, nl: number): number {
    let last = chunk.lastIndexOf(10);
    let probe = nl + 1;
    while (probe <= last) {
      const next = chunk.indexOf(10, probe);
      if (next - probe > this.maxLineBytes) {
        last = probe - 1;
        break;
      }
      probe = next + 1;
    }
    const block = chunk.subarray(start, last + 1);
    if (this.carryLen > 0) {
      this.carry.push(block);
      this.write(Buffer.concat(this.carry, this.carryLen + block.length), this.newlines + 1);
      this.carry = [];
      this.carryLen = 0;
    } else this.write(block, this.newlines + 1);
    for (let i = chunk.indexOf(10, start); i !== -1 && i <= last; i = chunk.indexOf(10, i + 1))
      this.newlines++;
    return last + 1;
  }

  /** Feed the parser whole lines, the first being line `first`; one UTF-8 check each, per line if it fails. */
  private write(buf: Buffer, first: number): void {
    if (!isUtf8(buf)) {
      let from = 0;
      for (let l = first; from <= buf.length; l++) {
        let nl = buf.indexOf(10, from);
        if (nl === -1) nl = buf.length;
        if (!isUtf8(buf.subarray(from, nl))) this.badUtf8.push(l);
        from = nl + 1;
      }
    }
    this.sink.write(buf);
  }
}
