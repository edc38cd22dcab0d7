// The inputs of a run, checked before any record is read: resolved specs, each CSV file's header against the
// mapping profile, and the same check for standard input when its header arrives. Shared by send and map.
import { statSync } from 'node:fs';
import { checkHeader, type HeaderCheckOptions } from '../map/columns.ts';
import type { CompiledProfile } from '../map/types.ts';
import type { InputFormat } from '../model/input.ts';
import { type InputSpec, readCsvHeader, readOnce, resolveInputs } from '../read/open.ts';

/**
 * Inputs ready to prepare: `headers` holds each CSV file's checked header (hand it to prepareChunks as
 * `columns`), `onHeader` checks standard input's header when the reader meets it.
 * @example const ins = await openInputs(['a.csv'], profile, { format: undefined, delimiter: ',' })
 */
export interface CheckedInputs {
  specs: InputSpec[];
  delimiter: string | undefined;
  headers: Map<InputSpec, string[]>;
  onHeader: (columns: string[], source: string) => void;
  /** Sources whose header has been checked (files now, standard input when its header arrives). */
  headerSeen: Set<string>;
}

/** A 0-byte file holds no header (a 0-byte .csv.gz is not even gzip): it is reported as empty when read. */
function isEmptyFile(path: string): boolean {
  try {
    return statSync(path).size === 0;
  } catch {
    return false; // the reader reports the error
  }
}

/**
 * Resolve inputs (--format beats the extension; the profile's format is only a hint for standard input) and
 * check every CSV file's header against the profile (checkHeader: a missing required column throws, others
 * warn, or throw under `strict`).
 * @example await openInputs(['-'], profile, { format: 'csv', delimiter: undefined, strict: true })
 */
export async function openInputs(
  inputs: string[],
  profile: CompiledProfile,
  o: {
    /** `pgtext`: PostgreSQL's text format (a CSV-like input: read/pgtext.ts). */
    format?: InputFormat | 'pgtext';
    delimiter?: string;
    sourceName?: string;
    allowUnterminated?: boolean;
  } & HeaderCheckOptions,
): Promise<CheckedInputs> {
  const pgtext = o.format === 'pgtext';
  const format = pgtext ? 'csv' : (o.format as InputFormat | undefined);
  const resolveOpts = { format, sourceName: o.sourceName, allowUnterminated: o.allowUnterminated };
  const specs = (await resolveInputs(inputs, resolveOpts)).map((spec): InputSpec => {
    if (pgtext) return { ...spec, dialect: 'pgtext' };
    return spec.sniff && profile.format ? { ...spec, format: profile.format, sniff: false } : spec;
  });
  const delimiter = o.delimiter ?? profile.delimiter;
  const check = { strict: o.strict, warn: o.warn };
  const headerSeen = new Set<string>();
  const onHeader = (columns: string[], source: string) => {
    headerSeen.add(source);
    checkHeader(profile, columns, source, check);
  };
  const headers = new Map<InputSpec, string[]>();
  for (const spec of specs) {
    if (spec.format !== 'csv' || readOnce(spec) || isEmptyFile(spec.path)) continue;
    const columns = await readCsvHeader(spec, { delimiter });
    if (columns.length === 0) continue; // an empty file, or blank lines only: no record to map
    onHeader(columns, spec.path);
    headers.set(spec, columns);
  }
  return { specs, delimiter, headers, onHeader, headerSeen };
}
