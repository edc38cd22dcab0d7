// The launcher's default V8 heap flags (src/bin/svc-ingest, its `*)` case: the young generation's size; the old
// generation's limit is set by the CLI at run time, src/runtime/heap-growth.ts), read from the launcher itself so nothing
// else spells them: the single executable carries them in its blob (packaging/sea.ts), and its test and the bench's
// start-up anchor take them from here.
import { readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The flags the launcher gives Node: by default (SVC_INGEST_HEAP not `small`), or with `small`; throws if that line
 * is not there.
 * @example launcherHeapFlags(ROOT) // ['--min-semi-space-size=8', '--max-semi-space-size=16']
 */
export function launcherHeapFlags(root: string, which: 'default' | 'small' = 'default'): string[] {
  const launcher = readFileSync(path.join(root, 'src/bin/svc-ingest'), 'utf8');
  const lines = new Map([...launcher.matchAll(/^\s*(small|\*)\) heap='([^']+)' ;;$/gm)].map((m) => [m[1], m[2]]));
  const label = which === 'small' ? 'small' : '*';
  const flags = lines.get(label);
  if (!flags) throw new Error(`src/bin/svc-ingest: no ${which} heap line (  ${label}) heap='…' ;;)`);
  return flags.split(' ');
}
