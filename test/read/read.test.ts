// Readers: CSV and NDJSON edge cases, gzip, stdin, format sniffing, csv-spectrum, on real temp files.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { Parser } from 'csv-parse';
import { afterAll, describe, expect, it } from 'vitest';
import { SvcIngestError } from '../../src/errors.ts';
import { everyLengthExpected, readCsv } from '../../src/read/csv.ts';
import { readNdjson } from '../../src/read/ndjson.ts';
import type { InputSpec, ReadOptions } from '../../src/read/open.ts';
import { readCsvHeader, readInput, resolveInputs } from '../../src/read/open.ts';
import type { ParseReject, RawRecord, ReadItem } from '../../src/read/types.ts';
import { ROOT } from '../helpers/cli.ts';

const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-read-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
function file(name: string, content: string | Buffer): string {
  const p = path.join(dir, `${n++}-${name}`);
  writeFileSync(p, content);
  return p;
}

async function readAll(spec: InputSpec, opts: ReadOptions = {}) {
  const records: RawRecord[] = [];
  const rejects: ParseReject[] = [];
  for await (const items of readInput(spec, opts)) {
    for (const it of items)
      if (it.kind === 'record') records.push(it.record);
      else rejects.push(it.reject);
  }
  return { records, rejects };
}
async function readFile(name: string, content: string | Buffer, opts: ReadOptions = {}) {
  const [spec] = await resolveInputs([file(name, content)], {});
  return readAll(spec as InputSpec, opts);
}

