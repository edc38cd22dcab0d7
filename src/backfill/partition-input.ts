// A partition's input on this host: the file the one planned, the profile the one planned (each loaded once).
import { stat } from 'node:fs/promises';
import { SvcIngestError } from '../errors.ts';
import { type ClaimedPartition, changedInput } from '../ledger/postgres/backfill/partitions.ts';
import { loadProfile } from '../map/profile.ts';
import type { CompiledProfile } from '../map/types.ts';
import { unreadable } from '../read/open.ts';
import { mappingOf } from './plan.ts';

/** The file must be the one planned (same size and mtime), readable here at the same path. */
export async function checkInput(p: ClaimedPartition): Promise<void> {
  let st: Awaited<ReturnType<typeof stat>>;
  try {
    st = await stat(p.path);
  } catch (err) {
    throw unreadable(p.path, err);
  }
  const now = { size: st.size, mtimeMs: Math.floor(st.mtimeMs) };
  if (now.size !== p.size || now.mtimeMs !== p.mtimeMs) throw changedInput(p.path, p, now);
}

/** Profiles by mapping, each loaded once and checked against the digest the planner recorded. */
export function profiles(): (p: ClaimedPartition) => Promise<CompiledProfile> {
  const cache = new Map<string, Promise<CompiledProfile>>();
  const load = async (p: ClaimedPartition): Promise<CompiledProfile> => {
    if (p.mappingSha256 !== undefined) {
      const here = await mappingOf(p.mapping);
      if (here.sha256 !== p.mappingSha256)
        throw new SvcIngestError(
          'MAPPING_INVALID',
          `mapping ${p.mapping ?? 'canonical'} differs on this host from the one planned for ${p.path} ` +
            '(every worker must map alike: the same profile file)',
          { source: p.path },
        );
    }
    return loadProfile(p.mapping);
  };
  return (p) => {
    const key = `${p.mapping ?? ''}\n${p.mappingSha256 ?? ''}`;
    let got = cache.get(key);
    if (!got) {
      got = load(p);
      cache.set(key, got);
    }
    return got;
  };
}
