// Splits the bytes of a state file (ledger, rejects) into lines of bounded length: a line longer than the
// limit is reported and skipped without ever being held in memory whole.

/** Longest ledger or rejects line that is read (1 MiB); a longer one is counted bad and skipped. */
export const MAX_STATE_LINE_BYTES = 1 << 20;

/**
 * One line: its text (without LF or a CR before it), or null for a line over the limit; the file offset
 * of its first byte and its length in bytes (without the line ending).
 * @example { text: '{"status":"acked",…}', offset: 0, bytes: 112 }
 */
export interface SplitLine {
  text: string | null;
  offset: number;
  bytes: number;
}

export interface LineSplitter {
  /** Split the next chunk; complete lines go to `emit`. */
  push(chunk: Buffer, emit: (line: SplitLine) => void): void;
  /** The last line when the file does not end in a newline. */
  end(emit: (line: SplitLine) => void): void;
}

/**
 * A line splitter that keeps at most `maxBytes` of an unfinished line.
 * @example const s = createLineSplitter(); for await (const c of stream) s.push(c, onLine); s.end(onLine)
 */
export function createLineSplitter(maxBytes = MAX_STATE_LINE_BYTES): LineSplitter {
  let carry: Buffer[] = [];
  let carried = 0;
  /** The current line is over the limit: its bytes are dropped until its newline. */
  let skipping = false;
  /** File offset of the current line's first byte, and of the next chunk's first byte. */
  let lineStart = 0;
  let chunkStart = 0;

  const finish = (tail: Buffer, emit: (line: SplitLine) => void): void => {
    const total = carried + tail.length;
    if (skipping || total > maxBytes) {
      emit({ text: null, offset: lineStart, bytes: total });
    } else {
      const whole = carried > 0 ? Buffer.concat([...carry, tail], total) : tail;
      const end = whole.length > 0 && whole[whole.length - 1] === 13 ? whole.length - 1 : whole.length;
      emit({ text: whole.toString('utf8', 0, end), offset: lineStart, bytes: end });
    }
    carry = [];
    carried = 0;
    skipping = false;
  };

  return {
    push(chunk, emit) {
      let start = 0;
      for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
        finish(chunk.subarray(start, nl), emit);
        start = nl + 1;
        lineStart = chunkStart + start;
      }
      if (start < chunk.length && !skipping) {
        const rest = chunk.subarray(start);
        if (carried + rest.length > maxBytes) {
          skipping = true;
          carry = [];
        } else {
          // A copy: the stream may reuse the chunk's memory.
          carry.push(Buffer.from(rest));
        }
        carried += rest.length;
      } else if (skipping) {
        carried += chunk.length - start;
      }
      chunkStart += chunk.length;
    },
    end(emit) {
      if (carried > 0 || skipping) finish(Buffer.alloc(0), emit);
    },
  };
}
