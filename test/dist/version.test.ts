// A build names the commit it was made from: two commits in a scratch repository (a copy of the sources, the clone's
// node_modules linked), the single executable built from each, and `--version` differs between them; the same tree
// with an uncommitted change says `-dirty`, from the clone (git read at run time) and in the npm package's
// build-info.json alike.
import { cp, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.ts';
import { run, VERSION, why } from './helpers.ts';

const NODE = join(ROOT, 'node_modules/node/bin/node');

describe('--version carries the commit of the build', () => {
  let dir = '';
  const git = async (...args: string[]) => {
    const r = await run('git', ['-C', dir, ...args]);
    expect(r.code, why(r)).toBe(0);
    return r.stdout.trim();
  };
  /** Build the executable from the scratch repository into out-NAME; its --version. */
  const buildAndAsk = async (name: string) => {
    const out = join(dir, `out-${name}`);
    const b = await run(NODE, [join(dir, 'packaging/sea.ts'), '--out', out, '--no-code-cache']);
    expect(b.code, why(b)).toBe(0);
    const exe = join(out, `svc-ingest-${VERSION}-linux-x64`);
    const v = await run(exe, ['--version'], { env: { PATH: '/nonexistent' } });
    await rm(out, { recursive: true, force: true });
    return v.stdout.trim();
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-version-'));
    for (const f of ['src', 'config', 'packaging', 'package.json', 'tsconfig.json'])
      await cp(join(ROOT, f), join(dir, f), { recursive: true });
    await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
    await writeFile(join(dir, '.gitignore'), 'node_modules\nout-*\n');
    await git('init', '-q');
    await git('add', '-A');
    await git('-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qm', 'a');
  });

  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('differs between two builds of two commits, and says -dirty for a changed tree', async () => {
    const a = await git('rev-parse', '--short=7', 'HEAD');
    const first = await buildAndAsk('a');
    await git(
      '-c',
      'user.name=t',
      '-c',
      'user.email=t@example.com',
      'commit',
      '-q',
      '--allow-empty',
      '-m',
      'b',
    );
    const b = await git('rev-parse', '--short=7', 'HEAD');
    const second = await buildAndAsk('b');
    expect(first).toBe(`${VERSION} (${a})`);
    expect(second).toBe(`${VERSION} (${b})`);
    expect(second).not.toBe(first);

    // The clone reads git when asked; the npm package's build writes what git said into dist/build-info.json.
    const clone = await run(join(dir, 'src/bin/svc-ingest'), ['--version']);
    expect(clone.stdout.trim(), why(clone)).toBe(`${VERSION} (${b})`);
    await writeFile(
      join(dir, 'config/default.json'),
      `${await readFile(join(dir, 'config/default.json'), 'utf8')}\n`,
    );
    const dirty = await run(join(dir, 'src/bin/svc-ingest'), ['--version']);
    expect(dirty.stdout.trim()).toBe(`${VERSION} (${b}-dirty)`);
    const info = await run(NODE, [join(dir, 'packaging/build-info.ts'), join(dir, 'build-info.json')]);
    expect(info.code, why(info)).toBe(0);
    expect(JSON.parse(await readFile(join(dir, 'build-info.json'), 'utf8'))).toEqual({
      commit: `${b}-dirty`,
    });
  });
});