describe('CSV', () => {
  it('handles quoted commas, doubled quotes and newlines inside fields, with correct start lines', async () => {
    const { records } = await readFile('q.csv', 'a,b\n"x, y","say ""hi"""\n"multi\nline\nvalue",2\nlast,3\n');
    expect(records.map((r) => [r.line, r.fields])).toEqual([
      [2, { a: 'x, y', b: 'say "hi"' }],
      [3, { a: 'multi\nline\nvalue', b: '2' }],
      [6, { a: 'last', b: '3' }],
    ]);
  });
  it('strips a BOM and reads CRLF, also with CRLF inside quoted fields', async () => {
    const { records } = await readFile('crlf.csv', '\uFEFFid,v\r\n1,"a\r\nb"\r\n\r\n2,c\r\n');
    expect(records.map((r) => [r.line, r.fields])).toEqual([
      [2, { id: '1', v: 'a\r\nb' }],
      [5, { id: '2', v: 'c' }],
    ]);
  });
  it('uses a configurable delimiter', async () => {
    const { records } = await readFile('semi.csv', 'a;b\n1,5;2\n', { delimiter: ';' });
    expect(records[0]?.fields).toEqual({ a: '1,5', b: '2' });
  });
  it('keeps every value a string, leading zeros included', async () => {
    const { records } = await readFile(
      'zeros.csv',
      'iin,paymentNetworkMerchantPostalCode,paymentNetworkMCC\n079271,02134,0742\n',
    );
    expect(records[0]?.fields).toEqual({
      iin: '079271',
      paymentNetworkMerchantPostalCode: '02134',
      paymentNetworkMCC: '0742',
    });
  });
  it('keeps each line through a relaxed quote, a blank line, a multi-line value and a ragged row, in one write', async () => {
    // The records come from csv-parse's push with its line count (no per-record info object).
    const { records, rejects } = await readFile(
      'lines.csv',
      'a,b\n1,2\n"x" y,3\n\n"multi\nline",4\n5\n6,7\n',
    );
    expect(records.map((r) => [r.line, r.fields])).toEqual([
      [2, { a: '1', b: '2' }],
      [3, { a: '"x" y', b: '3' }],
      [5, { a: 'multi\nline', b: '4' }],
      [8, { a: '6', b: '7' }],
    ]);
    expect(rejects.map((r) => [r.line, r.message])).toEqual([
      [7, 'expected 2 fields as in the header, got 1'],
    ]);
  });
  it('turns ragged rows into rejects with their line and goes on', async () => {
    const { records, rejects } = await readFile('ragged.csv', 'a,b\n1,2\n3\n4,5,6\n7,8\n');
    expect(records.map((r) => r.line)).toEqual([2, 5]);
    expect(rejects.map((r) => [r.line, r.message])).toEqual([
      [3, 'expected 2 fields as in the header, got 1'],
      [4, 'expected 2 fields as in the header, got 3'],
    ]);
  });
  it('builds no csv-parse error for a ragged row (everyLengthExpected): csv-parse still has the parts it steers', async () => {
    const relaxed = () => new Parser({ relax_column_count: true, skip_records_with_error: true });
    const parse = async (parser: Parser) => {
      const rows: string[][] = [];
      parser.on('data', (r: string[]) => rows.push(r));
      const ended = new Promise((resolve) => parser.on('end', resolve));
      parser.end('a,b\n1\n2,3,4\n5,6\n');
      await ended;
      return { rows, inconsistent: parser.info.invalid_field_length };
    };
    // csv-parse as it comes: two CsvErrors built (and counted) for the two ragged rows.
    const plain = await parse(relaxed());
    expect(plain.inconsistent).toBe(2);
    // Steered: the same records, none counted inconsistent, so no error was built.
    const steered = relaxed();
    const api = (steered as unknown as { api: { __onRecord: unknown; state: object } }).api;
    expect(typeof api.__onRecord).toBe('function');
    expect(api.state).toHaveProperty('expectedRecordLength');
    everyLengthExpected(steered);
    const s = await parse(steered);
    expect(s.rows).toEqual(plain.rows);
    expect(s.rows).toEqual([['a', 'b'], ['1'], ['2', '3', '4'], ['5', '6']]);
    expect(s.inconsistent).toBe(0);
  });
  it('masks card numbers in the raw text of a reject', async () => {
    const { rejects } = await readFile('pan.csv', 'a,b\n4111111111111111\n');
    expect(rejects[0]?.raw).toBe('411111******1111');
  });
  it('calls onHeader once before any record, and a throwing onHeader stops the read', async () => {
    const seen: string[] = [];
    const { records } = await readFile('h.csv', 'x,y\n1,2\n', {
      onHeader: (c, s) => seen.push(`${c.join('|')}@${path.basename(s)}`),
    });
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatch(/^x\|y@/);
    expect(records).toHaveLength(1);
    await expect(
      readFile('h2.csv', 'x,y\n1,2\n', {
        onHeader: () => {
          throw new SvcIngestError('INPUT_HEADER_MISSING_COLUMN', 'missing z');
        },
      }),
    ).rejects.toMatchObject({ code: 'INPUT_HEADER_MISSING_COLUMN' });
  });
  it('reads just the header with readCsvHeader', async () => {
    const p = file('hdr.csv', 'transactionId,postedAmount\n1,2\n');
    expect(await readCsvHeader({ path: p, format: 'csv', gzip: false }, {})).toEqual([
      'transactionId',
      'postedAmount',
    ]);
  });
  it('builds each record with exactly the header names as keys, whatever characters they hold', async () => {
    // The header's names become the keys of every record (built from a generated object literal): quotes,
    // backslashes, code-like text, line breaks, U+2028, numbers, an empty name and prototype names stay plain keys.
    const names = [
      'id',
      'a"b',
      'back\\slash',
      '"}); process.exit(7); ({"',
      String.fromCharCode(36, 123, 120, 125), // a dollar sign and braces, as a template literal would read them
      'line\nbreak',
      'sep\u2028arator',
      '42',
      '',
      'constructor',
      'toString',
      'hasOwnProperty',
      'é ü 日本',
    ];
    const quoted = names.map((c) => `"${c.replaceAll('"', '""')}"`).join(',');
    const row = names.map((_, i) => `v${i}`).join(',');
    const { records, rejects } = await readFile('names.csv', `${quoted}\n${row}\n${row}\n`);
    expect(rejects).toEqual([]);
    expect(records).toHaveLength(2);
    for (const r of records) {
      const expected: Record<string, unknown> = {};
      for (let i = 0; i < names.length; i++) expected[names[i] as string] = `v${i}`;
      expect(Object.getPrototypeOf(r.fields)).toBe(Object.prototype);
      expect(Object.entries(r.fields)).toEqual(Object.entries(expected));
    }
  });
  it('reads a __proto__ column as any other (an own property) and a header of 300 columns key by key', async () => {
    const proto = await readFile('proto.csv', 'id,__proto__,x\n1,2,3\n');
    const fields = proto.records[0]?.fields as Record<string, unknown>;
    expect(Object.keys(fields)).toEqual(['id', '__proto__', 'x']);
    expect(
      Object.hasOwn(fields, '__proto__') && Object.getOwnPropertyDescriptor(fields, '__proto__')?.value,
    ).toBe('2');
    // A record without a prototype: the column can neither set one nor be dropped.
    expect(Object.getPrototypeOf(fields)).toBe(null);
    const wide = Array.from({ length: 300 }, (_, i) => `c${i}`);
    const { records } = await readFile('wide.csv', `${wide.join(',')}\n${wide.map((_, i) => i).join(',')}\n`);
    expect(Object.keys(records[0]?.fields ?? {})).toEqual(wide);
    expect(records[0]?.fields.c299).toBe('299');
  });
  it('reads csv-spectrum cases as the expected records', async () => {
    const require = createRequire(import.meta.url);
    const root = path.dirname(require.resolve('csv-spectrum'));
    const names = readdirSync(path.join(root, 'csvs')).map((f) => f.replace(/\.csv$/, ''));
    expect(names.length).toBeGreaterThanOrEqual(10);
    for (const name of names) {
      const expected = JSON.parse(readFileSync(path.join(root, 'json', `${name}.json`), 'utf8'));
      const spec: InputSpec = { path: path.join(root, 'csvs', `${name}.csv`), format: 'csv', gzip: false };
      const { records, rejects } = await readAll(spec);
      expect(rejects, name).toEqual([]);
      if (name === 'location_coordinates') {
        // The package's expected JSON for this case is a lone object with another phone number.
        expect(records.map((r) => r.fields['Location Coordinates'])).toEqual([
          expected['Location Coordinates'],
        ]);
        continue;
      }
      expect(
        records.map((r) => r.fields),
        name,
      ).toEqual(expected);
    }
  });
});

