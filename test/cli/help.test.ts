// Help and discovery: every command and sub-command has examples in --help, `help a b` prints that
// sub-command's help, `npx svc-ingest` is quiet on npm's side, and `engines` says what the launcher needs.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, collectOutput, ROOT, runCliHere } from '../helpers/cli.ts';

/** The sub-commands listed under "Commands:" in a help text (commander's own `help` left out). */
function subcommands(help: string): string[] {
  const at = help.indexOf('\nCommands:\n');
  if (at === -1) return [];
  const names: string[] = [];
  for (const line of help.slice(at + 11).split('\n')) {
    if (!line.startsWith('  ')) break;
    const m = /^ {2}([a-z][\w-]*)\b/.exec(line);
    if (m && m[1] !== 'help') names.push(m[1]!);
  }
  return names;
}

describe('--help', () => {
  it('every command and sub-command shows examples of itself', async () => {
    const seen: string[] = [];
    const visit = async (path: string[]): Promise<void> => {
      const r = await runCliHere([...path, '--help']);
      expect(r.code, path.join(' ')).toBe(0);
      expect(r.stdout, `${path.join(' ')} --help`).toMatch(/\nExamples:\n/);
      const examples = r.stdout.slice(r.stdout.indexOf('\nExamples:\n'));
      const own = ['svc-ingest', ...path].join(' ');
      expect(examples, `${own} --help`).toContain(`\n  ${own}${path.length === 0 ? ' ' : ''}`);
      seen.push(own);
      for (const sub of subcommands(r.stdout)) await visit([...path, sub]);
    };
    await visit([]);
    for (const c of [
      'send',
      'simulate',
      'redemptions',
      'stores',
      'tickets',
      'tickets create',
      'tickets get',
      'tickets listen',
      'tickets status',
      'reconcile',
      'trace',
    ])
      expect(seen).toContain(`svc-ingest ${c}`);
  });

  it("`help tickets create` prints the sub-command's help, as `tickets create --help` does", async () => {
    const viaHelp = await runCliHere(['help', 'tickets', 'create']);
    const direct = await runCliHere(['tickets', 'create', '--help']);
    expect(viaHelp.code).toBe(0);
    expect(viaHelp.stdout).toMatch(/^Usage: svc-ingest tickets create \[options\]/);
    expect(viaHelp.stdout).toContain('--ticket-id <id>');
    expect(viaHelp.stdout).toBe(direct.stdout);
    const nested = await runCliHere(['tickets', 'help', 'listen']);
    expect(nested.stdout).toMatch(/^Usage: svc-ingest tickets listen/);
    const send = await runCliHere(['help', 'send']);
    expect(send.stdout).toMatch(/^Usage: svc-ingest send/);
    const unknown = await runCliHere(['help', 'tickets', 'nope']);
    expect(unknown.code).toBe(1);
  });

  it('send --help names exit statuses 0-5, 130, 143 and the new options', async () => {
    const r = await runCliHere(['send', '--help']);
    for (const s of [
      '0 all valid',
      '1 could not run',
      '2 some records',
      '3 some batches',
      '4 no records',
      '5 service unavailable',
      '130/143',
    ])
      expect(r.stdout).toContain(s);
    for (const o of [
      '--allow-empty',
      '--progress-interval <seconds>',
      '--metrics-file <path>',
      '--metrics-port <n>',
    ])
      expect(r.stdout).toContain(o);
  });

  it('backfill plan|work|status and ledger migrate --help: the ledger required, where the password comes from, exit statuses', async () => {
    const statuses: Record<string, string[]> = {
      'backfill plan': ['0 planned', '1 could not run'],
      'backfill work': [
        '0 every partition done',
        '1 could not run',
        '2 some',
        '3 some',
        '5 service',
        '130/143',
      ],
      'backfill status': ['0 reported', '1 could not run'],
      'ledger migrate': ['0 the schema', '1 could not run'],
    };
    for (const [command, expected] of Object.entries(statuses)) {
      const r = await runCliHere([...command.split(' '), '--help']);
      expect(r.code, command).toBe(0);
      const text = r.stdout.replace(/\s+/g, ' ');
      expect(text, command).toContain('--ledger <url>');
      expect(text, command).toContain('one of the two is required');
      expect(text, command).toContain('SVC_LEDGER_PASSWORD_FILE');
      expect(text, command).toContain('Exit status:');
      for (const s of expected) expect(text, `${command}: ${s}`).toContain(s);
    }
  });
});

