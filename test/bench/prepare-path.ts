// The read → map → validate → JSON path (prepareInput) of another checkout, loaded from its sources, for the bench's
// side-by-side tools (prepare-cost.ts, alloc-sites.ts): the checkout at ROOT, one profile, one input file.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/** A checkout's prepareInput over one file, ready to run (each call reads the file again). */
export interface PreparePath {
  root: string;
  run(): AsyncIterable<unknown[]>;
}

/** Load ROOT's modules for `mapping` ('canonical' or a profile name) and `file`. */
export async function preparePath(rootArg: string, mapping: string, file: string): Promise<PreparePath> {
  const root = resolve(rootArg);
  const at = (rel: string) => pathToFileURL(`${root}/src/${rel}`).href;
  const { loadProfile } = await import(at('map/profile.ts'));
  const { resolveInputs } = await import(at('read/open.ts'));
  const { prepareInput } = await import(at('prepare/prepare.ts'));
  const profile = await loadProfile(mapping === 'canonical' ? undefined : mapping);
  const [spec] = await resolveInputs([file], {});
  // A checkout with the warnings' counts (issue 31) counts them as send does; an older one has none.
  let silent: unknown;
  try {
    silent = (await import(at('map/silent-errors.ts'))).createSilentErrors(profile);
  } catch {
    silent = undefined;
  }
  return {
    root,
    run: () => prepareInput(spec, profile, { delimiter: profile.delimiter ?? ',' }, silent),
  };
}
