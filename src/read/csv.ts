// CSV reader: csv-parse streaming (values stay strings), header row, ragged rows and bad quoting as rejects.

import type { CsvError, InfoRecord } from 'csv-parse';
import { parse } from 'csv-parse';
import { SvcIngestError } from '../errors.ts';
import { maskCardNumbers } from '../mask.ts';
import type { ReadItem, RecordChunks } from './types.ts';

/** Options of readCsv. */
export interface CsvOptions {
  delimiter: string;
  maxLineBytes: number;
  onHeader?: (columns: string[], source: string) => void;
  /** Stop after the header (readCsvHeader). */
  headerOnly?: boolean;
}

type Pending = { values: string[]; lines: number } | { error: CsvError };

/** The raw text of a rejected piece, masked before it is cut so no card number half survives. */
export function rejectText(text: string): string {
  const masked = maskCardNumbers(text.length > 400 ? text.slice(0, 400) : text);
  return masked.length > 200 ? `${masked.slice(0, 200)}…` : masked;
}

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
  const pending: Pending[] = [];
  let failure: Error | undefined;
  const parser = parse({
    bom: true,
    delimiter: opts.delimiter,
    // Ragged rows are let through and turned into rejects here, so one bad row never aborts the file.
    relax_column_count: true,
    // A quote inside an unquoted value (37°36'37.8"N) is kept as text rather than failing the row.
    relax_quotes: true,
    skip_empty_lines: true,
    skip_records_with_error: true,
    max_record_size: opts.maxLineBytes,
    on_record: (values: string[], info: InfoRecord) => {
      pending.push({ values, lines: info.lines });
      return null;
    },
    on_skip: (err: CsvError | undefined) => {
      if (err) pending.push({ error: err });
    },
  });
  parser.on('error', (err) => {
    failure = err;
  });
  parser.resume();
  let columns: string[] | undefined;
  // csv-parse counts each CR and LF inside a quoted value as a line; this is how far it is ahead.
  let overcount = 0;
  const drain = (): ReadItem[] => {
    const items: ReadItem[] = [];
    for (let k = 0; k < pending.length; k++) {
      const p = pending[k] as Pending;
      if ('error' in p) {
        const line = typeof p.error.lines === 'number' ? p.error.lines - overcount : 0;
        items.push({
          kind: 'reject',
          reject: { source, line, message: `CSV: ${p.error.message.replace(/ at line \d+/, '')}` },
        });
        continue;
      }
      const { values } = p;
      const breaks = countBreaks(values);
      const line = p.lines - overcount - breaks.chars;
      overcount += breaks.chars - breaks.lines;
      if (columns === undefined) {
        const seen = new Set<string>();
        for (const c of values) {
          if (seen.has(c)) {
            throw new SvcIngestError(
              'INPUT_PARSE',
              `${source}: column ${JSON.stringify(c)} appears twice in the header`,
              {
                source,
                line,
              },
            );
          }
          seen.add(c);
        }
        columns = values;
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
      const fields: Record<string, unknown> = {};
      for (let i = 0; i < values.length; i++) fields[columns[i] as string] = values[i];
      items.push({ kind: 'record', record: { source, line, fields } });
    }
    pending.length = 0;
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
  for await (const chunk of bytes) {
    parser.write(chunk);
    check();
    const items = drain();
    if (opts.headerOnly && columns !== undefined) return;
    if (items.length > 0) yield items;
  }
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
  const items = drain();
  if (items.length > 0) yield items;
}