describe('npm side', () => {
  it('`engines` says the Node the launcher needs (>= 22.18)', async () => {
    const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8'));
    expect(pkg.engines).toEqual({ node: '>=22.18' });
    const launcher = await readFile(BIN, 'utf8');
    expect(launcher).toContain('[ "$major" -eq 22 ] 2>/dev/null && [ "$minor" -ge 18 ]');
    expect(launcher).toContain('>= 22.18');
  });

  it('`npx svc-ingest` on the machine npm prints no npm warnings, first call (fresh npx cache) and later', async () => {
    // npx as a user runs it: npm on the machine's Node, not on the project's (node_modules/.bin left off PATH).
    const path = (process.env.PATH ?? '')
      .split(delimiter)
      .filter((p) => !p.includes('node_modules'))
      .join(delimiter);
    const cache = await mkdtemp(join(tmpdir(), 'svc-npx-cache-'));
    // As from a login shell: none of the npm_* variables an enclosing npm/npx run would have set.
    const shellEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
    const npx = () =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = spawn('npx', ['svc-ingest', '--version'], {
          cwd: ROOT,
          env: { ...shellEnv, PATH: path, npm_config_cache: cache, npm_config_update_notifier: 'false' },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        void collectOutput(child).closed.then(resolve);
      });
    for (const call of [await npx(), await npx()]) {
      expect(call.code, call.stderr).toBe(0);
      expect(call.stdout.trim()).toMatch(/^0\.1\.0 \([0-9a-f]{7}(-dirty)?\)$/);
      expect(call.stderr).not.toMatch(/EBADENGINE|npm warn/i);
    }
  });
});

describe('the repository carries its own contract', () => {
  it('README points only to files in the repository, and names no path of this machine', async () => {
    const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
    expect(readme).not.toMatch(
      /\.\.\/shared|shared\/(CONTRACT|FACTS)|\bFACTS\.md\b|(?<!docs\/)\bCONTRACT\.md\b/,
    );
    expect(readme).not.toMatch(/\/work\//);
    const links = [...readme.matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)]
      .map((m) => m[1]!)
      .filter((l) => !/^[a-z]+:/.test(l));
    expect(links.length).toBeGreaterThan(0);
    for (const link of links) await expect(readFile(join(ROOT, link), 'utf8'), link).resolves.toBeTruthy();
  });

  it('docs/contract.md gives every exit status with what to do, the line formats and the summary', async () => {
    const contract = await readFile(join(ROOT, 'docs/contract.md'), 'utf8');
    for (const code of ['0', '1', '2', '3', '4', '5', '130 / 143'])
      expect(contract).toMatch(new RegExp(`\\n\\| ${code} \\| .+ \\| .+ \\|`));
    for (const heading of [
      '### Ledger line',
      '### Reject line',
      '### Summary',
      '### Delivery rules',
      '### Exit status',
    ])
      expect(contract).toContain(heading);
    const send = await runCliHere(['send', '--help']);
    // Every option of send is in the contract.
    for (const opt of send.stdout.matchAll(/^ {2}(--[a-z-]+)/gm)) {
      if (
        opt[1] === '--help' ||
        ['--base-url', '--config', '--insecure-http', '--log-level'].includes(opt[1]!)
      )
        continue;
      expect(contract, opt[1]).toContain(`\`${opt[1]}`);
    }
  });
});
