// Mapping profiles: load a JSON profile (config/mappings/) or the canonical one, compiled once into closures.
//
// The profile language is documented, one example per feature, in the README ("Mapping profiles").
// In short: { "name", "format", "delimiter", "timeZone", "pan": {"from", "iinLength"},
//   "fields": { "<TransactionNotification field>": "COLUMN" | { source, options, conversion } } }
// where a source is one of from / template / const / hash, options are default, trim, maxLength,
// case, zeroPad, else, and a conversion is one of amount / timestamp / boolean / integer /
// currency / country / state / enum. `const`, `default` and `else` are output values.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { TransactionField, TransactionNotification } from '../client/models.ts';
import { TRANSACTION_FIELDS } from '../client/models.ts';
import { SvcIngestError } from '../errors.ts';
import type { InputFormat } from '../read/open.ts';
import type { FieldError } from '../validate/validate.ts';
import { REQUIRED_FIELDS } from '../validate/validate.ts';
import { buildProfile, canonicalStep, compileProfile } from './compile.ts';

/**
 * A mapping profile compiled into closures: source record → TransactionNotification.
 * @example const p = await loadProfile('northwind-csv'); const r = p.map(record.fields); if (r.ok) send(r.tx);
 */
export interface CompiledProfile {
  name: string;
  /** A hint the profile may declare. */
  format?: InputFormat;
  delimiter?: string;
  /** CSV columns the profile reads for a required field without a default (checked against headers). */
  requiredColumns: string[];
  /**
   * Source record → TransactionNotification (empty optional fields left out, never null), or the
   * conversion errors of every field. Pure. Run validateTransaction on an ok result before sending.
   */
  map(
    fields: Record<string, unknown>,
  ): { ok: true; tx: TransactionNotification } | { ok: false; errors: FieldError[] };
  /** The source record with every card number masked (PAN column and any Luhn-valid 13-19 digit run). */
  maskRecord(fields: Record<string, unknown>): Record<string, unknown>;
}

/** Folder of the shipped profiles: a bare name resolves here, whatever the working directory. */
export const MAPPINGS_DIR = path.resolve(import.meta.dirname, '../../config/mappings');

let canonical: CompiledProfile | undefined;

/**
 * The canonical profile: every TransactionNotification field read from the column / key of the same
 * name, with type conversion only (text trimmed, numbers to text, booleans from true/false/Y/N/1/0,
 * cardNetworkIdentifier to an integer).
 * @example canonicalProfile().map({ transactionId: 't-1', mobileIndicator: 'Y' })
 */
export function canonicalProfile(): CompiledProfile {
  canonical ??= buildProfile({
    name: 'canonical',
    requiredColumns: [...REQUIRED_FIELDS],
    steps: (Object.keys(TRANSACTION_FIELDS) as TransactionField[]).map(canonicalStep),
    explicit: new Set(Object.keys(TRANSACTION_FIELDS)),
  });
  return canonical;
}

/**
 * Load and check a profile; undefined or 'canonical' = the canonical profile. A bare name
 * ('northwind-csv') resolves to config/mappings/<name>.json; anything with a slash or ending in
 * .json is a path. Bad profile → MAPPING_INVALID naming the JSON path of the bad key; unreadable →
 * MAPPING_UNREADABLE.
 * @example await loadProfile('harbor-ndjson')
 */
export async function loadProfile(pathOrName?: string): Promise<CompiledProfile> {
  if (pathOrName === undefined || pathOrName === 'canonical') return canonicalProfile();
  const isPath = /[\\/]/.test(pathOrName) || pathOrName.endsWith('.json');
  if (!isPath && !/^[A-Za-z0-9._-]+$/.test(pathOrName)) {
    throw new SvcIngestError(
      'MAPPING_UNREADABLE',
      `not a profile name or path: ${JSON.stringify(pathOrName)}`,
    );
  }
  const file = isPath ? path.resolve(pathOrName) : path.join(MAPPINGS_DIR, `${pathOrName}.json`);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : (code ?? 'cannot read');
    throw new SvcIngestError(
      'MAPPING_UNREADABLE',
      `mapping profile ${file}: ${why}`,
      { source: file },
      { cause: err },
    );
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new SvcIngestError('MAPPING_INVALID', `${file}: not valid JSON (${(err as Error).message})`, {
      source: file,
    });
  }
  try {
    return compileProfile(doc, file, path.basename(file, '.json'));
  } catch (err) {
    if (err instanceof SvcIngestError) {
      throw new SvcIngestError(err.code, `${path.basename(file)}: ${err.message}`, err.context);
    }
    throw err;
  }
}
