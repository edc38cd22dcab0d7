// Which customers to reconcile: ids given, read from a list file (one a line, or one column of a CSV / key of
// an NDJSON file), or every sourceCustomerId of an export read through its mapping profile. Deduplicated.

import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { SvcIngestError } from '../errors.ts';
import { cliIo } from '../io.ts';
import { checkRequiredColumns } from '../map/columns.ts';
import { loadProfile } from '../map/profile.ts';
import type { InputFormat } from '../model/input.ts';
import { prepareInput } from '../prepare/prepare.ts';
import { readInput, resolveInputs } from '../read/open.ts';

/**
 * Where the customers come from.
 * @example { customers: ['cust-1'], lists: ['ids.txt'], exports: ['exports/a.csv'], mapping: 'northwind-csv' }
 */
export interface CustomerSources {
  customers?: string[];
  /**
   * Files of ids: a .csv / .ndjson / .jsonl file (optionally .gz; standard input with `format`) is a table whose
   * `column` holds the ids; any other file (or standard input) holds one id a line, blank lines and `#` comments
   * skipped.
   */
  lists?: string[];
  /** Column (CSV header) or key (NDJSON) of the tables that holds the ids (default sourceCustomerId). */
  column?: string;
  /** Exports whose valid records' sourceCustomerId are taken, read through `mapping`. */
  exports?: string[];
  mapping?: string;
  format?: InputFormat;
  delimiter?: string;
  stdin?: NodeJS.ReadableStream;
  /** Also keep every valid record's (transactionId, sourceCustomerId) of the exports (reconcile by transaction). */
  keepTransactions?: boolean;
}

/** A transaction of an export and its customer. */
export interface ExportTransaction {
  transactionId: string;
  sourceCustomerId: string;
}

/**
 * What one export gave.
 * @example { source: 'exports/a.csv', records: 120, valid: 118, rejected: 2, customers: 37 }
 */
export interface ExportCustomers {
  source: string;
  records: number;
  valid: number;
  rejected: number;
  /** Distinct customers of this export's valid records. */
  customers: number;
}

/** The column (or NDJSON key) a table of customers is read from unless `column` says otherwise. */
export const DEFAULT_COLUMN = 'sourceCustomerId';

/** A list file read as a table: named .csv, .ndjson or .jsonl (optionally .gz), or standard input with a format. */
function isTable(file: string, format: InputFormat | undefined): boolean {
  return file === '-' ? format !== undefined : /\.(csv|ndjson|jsonl)(\.gz)?$/i.test(file);
}

/**
 * The customers of all sources, each once, in the order first met (ids, then lists, then exports).
 * @example const { customers } = await collectCustomers({ lists: ['ids.csv'], column: 'customer' })
 */
export async function collectCustomers(
  s: CustomerSources,
): Promise<{ customers: string[]; exports: ExportCustomers[]; transactions: ExportTransaction[] }> {
  const found = new Set<string>();
  const add = (v: unknown): boolean => {
    const id = typeof v === 'string' ? v.trim() : typeof v === 'number' ? String(v) : '';
    if (id === '' || found.has(id)) return false;
    found.add(id);
    return true;
  };
  for (const c of s.customers ?? []) add(c);
  if (s.column !== undefined && (s.lists ?? []).length === 0) {
    throw new SvcIngestError(
      'USAGE_INVALID',
      '--column names the column of --customers-from tables: give one',
    );
  }
  if (
    (s.lists ?? []).filter((f) => f === '-').length + (s.exports ?? []).filter((f) => f === '-').length >
    1
  ) {
    throw new SvcIngestError('USAGE_INVALID', 'standard input (-) can be read only once');
  }
  for (const file of s.lists ?? []) {
    if (isTable(file, s.format)) await readIdColumn(file, s.column ?? DEFAULT_COLUMN, s, add);
    else await readIdLines(file, s.stdin, add);
  }
  const exports: ExportCustomers[] = [];
  const transactions: ExportTransaction[] = [];
  if ((s.exports ?? []).length > 0) {
    const profile = await loadProfile(s.mapping);
    const specs = (await resolveInputs(s.exports ?? [], { format: s.format })).map((spec) =>
      spec.sniff && profile.format ? { ...spec, format: profile.format, sniff: false } : spec,
    );
    const delimiter = s.delimiter ?? profile.delimiter;
    for (const spec of specs) {
      const e: ExportCustomers = {
        source: spec.path === '-' ? 'stdin' : spec.path,
        records: 0,
        valid: 0,
        rejected: 0,
        customers: 0,
      };
      const mine = new Set<string>();
      const opts = {
        ...(delimiter ? { delimiter } : {}),
        ...(s.stdin ? { stdin: s.stdin } : {}),
        // A header without the profile's required columns is an error, as for send, not a file of rejects.
        onHeader: (columns: string[], source: string) => checkRequiredColumns(profile, columns, source),
      };
      for await (const items of prepareInput(spec, profile, opts)) {
        for (const item of items) {
          e.records++;
          if (item.kind === 'reject') {
            e.rejected++;
            continue;
          }
          e.valid++;
          const tx = JSON.parse(item.json) as { sourceCustomerId: string; transactionId: string };
          const id = tx.sourceCustomerId;
          mine.add(id);
          add(id);
          if (s.keepTransactions)
            transactions.push({ transactionId: tx.transactionId, sourceCustomerId: id });
        }
      }
      e.customers = mine.size;
      exports.push(e);
    }
  }
  return { customers: [...found], exports, transactions };
}

