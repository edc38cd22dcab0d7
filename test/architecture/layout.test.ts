// docs/layout.md against the tree: the folders it lists are the folders of src/; no file in src/ is over 450 lines
// and no function over 120 (test/helpers/source-sizes.ts says what a function is and how its lines are counted);
// the longest files and functions it states are the tree's, each figure within TOLERANCE lines, and every file or
// function longer than the shortest it states plus TOLERANCE is among them.
// LAYOUT_WRITE=1 rewrites the table of sizes in docs/layout.md from the tree first (then checks it as above).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.ts';
import {
  type FileSize,
  type FunctionSize,
  fileSizes,
  functionSizes,
  sourceFolders,
} from '../helpers/source-sizes.ts';

/** The rules (docs/layout.md, "Rules"). */
const MAX_FILE_LINES = 450;
const MAX_FUNCTION_LINES = 120;
/** A stated figure may be this many lines off the tree's: an edit of a few lines does not make the page wrong. */
const TOLERANCE = 10;
/** How many of the longest files and functions the table states. */
const LISTED = 10;

const DOC = join(ROOT, 'docs/layout.md');
const BEGIN = '<!-- sizes:begin (LAYOUT_WRITE=1 vitest run test/architecture/layout.test.ts rewrites it) -->';
const END = '<!-- sizes:end -->';

const files = fileSizes(ROOT);
const functions = functionSizes(ROOT);

function sizesTable(): string {
  return [
    BEGIN,
    '',
    '| longest files | lines |',
    '|---|---|',
    ...files.slice(0, LISTED).map((f) => `| \`${f.file}\` | ${f.lines} |`),
    '',
    '| longest functions | in | lines |',
    '|---|---|---|',
    ...functions.slice(0, LISTED).map((f) => `| \`${f.name}\` | \`${f.file}\` | ${f.lines} |`),
    '',
    END,
  ].join('\n');
}

function readDoc(): string {
  const text = readFileSync(DOC, 'utf8');
  if (process.env.LAYOUT_WRITE !== '1') return text;
  const from = text.indexOf('<!-- sizes:begin');
  const to = text.indexOf(END);
  if (from < 0 || to < 0) throw new Error('docs/layout.md has no sizes markers');
  const next = `${text.slice(0, from)}${sizesTable()}${text.slice(to + END.length)}`;
  writeFileSync(DOC, next);
  return next;
}

const doc = readDoc();
const sizes = doc.slice(doc.indexOf('<!-- sizes:begin'), doc.indexOf(END));
const statedFiles = [...sizes.matchAll(/^\| `(src\/[^`]+)` \| (\d+) \|$/gm)].map((m) => ({
  file: m[1] as string,
  lines: Number(m[2]),
}));
const statedFunctions = [...sizes.matchAll(/^\| `([^`]+)` \| `(src\/[^`]+)` \| (\d+) \|$/gm)].map((m) => ({
  name: m[1] as string,
  file: m[2] as string,
  lines: Number(m[3]),
}));

describe('docs/layout.md against src/', () => {
  it('lists every folder of src/, and only those', () => {
    const listed = [...doc.matchAll(/^\| `(src\/[^`]*\/)` \|/gm)].map((m) => m[1] as string).sort();
    expect(listed).toEqual(sourceFolders(ROOT));
  });

  it(`has no file over ${MAX_FILE_LINES} lines`, () => {
    const over = files.filter((f) => f.lines > MAX_FILE_LINES).map((f) => `${f.file}: ${f.lines}`);
    expect(over).toEqual([]);
  });

  it(`has no function over ${MAX_FUNCTION_LINES} lines`, () => {
    const over = functions
      .filter((f) => f.lines > MAX_FUNCTION_LINES)
      .map((f) => `${f.name} (${f.file}:${f.line}): ${f.lines}`);
    expect(over).toEqual([]);
  });

  it(`states the longest files as they are (within ${TOLERANCE} lines)`, () => {
    expect(statedFiles.length).toBeGreaterThan(0);
    const actual = new Map(files.map((f) => [f.file, f.lines]));
    const wrong = statedFiles
      .filter((s) => Math.abs((actual.get(s.file) ?? 0) - s.lines) > TOLERANCE)
      .map((s) => `${s.file}: stated ${s.lines}, is ${actual.get(s.file) ?? 'absent'}`);
    expect(wrong, `the table now: (LAYOUT_WRITE=1)\n${sizesTable()}`).toEqual([]);
    expect(missing(files, statedFiles, (f) => f.file)).toEqual([]);
  });

  it(`states the longest functions as they are (within ${TOLERANCE} lines)`, () => {
    expect(statedFunctions.length).toBeGreaterThan(0);
    const key = (f: { name: string; file: string }) => `${f.name} in ${f.file}`;
    const actual = new Map<string, number>();
    for (const f of functions) if (!actual.has(key(f))) actual.set(key(f), f.lines);
    const wrong = statedFunctions
      .filter((s) => Math.abs((actual.get(key(s)) ?? 0) - s.lines) > TOLERANCE)
      .map((s) => `${key(s)}: stated ${s.lines}, is ${actual.get(key(s)) ?? 'absent'}`);
    expect(wrong, `the table now: (LAYOUT_WRITE=1)\n${sizesTable()}`).toEqual([]);
    expect(missing(functions, statedFunctions, key)).toEqual([]);
  });
});

/** What the tree has that is longer than the shortest stated figure plus TOLERANCE and is not stated. */
function missing<T extends FileSize | FunctionSize, S extends { lines: number }>(
  tree: T[],
  stated: S[],
  key: (x: T | S) => string,
): string[] {
  const floor = Math.min(...stated.map((s) => s.lines)) + TOLERANCE;
  const listed = new Set(stated.map(key));
  return tree.filter((t) => t.lines > floor && !listed.has(key(t))).map((t) => `${key(t)}: ${t.lines}`);
}
