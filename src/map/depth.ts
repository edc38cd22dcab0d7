// A profile nested deeper than any rule needs is refused before anything walks it: the compiler, JSON.stringify of
// an error's value and the checks recurse, and 200,000 levels would end in "Maximum call stack size exceeded".
import { SvcIngestError } from '../errors.ts';

/** Deepest nesting a profile may have (a rule's options sit at about 5 levels: fields.f.match.pattern). */
export const MAX_PROFILE_DEPTH = 32;

/**
 * Throws MAPPING_INVALID when `doc` nests objects or arrays more than MAX_PROFILE_DEPTH levels deep. Iterative
 * (a stack of its own), so any depth is measured without recursion.
 * @example checkDepth('p.json', { fields: {} }) // fine
 */
export function checkDepth(source: string, doc: unknown): void {
  const stack: Array<[unknown, number]> = [[doc, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop() as [unknown, number];
    if (typeof v !== 'object' || v === null) continue;
    if (depth >= MAX_PROFILE_DEPTH)
      throw new SvcIngestError(
        'MAPPING_INVALID',
        `the profile nests objects or arrays more than ${MAX_PROFILE_DEPTH} levels deep (no rule needs more than a few)`,
        { source },
      );
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1]);
  }
}
