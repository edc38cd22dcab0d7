// The install walk-through is written once, in the docs, as the block that follows the line
// `<!-- install-walkthrough -->`; the package test extracts that block and runs it, so the docs cannot drift.
import { readFile } from 'node:fs/promises';

export const WALKTHROUGH_MARKER = '<!-- install-walkthrough -->';

/**
 * The fenced code block right after the marker in a Markdown file (its body, without the fences).
 * @example const script = await walkThroughBlock(join(ROOT, 'docs/install.md'))
 */
export async function walkThroughBlock(file: string): Promise<string> {
  const text = await readFile(file, 'utf8');
  const at = text.indexOf(WALKTHROUGH_MARKER);
  if (at === -1) throw new Error(`${file}: no ${WALKTHROUGH_MARKER} line`);
  const m = /^\s*```[^\n]*\n([\s\S]*?)\n```/.exec(text.slice(at + WALKTHROUGH_MARKER.length));
  if (!m) throw new Error(`${file}: no fenced block after ${WALKTHROUGH_MARKER}`);
  return m[1]!;
}