/** One id a line; blank lines and lines starting with `#` are skipped. */
export async function readIdLines(
  file: string,
  stdin: NodeJS.ReadableStream | undefined,
  add: (v: unknown) => void,
): Promise<void> {
  const unreadable = (why: string) =>
    new SvcIngestError('INPUT_UNREADABLE', `cannot read customers file ${file}: ${why}`, { source: file });
  if (file !== '-') {
    try {
      const st = await stat(file);
      if (st.isDirectory()) throw unreadable('is a directory');
      if (!st.isFile()) throw unreadable('not a regular file');
    } catch (err) {
      if (err instanceof SvcIngestError) throw err;
      const code = (err as NodeJS.ErrnoException).code;
      throw unreadable(code === 'ENOENT' ? 'no such file' : (code ?? String(err)));
    }
  }
  const input = file === '-' ? (stdin ?? cliIo().stdin) : createReadStream(file, { encoding: 'utf8' });
  try {
    for await (const text of createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY })) {
      const t = text.replace(/^\uFEFF/, '').trim();
      if (t === '' || t.startsWith('#')) continue;
      add(t);
    }
  } catch (err) {
    throw unreadable((err as NodeJS.ErrnoException).code ?? String(err));
  }
}

/** The values of one CSV column (header row) or NDJSON key of a file, read by the export readers. */
async function readIdColumn(
  file: string,
  column: string,
  s: CustomerSources,
  add: (v: unknown) => void,
): Promise<void> {
  // A file is a table by its name (isTable), so its own extension says which kind.
  const [spec] = await resolveInputs([file], { format: file === '-' ? s.format : undefined });
  if (!spec) return;
  let header: string[] | undefined;
  const onHeader = (columns: string[], source: string): void => {
    header = columns;
    if (!columns.includes(column)) {
      throw new SvcIngestError(
        'INPUT_HEADER_MISSING_COLUMN',
        `${source}: no column ${JSON.stringify(column)} (columns: ${columns.join(', ')})`,
        { source, field: column },
      );
    }
  };
  let seen = 0;
  const opts = {
    onHeader,
    ...(s.delimiter ? { delimiter: s.delimiter } : {}),
    ...(s.stdin ? { stdin: s.stdin } : {}),
  };
  for await (const items of readInput(spec, opts)) {
    for (const item of items) {
      if (item.kind !== 'record') continue;
      const v = item.record.fields[column];
      if (v !== undefined && v !== null && v !== '') seen++;
      add(v);
    }
  }
  if (header === undefined && spec.format === 'ndjson' && seen === 0) {
    throw new SvcIngestError(
      'INPUT_HEADER_MISSING_COLUMN',
      `${file}: no record has the key ${JSON.stringify(column)}`,
      {
        source: file,
        field: column,
      },
    );
  }
}
