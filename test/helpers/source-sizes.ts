// The sizes of src/ as docs/layout.md states them: each folder, each file's lines, each function's lines, read with
// @babel/parser (TypeScript plugin). A function is any function declaration or expression, arrow function, object
// or class method (getters and setters included); its lines run from its first line (the `function` keyword, the
// arrow's parameters, the method's name) to its closing brace, comments inside included.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from '@babel/parser';

export interface FileSize {
  /** Path from the repository's root, e.g. src/simulator/server.ts. */
  file: string;
  lines: number;
}

export interface FunctionSize extends FileSize {
  /** Its name: the declaration's, the variable, property or method it is assigned to, else `(anonymous)`. */
  name: string;
  /** Its first line in the file. */
  line: number;
}

/** Every folder under `src` (relative to `root`, with a trailing slash), sorted. */
export function sourceFolders(root: string, src = 'src'): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const e of readdirSync(join(root, dir), { withFileTypes: true })) {
      if (!e.isDirectory()) continue;
      out.push(`${dir}/${e.name}/`);
      walk(`${dir}/${e.name}`);
    }
  };
  walk(src);
  return out.sort();
}

/** Every file under `src` (any kind: the launcher script too) with its number of lines, longest first. */
export function fileSizes(root: string, src = 'src'): FileSize[] {
  const out: FileSize[] = [];
  const walk = (dir: string): void => {
    for (const e of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = `${dir}/${e.name}`;
      if (e.isDirectory()) walk(path);
      else out.push({ file: path, lines: lineCount(readFileSync(join(root, path), 'utf8')) });
    }
  };
  walk(src);
  return out.sort((a, b) => b.lines - a.lines || a.file.localeCompare(b.file));
}

/** Lines as `wc -l` counts them, a last line without a newline included. */
function lineCount(text: string): number {
  if (text === '') return 0;
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

const FUNCTION = new Set([
  'FunctionDeclaration',
  'FunctionExpression',
  'ArrowFunctionExpression',
  'ObjectMethod',
  'ClassMethod',
  'ClassPrivateMethod',
  'TSDeclareMethod',
]);

interface Node {
  type: string;
  loc?: { start: { line: number }; end: { line: number } };
  [key: string]: unknown;
}

function keyName(key: unknown): string | undefined {
  const k = key as { type?: string; name?: string; value?: unknown; id?: { name?: string } } | undefined;
  if (k?.type === 'Identifier') return k.name;
  if (k?.type === 'StringLiteral' || k?.type === 'NumericLiteral') return String(k.value);
  if (k?.type === 'PrivateName') return `#${k.id?.name}`;
  return undefined;
}

/** Every function of the TypeScript files under `src` (declaration files left out), longest first. */
export function functionSizes(root: string, src = 'src'): FunctionSize[] {
  const out: FunctionSize[] = [];
  for (const { file } of fileSizes(root, src)) {
    if (!file.endsWith('.ts') || file.endsWith('.d.ts')) continue;
    const ast = parse(readFileSync(join(root, file), 'utf8'), {
      sourceType: 'module',
      plugins: ['typescript'],
    });
    const visit = (node: Node, named: string | undefined): void => {
      if (FUNCTION.has(node.type) && node.loc && node.body) {
        const own = keyName((node.id as unknown) ?? undefined) ?? keyName(node.key);
        out.push({
          file,
          name: own ?? named ?? '(anonymous)',
          line: node.loc.start.line,
          lines: node.loc.end.line - node.loc.start.line + 1,
        });
      }
      // The name a function takes from where it is assigned: `const f = () => …`, `{ f: function () … }`.
      const passes =
        node.type === 'VariableDeclarator'
          ? keyName(node.id)
          : node.type === 'ObjectProperty' || node.type === 'ClassProperty'
            ? keyName(node.key)
            : node.type === 'AssignmentExpression'
              ? keyName((node.left as Node | undefined)?.property ?? node.left)
              : undefined;
      for (const [k, v] of Object.entries(node)) {
        if (k === 'loc' || k.endsWith('Comments')) continue;
        for (const child of Array.isArray(v) ? v : [v]) {
          if (child !== null && typeof child === 'object' && typeof (child as Node).type === 'string')
            visit(child as Node, passes);
        }
      }
    };
    visit(ast.program as unknown as Node, undefined);
  }
  return out.sort((a, b) => b.lines - a.lines || a.file.localeCompare(b.file) || a.line - b.line);
}
