// The files that ship with the tool — the built-in profiles config/mappings/*.json — read
// from the package's (or the clone's) folder, or, in the single executable, from the assets embedded in it
// (node:sea; packaging/sea.ts puts them there under the same relative names).
import { readdirSync } from 'node:fs';
import path from 'node:path';
import sea from 'node:sea';
import { readSmallBytes, SmallFileError } from './small-file.ts';

/** True in the single executable (svc-ingest-<version>-linux-x64), false when Node runs the package or the clone. */
export const IN_EXECUTABLE = sea.isSea();

/** The package's (or the clone's) root folder: src/config/ or dist/config/ is two levels below it. */
export const PACKAGE_ROOT = path.resolve(import.meta.dirname, '../..');

/**
 * Where a shipped file is, as messages name it: its path on disk, or `<executable>/<rel>` for an embedded one.
 * @example builtinPath('config/mappings') // '/usr/lib/node_modules/svc-ingest/config/mappings'
 */
export function builtinPath(rel: string): string {
  return IN_EXECUTABLE ? `${process.execPath}/${rel}` : path.join(PACKAGE_ROOT, rel);
}

/**
 * The bytes of a shipped file (at most `max` from disk). Throws SmallFileError (`no such file`, code ENOENT, for a
 * name that is not shipped), as readSmallBytes does.
 * @example builtinBytes('config/mappings/lithic.json', 1 << 20)
 */
export function builtinBytes(rel: string, max: number): Buffer {
  if (!IN_EXECUTABLE) return readSmallBytes(path.join(PACKAGE_ROOT, rel), max);
  if (!sea.getAssetKeys().includes(rel)) throw new SmallFileError('no such file', 'ENOENT');
  return Buffer.from(sea.getRawAsset(rel) as ArrayBuffer);
}

/** builtinBytes as UTF-8 text. */
export function builtinText(rel: string, max: number): string {
  return builtinBytes(rel, max).toString('utf8');
}

/**
 * The names of the shipped files directly in folder `dir` (sorted); [] when there is none.
 * @example builtinFiles('config/mappings') // ['harbor-ndjson.json', 'lithic.json', …]
 */
export function builtinFiles(dir: string): string[] {
  if (IN_EXECUTABLE) {
    const prefix = `${dir}/`;
    return sea
      .getAssetKeys()
      .filter((k) => k.startsWith(prefix) && !k.slice(prefix.length).includes('/'))
      .map((k) => k.slice(prefix.length))
      .sort();
  }
  try {
    return readdirSync(path.join(PACKAGE_ROOT, dir)).sort();
  } catch {
    return [];
  }
}