describe('NDJSON', () => {
  it('skips blank lines and rejects bad lines and non-objects with their line numbers', async () => {
    const { records, rejects } = await readFile('a.ndjson', '{"a":1}\n\n  \n{bad\n[1,2]\n"s"\n{"b":2}\r\n');
    expect(records.map((r) => [r.line, r.fields])).toEqual([
      [1, { a: 1 }],
      [7, { b: 2 }],
    ]);
    expect(rejects.map((r) => r.line)).toEqual([4, 5, 6]);
    expect(rejects[0]?.message).toMatch(/^not valid JSON/);
    expect(rejects[1]?.message).toBe('expected a JSON object, got an array');
  });
  it('keeps nested objects and reads a last line without newline', async () => {
    const { records } = await readFile('n.jsonl', '{"merchant":{"city":"Chicago"}}\n{"x":1}');
    expect(records.map((r) => r.fields)).toEqual([{ merchant: { city: 'Chicago' } }, { x: 1 }]);
  });
  it('rejects an overlong line without holding it, then goes on', async () => {
    const long = `{"a":"${'x'.repeat(5000)}"}`;
    const { records, rejects } = await readFile('long.ndjson', `{"a":1}\n${long}\n{"a":2}\n`, {
      maxLineBytes: 1000,
    });
    expect(records.map((r) => r.line)).toEqual([1, 3]);
    expect(rejects).toEqual([
      { source: expect.any(String), line: 2, message: 'line longer than 1000 bytes' },
    ]);
  });
  it('stays bounded on a 100 MB line with no newline (streamed, never buffered)', () => {
    // In a Node process of its own: the growth of its resident memory is the reader's alone, whatever the tests
    // before this one left in the worker's heap.
    const code = `import { Readable } from 'node:stream';
      import { readInput } from ${JSON.stringify(path.join(ROOT, 'src/read/open.ts'))};
      const chunk = Buffer.alloc(1024 * 1024, 0x78);
      let sent = 0;
      const stdin = new Readable({
        read() {
          if (sent === 0) this.push('{"a":1}\\n');
          if (sent++ < 100) this.push(chunk);
          else this.push(null);
        },
      });
      const before = process.memoryUsage().rss;
      let records = 0;
      const rejects = [];
      // Without a final line break: read as a file's last line is (a stream would end as cut short).
      const spec = { path: '-', format: 'ndjson', gzip: false, allowUnterminated: true };
      for await (const items of readInput(spec, { stdin }))
        for (const it of items)
          if (it.kind === 'record') records++;
          else rejects.push([it.reject.line, it.reject.message]);
      const grown = process.memoryUsage().rss - before;
      process.stdout.write(JSON.stringify({ records, rejects, grown }));`;
    const res = spawnSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8' });
    expect(res.status, res.stderr).toBe(0);
    const { records, rejects, grown } = JSON.parse(res.stdout) as {
      records: number;
      rejects: [number, string][];
      grown: number;
    };
    expect(records).toBe(1);
    expect(rejects).toEqual([[2, 'line longer than 1048576 bytes']]);
    expect(grown).toBeLessThan(60 * 1024 * 1024);
  });
});

