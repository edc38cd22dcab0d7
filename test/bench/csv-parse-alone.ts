// An anchor of `make bench` (anchors.ts): csv-parse alone over a file, with the reader's options (src/read/csv.ts),
// records counted and dropped. What parsing costs before svc-ingest does anything with a row.
// Usage: node test/bench/csv-parse-alone.ts FILE  (prints {"rows":N})
import { createReadStream } from 'node:fs';
import { parse } from 'csv-parse';
import { READER } from './reader-options.ts';

let rows = -1; // the header
const parser = createReadStream(process.argv[2] as string, { highWaterMark: 1 << 16 }).pipe(parse(READER));
for await (const _ of parser) rows++;
process.stdout.write(`${JSON.stringify({ rows })}\n`);
