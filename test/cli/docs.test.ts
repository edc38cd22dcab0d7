// The README and docs/ against the tool: links and anchors resolve, every command and option an example names
// exists in that command's --help, the configuration table lists every key, the dependency table every package
// at its pinned version, and docs/contract.md every error code.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG_KEYS } from '../../src/config/index.ts';
import { ROOT, runCliHere } from '../helpers/cli.ts';

const read = (rel: string): string => readFileSync(join(ROOT, rel), 'utf8');
const DOCS = ['README.md', ...readdirSync(join(ROOT, 'docs')).map((f) => `docs/${f}`)].filter((f) =>
  f.endsWith('.md'),
);

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to dashes. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, '')
    .replace(/ /g, '-');
}

/** The text outside fenced code blocks. */
const prose = (md: string): string => md.replace(/^```[\s\S]*?^```/gm, '');

function anchorsOf(md: string): Set<string> {
  return new Set([...prose(md).matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1]!)));
}

/** One markdown section: from its heading to the next heading of the same or a higher level. */
function section(md: string, heading: string): string {
  const at = md.indexOf(`\n${heading}\n`);
  expect(at, heading).toBeGreaterThan(-1);
  const level = /^#+/.exec(heading)![0].length;
  const rest = md.slice(at + heading.length + 2);
  const end = rest.search(new RegExp(`^#{1,${level}} `, 'm'));
  return end === -1 ? rest : rest.slice(0, end);
}

describe('README and docs/', () => {
  it('link only to files of the repository and to headings that exist', () => {
    let links = 0;
    for (const file of DOCS) {
      for (const m of prose(read(file)).matchAll(/\]\(([^)\s]+)\)/g)) {
        const link = m[1]!;
        if (/^[a-z]+:/.test(link)) continue;
        const [path, anchor] = link.split('#') as [string, string | undefined];
        const target = path ? normalize(join(dirname(file), path)) : file;
        expect(() => read(target), `${file}: ${link}`).not.toThrow();
        if (anchor && target.endsWith('.md'))
          expect(anchorsOf(read(target)).has(anchor), `${file}: ${link}`).toBe(true);
        links++;
      }
    }
    expect(links).toBeGreaterThan(20);
  });

  it('name no path of this machine and no folder outside the repository', () => {
    for (const file of DOCS) {
      const text = read(file);
      expect(text, file).not.toMatch(/\/work\/|\.\.\/shared\b|shared\/(CONTRACT|FACTS)\.md/);
    }
  });

  it('every command and option in the examples exists in that command’s --help', async () => {
    // The README and every doc: examples moved into docs/ stay checked against the tool.
    const readme = DOCS.map(read).join('\n');
    const blocks = [...readme.matchAll(/^```(?:sh|crontab)\n([\s\S]*?)^```/gm)].map((m) => m[1]!);
    // Each invocation: `svc-ingest <command> [<sub-command>] …` up to a pipe, a redirection or a comment.
    const calls = new Map<string, Set<string>>();
    for (const block of blocks) {
      const text = block.replace(/\\\n\s*/g, ' ');
      for (const m of text.matchAll(/svc-ingest ([a-z]+)((?: [^|#>&;\n]*)?)/g)) {
        const args = m[2]!.trim().split(/\s+/);
        const sub = args[0] && /^[a-z]+(\|[a-z]+)*$/.test(args[0]) ? args[0].split('|') : [''];
        for (const s of sub) {
          const key = `${m[1]} ${s}`.trim();
          const opts = calls.get(key) ?? new Set<string>();
          for (const a of args) for (const o of a.matchAll(/(?:^|\[)(--[a-z][a-z0-9-]*)/g)) opts.add(o[1]!);
          calls.set(key, opts);
        }
      }
    }
    expect(calls.size).toBeGreaterThan(15);
    for (const [command, opts] of calls) {
      // A word after the command that is not a sub-command (an id, a file) is not a command: drop it.
      let help = await runCliHere([...command.split(' '), '--help']);
      let name = command;
      if (help.code !== 0 || !help.stdout.startsWith(`Usage: svc-ingest ${command} `)) {
        name = command.split(' ')[0]!;
        help = await runCliHere([name, '--help']);
      }
      expect(help.code, `${name} --help: ${help.stderr}`).toBe(0);
      for (const opt of opts) expect(help.stdout, `${name}: ${opt}`).toMatch(new RegExp(`^ +${opt}\\b`, 'm'));
    }
  });

  it('the configuration table lists every key and env variable of src/config/schema.ts', () => {
    const table = section(read('docs/configuration.md'), '## Configuration');
    // The table itself (most env names are derived from the key: read as text, the file would not show them).
    const keys = CONFIG_KEYS.map((k) => k.path);
    const envs = CONFIG_KEYS.map((k) => k.env);
    expect(keys.length).toBeGreaterThan(40);
    for (const key of keys) expect(table, key).toContain(`\`${key}\``);
    for (const env of envs) expect(table, env).toContain(`\`${env}\``);
  });

  it('the dependency table has a row for every package of package.json, at its pinned version', () => {
    const pkg = JSON.parse(read('package.json')) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    const rows = section(read('docs/dependencies.md'), '## Dependencies, and why each is here')
      .split('\n')
      .filter((l) => l.startsWith('| ') && !l.startsWith('| package'))
      .map((l) => l.split('|').map((c) => c.trim()));
    const versionOf = new Map<string, string>();
    for (const [, names, versions] of rows) {
      const ns = names!.replace(/\s*\(dev\)/, '').split(/,\s*/);
      const vs = versions!.split(/,\s*/);
      for (const [i, n] of ns.entries()) versionOf.set(n, vs[i]!);
    }
    for (const [name, version] of Object.entries({ ...pkg.dependencies, ...pkg.devDependencies }))
      expect(versionOf.get(name), name).toBe(version);
  });

  it('docs/contract.md names every error code of src/errors.ts', () => {
    const union = /export type ErrorCode =([^;]+);/.exec(read('src/errors.ts'))![1]!;
    const codes = [...union.matchAll(/'([A-Z_]+)'/g)].map((m) => m[1]!);
    const table = section(read('docs/contract.md'), '## Error codes');
    expect(codes.length).toBeGreaterThan(20);
    for (const code of codes) expect(table, code).toContain(`\`${code}\``);
  });
});
