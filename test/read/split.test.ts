// The splitter behind parallel parsing: chunks parsed one by one (as the worker pool does) must give exactly
// the items, line numbers and errors of one reader over the whole input. Differential, on generated CSV and
// NDJSON full of the awkward cases, cut into chunks of every size.
import { describe, expect, it } from 'vitest';
import { createSplitter } from '../../src/prepare/split.ts';
import { readCsv } from '../../src/read/csv.ts';
import { readNdjson } from '../../src/read/ndjson.ts';
import type { ReadItem } from '../../src/read/types.ts';

/** A small deterministic PRNG (mulberry32), so a failure can be replayed from its seed. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FIELDS = [
  'plain',
  '',
  '"Joe\'s Pizza, Inc."',
  '"Suite ""A"""',
  '"two\nlines"',
  '37°36\'37.8"N', // a quote inside an unquoted value: text
  '"closed"early', // a quote that closes and then more text
  '""',
  '"""',
  'x'.repeat(150), // overlong once lines are capped at 120 bytes below
  '"unclosed\nfor a while',
  // A CR that is not part of a CRLF is left out (CRLF inside quotes only in CRLF files): the single reader
  // counts it as a line break, as csv-parse does, while chunk line numbers count line feeds only.
  '5555 5555 5555 4444',
];

function csvInput(r: () => number, rows: number, eol: string): Buffer {
  const lines = [['id', 'a', 'b', 'c'].join(',')];
  for (let i = 0; i < rows; i++) {
    const n = r() < 0.1 ? 3 : 4; // some ragged rows
    const f = [`t-${i}`];
    for (let k = 1; k < n; k++) {
      const v = FIELDS[Math.floor(r() * FIELDS.length)] as string;
      f.push(eol === '\r\n' && v === '"two\nlines"' ? '"crlf\r\ninside"' : v);
    }
    lines.push(f.join(','));
    if (r() < 0.05) lines.push(''); // empty lines
  }
  const bom = r() < 0.3 ? '\ufeff' : '';
  return Buffer.from(bom + lines.join(eol) + (r() < 0.5 ? eol : ''));
}

/** The buffer in pieces of random size (1 byte to 300). */
function cut(r: () => number, buf: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at < buf.length; ) {
    const n = 1 + Math.floor(r() * 300);
    out.push(buf.subarray(at, at + n));
    at += n;
  }
  return out;
}

async function* from(parts: Buffer[]): AsyncGenerator<Buffer> {
  for (const p of parts) yield p;
}

type Outcome = { items: ReadItem[]; error?: string };

async function collect(it: AsyncIterable<ReadItem[]>): Promise<Outcome> {
  const items: ReadItem[] = [];
  try {
    for await (const chunk of it) items.push(...chunk);
  } catch (err) {
    return { items, error: (err as Error).message };
  }
  return { items };
}

const MAX_LINE = 120;

/** Parse the input chunk by chunk, as the pool's workers do, with what the main thread hands each one. */
async function chunked(
  format: 'csv' | 'ndjson',
  parts: Buffer[],
  chunkBytes: number,
  columns: string[],
): Promise<Outcome & { chunks: number }> {
  const s = createSplitter({ format, delimiter: ',', maxLineBytes: MAX_LINE, pieceBytes: chunkBytes });
  const chunks: Array<{ firstLine: number; parts: Buffer[]; recordDelimiter?: string }> = [];
  let open: (typeof chunks)[number] | null = null;
  let line = 1;
  for (const p of [...parts.flatMap((b) => s.push(b)), s.end()]) {
    if (!open) {
      open = { firstLine: line, parts: [], recordDelimiter: s.recordDelimiter };
      chunks.push(open);
    }
    open.parts.push(p.bytes);
    line += p.newlines;
    if (p.last) open = null;
  }
  const items: ReadItem[] = [];
  for (const [k, c] of chunks.entries()) {
    const out = await collect(
      format === 'csv'
        ? readCsv(from(c.parts), 'f.csv', {
            delimiter: ',',
            maxLineBytes: MAX_LINE,
            ...(k > 0 ? { columns, firstLine: c.firstLine, recordDelimiter: c.recordDelimiter } : {}),
          })
        : readNdjson(from(c.parts), 'f.csv', MAX_LINE, c.firstLine),
    );
    items.push(...out.items);
    if (out.error) return { items, error: out.error, chunks: chunks.length };
  }
  return { items, chunks: chunks.length };
}

describe('splitting an input for parallel parsing', () => {
  it('CSV: chunks give the same items, lines and errors as one reader (1,200 generated files)', async () => {
    let split = 0;
    for (let seed = 1; seed <= 1200; seed++) {
      const r = rng(seed);
      const eol = seed % 3 === 0 ? '\r\n' : '\n';
      const input = csvInput(r, 5 + Math.floor(r() * 60), eol);
      let columns: string[] = [];
      const whole = await collect(
        readCsv(from(cut(r, input)), 'f.csv', {
          delimiter: ',',
          maxLineBytes: MAX_LINE,
          onHeader: (c) => {
            columns = c;
          },
        }),
      );
      const chunkBytes = 1 + Math.floor(r() * 400);
      const parts = await chunked('csv', cut(r, input), chunkBytes, columns);
      if (parts.chunks > 1) split++;
      expect({ seed, ...parts, chunks: undefined }).toEqual({ seed, ...whole, chunks: undefined });
    }
    // The inputs are hostile on purpose; most of them still split.
    expect(split).toBeGreaterThan(600);
  });

  it('NDJSON: every line feed is a boundary; lines and rejects are the same', async () => {
    for (let seed = 1; seed <= 200; seed++) {
      const r = rng(seed);
      const lines: string[] = [];
      for (let i = 0; i < 40; i++) {
        const k = r();
        lines.push(
          k < 0.1 ? '' : k < 0.2 ? '{bad' : k < 0.25 ? `{"x":"${'y'.repeat(200)}"}` : `{"id":"t-${i}"}`,
        );
      }
      const input = Buffer.from(lines.join(seed % 2 ? '\r\n' : '\n'));
      const whole = await collect(readNdjson(from(cut(r, input)), 'f.csv', MAX_LINE));
      const parts = await chunked('ndjson', cut(r, input), 1 + Math.floor(r() * 200), []);
      expect(parts.chunks).toBeGreaterThan(1);
      expect({ seed, ...parts, chunks: undefined }).toEqual({ seed, ...whole, chunks: undefined });
    }
  });

  it('stops splitting where it cannot be sure: lone CR records, a lone LF in a CRLF file', async () => {
    for (const [input, chunks] of [
      ['id,a\rt-1,x\rt-2,y\r', 1],
      ['id,a\r\nt-1,x\r\nt-2,y\nt-3,z\r\nt-4,w\r\n', 3],
      ['id,a\nt-1,x\nt-2,y\nt-3,z\n', 5],
    ] as const) {
      const parts = await chunked('csv', [Buffer.from(input)], 1, ['id', 'a']);
      expect(parts.chunks).toBe(chunks);
    }
  });
});
