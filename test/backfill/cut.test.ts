// Backfill partitions, differential: a file cut into byte ranges (cutFile) and read range by range (readRange) must
// give exactly the records, line numbers and rejects of one reader over the whole file, on real files full of the
// awkward cases (quoted line breaks, doubled quotes, CRLF, BOM, ragged rows, overlong lines), at many sizes.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { cutFile } from '../../src/backfill/cut.ts';
import { type InputSpec, readCsvHeader, readInput } from '../../src/read/open.ts';
import { readRange } from '../../src/read/range.ts';
import type { ReadItem } from '../../src/read/types.ts';

const dir = mkdtempSync(join(tmpdir(), 'svc-cut-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const MAX_LINE = 120;

/** xorshift32: deterministic, so a failing seed can be replayed. */
function rng(seed: number): () => number {
  let x = seed * 2654435761 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 4294967296;
  };
}

const VALUES = [
  'plain',
  '',
  '"a, b"',
  '"say ""hi"""',
  '"line one\nline two"',
  'inch"es', // a quote inside an unquoted value is text
  '"x"y',
  '"""',
  'z'.repeat(140), // longer than MAX_LINE
  '4111 1111 1111 1111',
];

function csvFile(r: () => number, rows: number, eol: string): string {
  const out = ['id,a,b'];
  for (let i = 0; i < rows; i++) {
    const n = r() < 0.08 ? 2 : 3;
    const f = [`t-${i}`];
    for (let k = 1; k < n; k++) {
      const v = VALUES[Math.floor(r() * VALUES.length)] as string;
      f.push(eol === '\r\n' ? v.replace('\n', '\r\n') : v);
    }
    out.push(f.join(','));
    if (r() < 0.05) out.push('');
  }
  return (r() < 0.3 ? '\ufeff' : '') + out.join(eol) + (r() < 0.5 ? eol : '');
}

type Outcome = { items: ReadItem[]; error?: string };

async function collect(chunks: AsyncIterable<ReadItem[]>, into: ReadItem[] = []): Promise<Outcome> {
  try {
    for await (const c of chunks) into.push(...c);
  } catch (err) {
    return { items: into, error: (err as Error).message };
  }
  return { items: into };
}

async function whole(spec: InputSpec): Promise<Outcome> {
  return collect(readInput(spec, { maxLineBytes: MAX_LINE }));
}

async function ranged(spec: InputSpec, partitionBytes: number): Promise<Outcome & { n: number }> {
  const cuts = await cutFile(spec, { delimiter: ',', maxLineBytes: MAX_LINE, partitionBytes });
  // Contiguous, non-empty, covering the file.
  let at = 0;
  for (const p of cuts.partitions) {
    expect(p.start).toBe(at);
    expect(p.end).toBeGreaterThan(p.start);
    at = p.end;
  }
  expect(at).toBe(cuts.size);
  const columns = spec.format === 'csv' ? await readCsvHeader(spec, {}) : undefined;
  const items: ReadItem[] = [];
  for (const p of cuts.partitions) {
    const out = await collect(
      readRange(
        { ...spec, ...p, columns, recordDelimiter: cuts.recordDelimiter },
        { maxLineBytes: MAX_LINE, readBytes: 64 },
      ),
      items,
    );
    if (out.error) return { ...out, n: cuts.partitions.length };
  }
  return { items, n: cuts.partitions.length };
}

describe('backfill partitions', () => {
  it('CSV: read range by range equals one reader over the file (200 generated files, many partition sizes)', async () => {
    let split = 0;
    for (let seed = 1; seed <= 200; seed++) {
      const r = rng(seed);
      const eol = seed % 3 === 0 ? '\r\n' : '\n';
      const path = join(dir, `f${seed}.csv`);
      writeFileSync(path, csvFile(r, 10 + Math.floor(r() * 50), eol));
      const spec: InputSpec = { path, format: 'csv', gzip: false };
      const expected = await whole(spec);
      const got = await ranged(spec, 1 + Math.floor(r() * 500));
      if (got.n > 1) split++;
      expect({ seed, items: got.items, error: got.error }).toEqual({
        seed,
        ...expected,
        error: expected.error,
      });
    }
    expect(split).toBeGreaterThan(130);
  });

  it('NDJSON: the same, with every line feed a boundary', async () => {
    for (let seed = 1; seed <= 60; seed++) {
      const r = rng(seed);
      const lines: string[] = [];
      for (let i = 0; i < 50; i++) {
        const k = r();
        lines.push(
          k < 0.1 ? '' : k < 0.2 ? '{oops' : k < 0.25 ? `{"x":"${'y'.repeat(150)}"}` : `{"id":"t-${i}"}`,
        );
      }
      const path = join(dir, `n${seed}.ndjson`);
      writeFileSync(path, lines.join(seed % 2 ? '\r\n' : '\n'));
      const spec: InputSpec = { path, format: 'ndjson', gzip: false };
      const got = await ranged(spec, 1 + Math.floor(r() * 300));
      expect(got.n).toBeGreaterThan(1);
      expect({ seed, items: got.items }).toEqual({ seed, items: (await whole(spec)).items });
    }
  });

  it('records the first line of each partition (line numbers of a rerun stay right)', async () => {
    const path = join(dir, 'lines.csv');
    writeFileSync(path, 'id,a\nt-1,"two\nlines"\nt-2,x\nt-3,y\nt-4,z\n');
    const cuts = await cutFile(
      { path, format: 'csv', gzip: false },
      { delimiter: ',', maxLineBytes: 1000, partitionBytes: 1 },
    );
    expect(cuts.partitions.map((p) => p.firstLine)).toEqual([1, 2, 4, 5, 6]);
    expect(cuts.recordDelimiter).toBe('\n');
  });

  it('a gzipped file is one partition, read whole; an empty file has none', async () => {
    const body = 'id,a\nt-1,x\nt-2,y\n';
    const path = join(dir, 'z.csv.gz');
    writeFileSync(path, gzipSync(body));
    const spec: InputSpec = { path, format: 'csv', gzip: true };
    const cuts = await cutFile(spec, { delimiter: ',', maxLineBytes: 1000, partitionBytes: 1 });
    expect(cuts.partitions).toEqual([{ start: 0, end: cuts.size, firstLine: 1 }]);
    const got = await collect(readRange({ ...spec, ...cuts.partitions[0]! }));
    expect(
      got.items.map((i) => (i.kind === 'record' ? [i.record.line, i.record.fields.id] : i.kind)),
    ).toEqual([
      [2, 't-1'],
      [3, 't-2'],
    ]);
    expect(() => readRange({ ...spec, start: 5, end: cuts.size, firstLine: 2 })).toThrow(
      /gzipped file can only be read whole/,
    );
    const empty = join(dir, 'empty.csv');
    writeFileSync(empty, '');
    expect(
      (
        await cutFile(
          { path: empty, format: 'csv', gzip: false },
          { delimiter: ',', maxLineBytes: 1000, partitionBytes: 1 },
        )
      ).partitions,
    ).toEqual([]);
  });

  it('an unreadable range is one INPUT_UNREADABLE error', async () => {
    const got = await collect(
      readRange({
        path: join(dir, 'missing.csv'),
        format: 'csv',
        gzip: false,
        start: 10,
        end: 20,
        firstLine: 3,
        columns: ['id'],
      }),
    );
    expect(got.error).toMatch(/cannot read .*missing\.csv: no such file/);
  });
});
