// A Node for the launcher's place (SVC_INGEST_NODE) that traces V8's heap limits on its standard output and makes
// every collection a full one (--stress-compaction, whose own growing factor is 1.1): each collection says the
// factor its next limit was set with, so a test sees where the CLI set its own (src/runtime/heap-growth.ts: 2.0).
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';

/** Writes the traced Node into `dir`; its path. */
export async function tracedNode(dir: string): Promise<string> {
  const node = join(dir, 'traced-node');
  const flags = '--trace-gc-verbose --stress-compaction';
  await writeFile(node, `#!/bin/sh\nexec '${process.execPath}' ${flags} "$@"\n`, { mode: 0o755 });
  return node;
}

/** The collections of the start keep V8's factor; from the CLI's set on, every one says 2.0. */
export function expectHeldOnceStarted(stdout: string): void {
  const factors = [...stdout.matchAll(/\[HeapController\] factor ([\d.]+)/g)].map((m) => m[1]);
  const set = factors.indexOf('2.0');
  expect(set, `V8's factors: ${factors.join(' ')}`).toBeGreaterThan(0);
  expect(factors.slice(0, set)).not.toContain('2.0');
  expect(factors.slice(set)).toEqual(factors.slice(set).map(() => '2.0'));
}