describe('inputs', () => {
  it('resolves formats from extensions, gzip from extension or magic bytes', async () => {
    const a = file('x.csv', 'a\n1\n');
    const b = file('x.jsonl.gz', gzipSync('{"a":1}\n'));
    const c = file('y.ndjson', gzipSync('{"a":1}\n'));
    expect(await resolveInputs([a, b, c], {})).toEqual([
      { path: a, format: 'csv', gzip: false },
      { path: b, format: 'ndjson', gzip: true },
      { path: c, format: 'ndjson', gzip: true },
    ]);
  });
  it('reads .gz files', async () => {
    const { records } = await readFile('z.csv.gz', gzipSync('a,b\n1,2\n'));
    expect(records[0]).toMatchObject({ line: 2, fields: { a: '1', b: '2' } });
  });
  it('names unreadable files and unknown formats', async () => {
    await expect(resolveInputs([path.join(dir, 'nope.csv')], {})).rejects.toMatchObject({
      code: 'INPUT_UNREADABLE',
    });
    await expect(resolveInputs([dir], {})).rejects.toMatchObject({ code: 'INPUT_UNREADABLE' });
    const t = file('x.txt', 'a\n');
    await expect(resolveInputs([t], {})).rejects.toMatchObject({ code: 'INPUT_FORMAT_UNKNOWN' });
    expect(await resolveInputs([t], { format: 'csv' })).toEqual([{ path: t, format: 'csv', gzip: false }]);
    await expect(resolveInputs(['-', '-'], {})).rejects.toMatchObject({ code: 'USAGE_INVALID' });
  });
  it('reads stdin (a Readable) and sniffs its format and gzip', async () => {
    const [spec] = await resolveInputs([], {});
    expect(spec).toMatchObject({ path: '-', sniff: true });
    const nd = await readAll(spec as InputSpec, {
      stdin: Readable.from([Buffer.from('{"a":1}\n{"a":2}\n')]),
    });
    expect(nd.records.map((r) => [r.source, r.line, r.fields])).toEqual([
      ['stdin', 1, { a: 1 }],
      ['stdin', 2, { a: 2 }],
    ]);
    const csv = await readAll(spec as InputSpec, { stdin: Readable.from([gzipSync('a,b\n1,2\n')]) });
    expect(csv.records.map((r) => r.fields)).toEqual([{ a: '1', b: '2' }]);
    await expect(
      readAll(spec as InputSpec, { stdin: Readable.from([Buffer.from('[1,2]')]) }),
    ).rejects.toMatchObject({
      code: 'INPUT_FORMAT_UNKNOWN',
    });
    const forced = await readAll(
      { path: '-', format: 'csv', gzip: false },
      { stdin: Readable.from(['{x}\n1\n']) },
    );
    expect(forced.records.map((r) => r.fields)).toEqual([{ '{x}': '1' }]);
  });
});

