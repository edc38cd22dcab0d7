// A built-in profile run on another processor's export: told once, from the first records, instead of a reject per
// record naming the one field the profile happened to convert first.
import { SvcIngestError } from '../errors.ts';
import { compileGetter } from '../map/path.ts';
import type { CompiledProfile } from '../map/types.ts';
import type { ReadItem } from '../read/types.ts';

/** Records looked at (the first chunk's, at most this many). */
const FIRST = 5;

/**
 * Throws INPUT_HEADER_MISSING_COLUMN when `profile` is a built-in one (not an expanding one) and every one of the
 * first records of `chunk` (up to 5) lacks more than half of the paths its required fields read: the export is not
 * that processor's. Anything else passes.
 * @example checkForeign(await loadProfile('stripe-issuing'), firstChunk) // throws for a Lithic export
 */
export function checkForeign(profile: CompiledProfile, chunk: readonly ReadItem[]): void {
  if (profile.builtIn !== true || profile.expand !== undefined) return;
  const paths = profile.requiredColumns.filter((c) => c !== '?');
  if (paths.length < 2) return;
  const getters = paths.map((p) => compileGetter(p));
  const records = chunk.filter((i) => i.kind === 'record').slice(0, FIRST);
  if (records.length === 0) return;
  const missing = new Set<string>();
  for (const item of records) {
    if (item.kind !== 'record') continue;
    const absent = paths.filter(
      (_, i) => (getters[i] as (r: Record<string, unknown>) => unknown)(item.record.fields) === undefined,
    );
    if (absent.length * 2 <= paths.length) return;
    for (const p of absent) missing.add(p);
  }
  const first = records[0]?.kind === 'record' ? records[0].record.source : '';
  throw new SvcIngestError(
    'INPUT_HEADER_MISSING_COLUMN',
    `${first} is not a ${profile.name} export: ${records.length === 1 ? 'its first record lacks' : `each of its first ${records.length} records lacks`} most of the paths the profile reads (missing: ${[...missing].join(', ')}); stopped before mapping any. Choose the profile of this export's processor (svc-ingest mappings), or write one (svc-ingest mapping draft)`,
    { source: first },
  );
}
