// The import graph of src/ as docs/architecture.md draws it: every file belongs to a layer, and a file imports
// only from its own layer or lower ones (static `import … from` and dynamic `import(…)` alike); no file takes
// part in an import cycle; the transaction's domain types come from src/model/, not from the client's wire.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.ts';

/**
 * Layers from the bottom up (a folder, or one file). The same list, explained, is in docs/architecture.md.
 * The send chain's stages sit in the order the data takes, above what they share: the ledger's seam
 * (ledger/store.ts, with both stores behind it) is below dedupe and the recorder, which talk to it.
 */
const LAYERS: readonly string[][] = [
  ['errors.ts', 'runtime/', 'sleep.ts', 'io.ts', 'mask/', 'log.ts', 'version.ts'],
  ['model/'],
  ['config/'],
  ['client/'],
  ['sorted-runs/'],
  ['read/'],
  ['validate/'],
  ['map/'],
  ['prepare/'],
  ['batch/'],
  ['ledger/'],
  ['dedupe/'],
  ['send/'],
  ['record/'],
  ['chain/'],
  ['metrics/'],
  ['send-run.ts'],
  ['backfill/', 'reconcile/', 'simulator/', 'tickets/', 'trace/'],
  ['cli/'],
];

const SRC = join(ROOT, 'src');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

function layerOf(file: string): number {
  const rel = relative(SRC, file);
  const i = LAYERS.findIndex((layer) => layer.some((p) => (p.endsWith('/') ? rel.startsWith(p) : rel === p)));
  if (i < 0) throw new Error(`src/${rel} is in no layer: add it to LAYERS (and docs/architecture.md)`);
  return i;
}

/** Each relative import of a file: the imported file and the names it takes. */
function importsOf(file: string): Array<{ target: string; names: string }> {
  const text = readFileSync(file, 'utf8');
  const out: Array<{ target: string; names: string }> = [];
  const re =
    /(?:import|export)\s+(type\s+)?([^;]*?)\s*from\s*['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    const spec = (m[3] ?? m[4]) as string;
    out.push({ target: normalize(join(dirname(file), spec)), names: m[2] ?? '' });
  }
  return out;
}

const files = sources(SRC);
const graph = new Map(files.map((f) => [f, importsOf(f)]));

describe('the import graph of src/', () => {
  it('every file is in a layer and imports nothing from a higher one', () => {
    const upward: string[] = [];
    for (const [file, imports] of graph) {
      for (const { target } of imports) {
        if (layerOf(target) > layerOf(file))
          upward.push(`src/${relative(SRC, file)} → src/${relative(SRC, target)}`);
      }
    }
    expect(upward).toEqual([]);
  });

  it('has no cycle', () => {
    const state = new Map<string, 'open' | 'done'>();
    const cycles: string[] = [];
    const visit = (f: string, path: string[]): void => {
      if (state.get(f) === 'done') return;
      if (state.get(f) === 'open') {
        cycles.push([...path.slice(path.indexOf(f)), f].map((x) => relative(SRC, x)).join(' → '));
        return;
      }
      state.set(f, 'open');
      for (const { target } of graph.get(f) ?? []) visit(target, [...path, f]);
      state.set(f, 'done');
    };
    for (const f of files) visit(f, []);
    expect(cycles).toEqual([]);
  });

  it("the transaction's domain types come from src/model/, never from the client's wire models", () => {
    const DOMAIN =
      /\b(TransactionNotification|TransactionField|TRANSACTION_FIELDS|REQUIRED_TRANSACTION_FIELDS)\b/;
    const offenders: string[] = [];
    for (const [file, imports] of graph) {
      const rel = relative(SRC, file);
      // The simulator plays the service: it moves to src/model/ with its own change (it re-exports from there).
      if (rel.startsWith('client/') || rel.startsWith('simulator/')) continue;
      for (const { target, names } of imports) {
        if (relative(SRC, target).startsWith('client/') && DOMAIN.test(names)) offenders.push(`src/${rel}`);
      }
    }
    expect(offenders).toEqual([]);
  });
});