describe('what readers report never holds a card number; invalid UTF-8 is flagged per record', () => {
  const pan = '4111111111111111';
  async function* from(parts: Buffer[]): AsyncGenerator<Buffer> {
    for (const p of parts) yield p;
  }
  /** The bytes cut every `size` bytes, so multi-byte characters straddle the pieces. */
  function cut(bytes: Buffer, size: number): Buffer[] {
    const out: Buffer[] = [];
    for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size));
    return out;
  }
  async function items(it: AsyncIterable<ReadItem[]>) {
    const records: RawRecord[] = [];
    const rejects: ParseReject[] = [];
    for await (const chunk of it)
      for (const x of chunk)
        if (x.kind === 'record') records.push(x.record);
        else rejects.push(x.reject);
    return { records, rejects };
  }

  it('JSON parse errors say what and where, never quote the line', async () => {
    // (A card number glued to other digits is one longer number, not a card number: written apart here.)
    const lines = [`@${pan}`, `{"a":"${pan}`, `${pan} 222333 x`, `123456789 ${pan}x`, 'abc', `{"a":1,}`];
    const { rejects } = await readFile('parse.ndjson', `${lines.join('\n')}\n`);
    expect(rejects).toHaveLength(lines.length);
    for (const r of rejects) {
      expect(r.message).toMatch(/^not valid JSON: /);
      expect(r.message).not.toMatch(/"|\d{5}/);
      expect(r.raw ?? '').not.toContain(pan);
    }
    expect(rejects[1]?.message).toBe('not valid JSON: Unterminated string in JSON at character 23');
    expect(rejects[0]?.message).toBe("not valid JSON: Unexpected token '@'");
  });

  it('a repeated CSV column is named by position, its name masked', async () => {
    const err = await readFile('dup.csv', `id,${pan},x,${pan}\n1,2,3,4\n`).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SvcIngestError);
    const message = (err as Error).message;
    expect(message).toMatch(/header columns 2 and 4 have the same name "411111\*{6}1111"/);
    expect(message).not.toContain(pan);
  });

  it('a CSV header over the line limit (1 MiB) is an error naming the limit, never a reject with the next line as the header', async () => {
    // Before: the header became a reject and `1,1` the header, failing as "columns 1 and 2 have the same name".
    const header = `${'h'.repeat(1024 * 1024)},b\n`;
    for (const [name, content] of [
      ['big-header.csv', `${header}1,1\n2,2\n`],
      ['big-header-crlf.csv', `\r\n${header.replace('\n', '\r\n')}1,1\r\n`],
      ['only-header.csv', header.slice(0, -1)],
    ] as const) {
      const err = await readFile(name, content).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SvcIngestError);
      expect((err as SvcIngestError).code).toBe('INPUT_PARSE');
      expect((err as Error).message).toMatch(
        /: the header \(line [12]\) is longer than 1048576 bytes, the longest line read; no record can be read without it$/,
      );
    }
    const [spec] = await resolveInputs([file('big-header-only.csv', `${header}1,1\n`)], {});
    await expect(readCsvHeader(spec as InputSpec, {})).rejects.toThrow(
      /the header \(line 1\) is longer than 1048576 bytes/,
    );
    // A long line after the header stays a reject, as before.
    const { records, rejects } = await readFile('big-row.csv', `a,b\n${'x'.repeat(1100)},1\n2,2\n`, {
      maxLineBytes: 1000,
    });
    expect(records.map((r) => [r.line, r.fields])).toEqual([[3, { a: '2', b: '2' }]]);
    expect(rejects).toEqual([
      { source: expect.any(String), line: 2, message: 'line longer than 1000 bytes' },
    ]);
  });

  it('flags the one record with bytes that are not UTF-8, wherever the reads cut multi-byte characters', async () => {
    const good = (i: number) => `${i},Café Lumière ${i},naïve\n`;
    const head = Buffer.from('id,name,note\n');
    const rows: Buffer[] = [head];
    for (let i = 1; i <= 40; i++) {
      if (i === 17) rows.push(Buffer.from('17,Caf'), Buffer.from([0xe9]), Buffer.from(' Lumi\u00e8re,ok\n'));
      else if (i === 23)
        rows.push(Buffer.from(`23,"two\nlines","x`), Buffer.from([0xff, 0xfe]), Buffer.from('"\n'));
      else if (i === 31) rows.push(Buffer.from('31,literal \ufffd is text,ok\n'));
      else rows.push(Buffer.from(good(i)));
    }
    const csv = Buffer.concat(rows);
    for (const size of [1, 2, 3, 7, 64, 1 << 16]) {
      const { records } = await items(
        readCsv(from(cut(csv, size)), 'u.csv', { delimiter: ',', maxLineBytes: 4096 }),
      );
      expect(records).toHaveLength(40);
      const flagged = records.filter((r) => r.invalidUtf8).map((r) => r.fields.id);
      expect(flagged, `reads of ${size} bytes`).toEqual(['17', '23']);
      expect(records.find((r) => r.fields.id === '17')?.fields.name).toBe('Caf\ufffd Lumière');
    }
    const nd = Buffer.concat(
      Array.from({ length: 40 }, (_, k) =>
        k === 16
          ? Buffer.concat([Buffer.from('{"id":17,"name":"Caf'), Buffer.from([0xe9]), Buffer.from('"}\n')])
          : Buffer.from(
              `${JSON.stringify({ id: k + 1, name: `Café ${k}`, lit: k === 30 ? '\ufffd' : 'x' })}\n`,
            ),
      ),
    );
    for (const size of [1, 2, 3, 7, 64, 1 << 16]) {
      const { records } = await items(readNdjson(from(cut(nd, size)), 'u.ndjson', 4096));
      expect(records).toHaveLength(40);
      expect(
        records.filter((r) => r.invalidUtf8).map((r) => r.fields.id),
        `reads of ${size} bytes`,
      ).toEqual([17]);
    }
  });
});
