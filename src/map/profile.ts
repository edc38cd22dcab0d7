// Mapping profiles: load a JSON profile (config/mappings/) or the canonical one, compiled once into closures.
//
// The profile language is documented, one example per feature, in docs/mapping.md.
// In short: { "name", "format", "delimiter", "timeZone", "pan": {"from", "iinLength"},
//   "fields": { "<TransactionNotification field>": "COLUMN" | { source, options, conversion } } }
// where a source is one of from / template / const / hash (columns and paths: path.ts), options are
// default, else, trim, maxLength, case, zeroPad, slice, split, match, required, and a conversion is one
// of amount / timestamp / boolean / integer / currency / country / state / enum. `const`, `default` and
// `else` are output values.
import path from 'node:path';
import { builtinFiles, builtinPath, builtinText } from '../config/builtin.ts';
import { FILE_CAPS, readSmallFile, SmallFileError } from '../config/small-file.ts';
import { SvcIngestError } from '../errors.ts';
import type { InputFormat } from '../model/input.ts';
import { REQUIRED_FIELDS, TRANSACTION_FIELDS, type TransactionField } from '../model/transaction.ts';
import { buildProfile, canonicalStep, compileProfile } from './compile.ts';
import type { CompiledProfile } from './types.ts';

/** The shipped profiles' folder, relative to the package (config/builtin.ts): a bare name resolves here. */
export const MAPPINGS = 'config/mappings';
/** Where the shipped profiles are, as messages name it, whatever the working directory. */
export const MAPPINGS_DIR = builtinPath(MAPPINGS);

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
    description:
      'Columns or keys already named as the TransactionNotification fields; type conversion only (amounts in minor units).',
    // Only the required columns are checked: the canonical profile names no optional column itself.
    columns: REQUIRED_FIELDS.map((f) => ({ column: f, rule: `fields.${f}`, field: f, required: true })),
    required: REQUIRED_FIELDS,
    steps: (Object.keys(TRANSACTION_FIELDS) as TransactionField[]).map(canonicalStep),
    explicit: new Set(Object.keys(TRANSACTION_FIELDS)),
  });
  return canonical;
}

/**
 * One built-in profile as `svc-ingest mappings` lists it.
 * @example { name: 'northwind-csv', description: 'Northwind Processing daily CSV export: …', format: 'csv' }
 */
export interface ProfileListing {
  name: string;
  description: string;
  format?: InputFormat;
}

/**
 * The built-in profiles: canonical, then every config/mappings/*.json by name (description and format as
 * the file says; a file that is not valid JSON is listed with that as its description).
 * @example (await listProfiles()).map((p) => p.name) // ['canonical', 'harbor-ndjson', 'lithic', …]
 */
export async function listProfiles(): Promise<ProfileListing[]> {
  const c = canonicalProfile();
  const out: ProfileListing[] = [{ name: c.name, description: c.description ?? '' }];
  // No folder: only the canonical profile exists.
  const files = builtinFiles(MAPPINGS).filter((f) => f.endsWith('.json'));
  for (const f of files) {
    const name = path.basename(f, '.json');
    try {
      const doc = JSON.parse(builtinText(`${MAPPINGS}/${f}`, FILE_CAPS.profile)) as Record<string, unknown>;
      const format = doc.format === 'csv' || doc.format === 'ndjson' ? doc.format : undefined;
      out.push({
        name,
        description: typeof doc.description === 'string' ? doc.description : '',
        ...(format ? { format } : {}),
      });
    } catch (err) {
      out.push({ name, description: `(unreadable: ${(err as Error).message})` });
    }
  }
  return out;
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
    text = isPath
      ? readSmallFile(file, FILE_CAPS.profile)
      : builtinText(`${MAPPINGS}/${pathOrName}.json`, FILE_CAPS.profile);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      err instanceof SmallFileError
        ? err.reason
        : code === 'ENOENT'
          ? 'no such file'
          : code === 'EISDIR'
            ? 'is a directory'
            : (code ?? 'cannot read');
    if (!isPath && code === 'ENOENT') {
      const names = (await listProfiles()).map((p) => p.name);
      throw new SvcIngestError(
        'MAPPING_UNREADABLE',
        `no mapping profile named ${JSON.stringify(pathOrName)}; built-in: ${names.join(', ')} (svc-ingest mappings describes them), or give a path to a .json file`,
        { source: file },
        { cause: err },
      );
    }
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
    const profile = compileProfile(doc, file, path.basename(file, '.json'));
    if (!isPath) profile.builtIn = true;
    return profile;
  } catch (err) {
    if (err instanceof SvcIngestError) {
      throw new SvcIngestError(err.code, `${path.basename(file)}: ${err.message}`, err.context);
    }
    throw err;
  }
}
