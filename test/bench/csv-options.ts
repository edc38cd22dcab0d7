// What csv-parse's options cost on one thread: parses a bench CSV with the reader's options and with fewer, and
// reports CPU per row. Input for the csv-parse decisions of issue 14 (csv-parse stays; which options pay).
// Usage: node test/bench/csv-options.ts [file] [--runs 3]
import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { type Options, parse } from 'csv-parse';
import { ROOT } from './measure.ts';
import { READER } from './reader-options.ts';
import { median } from './scenarios.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { runs: { type: 'string', default: '3' } },
});
const file = positionals[0] ?? join(ROOT, 'test/bench/.data/canonical-1M.csv');

const VARIANTS: Array<[string, Options, boolean]> = [
  ['reader options + on_record(record, info)', READER, true],
  ['reader options, records as stream data (no on_record)', READER, false],
  ['no relax/skip options, records as stream data', { bom: true, delimiter: ',' }, false],
];

async function once(opts: Options, onRecord: boolean): Promise<{ cpuMs: number; rows: number }> {
  let rows = 0;
  let lines = 0;
  const parser = parse({
    ...opts,
    ...(onRecord
      ? {
          on_record: (values: string[], info: { lines: number }) => {
            lines += info.lines > 0 ? 1 : 0;
            rows += values.length > 0 ? 1 : 0;
            return null;
          },
        }
      : {}),
  });
  const c0 = process.cpuUsage();
  const done = new Promise<void>((resolve, reject) => {
    parser.on('data', () => {
      rows++;
    });
    parser.on('end', resolve);
    parser.on('error', reject);
  });
  createReadStream(file, { highWaterMark: 1 << 16 }).pipe(parser);
  await done;
  const c = process.cpuUsage(c0);
  return { cpuMs: (c.user + c.system) / 1000, rows: rows + (lines > rows ? 0 : 0) };
}

for (const [name, opts, onRecord] of VARIANTS) {
  const us: number[] = [];
  let rows = 0;
  for (let r = 0; r < Number(values.runs); r++) {
    const x = await once(opts, onRecord);
    rows = x.rows;
    us.push((x.cpuMs * 1000) / x.rows);
  }
  process.stdout.write(
    `${name.padEnd(56)} ${median(us).toFixed(2)} µs CPU a row (${rows} rows, runs ${us.map((u) => u.toFixed(2)).join('/')})\n`,
  );
}
