// The unit, the timer and the before-247 drop-in verified by Debian 11's own systemd (247, the oldest systemd whose
// package registry is reachable here: Ubuntu's and RHEL's are not; for those, test/deploy/systemd-versions.test.ts
// checks each setting against docs/install.md's table). Its systemd package is fetched from Debian's archive through
// a private apt folder (bullseye's sources only, the machine's apt configuration untouched), unpacked, and its
// `systemd-analyze verify` run on the units: nothing to say about them, while the previous release's unit draws
// the `%d` warning that cost its nights their token. Slow (a download): in `make test-dist`, not `make test`.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, ROOT } from '../helpers/cli.ts';
import { DIST } from './helpers.ts';

const SYSTEMD = join(ROOT, 'deploy/systemd');
/** Where bullseye's systemd is unpacked (kept between runs: the download is the slow part). */
const HOME = join(DIST, 'systemd-247');
const SOURCES =
  'deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bullseye main\n';

/** apt-get with its state, cache and sources in HOME only. */
function apt(args: string[], cwd = HOME) {
  const o = [
    `Dir::State=${HOME}/state`,
    `Dir::Cache=${HOME}/cache`,
    `Dir::Etc::SourceList=${HOME}/sources.list`,
    `Dir::Etc::SourceParts=${HOME}/parts`,
    'Dir::State::status=/dev/null',
  ].flatMap((x) => ['-o', x]);
  return spawnSync('apt-get', [...o, ...args], { cwd, encoding: 'utf8', timeout: 300_000 });
}

/** bullseye's systemd-analyze, fetched and unpacked once; null (and why) where it cannot be. */
async function systemd247(): Promise<{ analyze: string; libs: string } | { why: string }> {
  const analyze = join(HOME, 'root/usr/bin/systemd-analyze');
  const libs = join(HOME, 'root/lib/systemd');
  if (!existsSync(analyze)) {
    for (const d of ['state/lists/partial', 'cache/archives/partial', 'parts', 'download'])
      await mkdir(join(HOME, d), { recursive: true });
    await writeFile(join(HOME, 'sources.list'), SOURCES);
    const update = apt(['update']);
    if (update.status !== 0) return { why: `apt-get update of bullseye failed: ${update.stderr.trim()}` };
    const dl = apt(['download', 'systemd'], join(HOME, 'download'));
    const deb = (await readdir(join(HOME, 'download'))).find((f) => /^systemd_247\..*\.deb$/.test(f));
    if (dl.status !== 0 || !deb) return { why: `apt-get download systemd failed: ${dl.stderr.trim()}` };
    const x = spawnSync('dpkg-deb', ['-x', join(HOME, 'download', deb), join(HOME, 'root')]);
    if (x.status !== 0) return { why: `dpkg-deb -x: ${x.stderr}` };
  }
  return { analyze, libs };
}

describe('systemd-analyze verify of Debian 11 (systemd 247)', () => {
  let dir = '';
  let tool: Awaited<ReturnType<typeof systemd247>>;
  beforeAll(async () => {
    tool = await systemd247();
    dir = await mkdtemp(join(tmpdir(), 'svc-units-247-'));
    await mkdir(join(dir, 'prefix/bin'), { recursive: true });
    await symlink(BIN, join(dir, 'prefix/bin/svc-ingest'));
  }, 400_000);
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** The lines verify prints about the files in `at` (the host's own units, 252's, draw 247's warnings too). */
  function verify(at: string, units: string[]): { status: number | null; ours: string[] } {
    if ('why' in tool) throw new Error(tool.why);
    const r = spawnSync(tool.analyze, ['verify', ...units], {
      cwd: at,
      encoding: 'utf8',
      env: { ...process.env, LD_LIBRARY_PATH: tool.libs, SYSTEMD_COLORS: '0' },
    });
    const ours = `${r.stdout}${r.stderr}`.split('\n').filter((l) => l.includes(at));
    return { status: r.status, ours };
  }

  /** The unit (its launcher path put in this clone's), the timer, and the drop-ins given, in a folder of its own. */
  async function folder(name: string, unit: string, dropIns: Record<string, string> = {}) {
    const at = join(dir, name);
    await mkdir(join(at, 'svc-ingest.service.d'), { recursive: true });
    await writeFile(join(at, 'svc-ingest.service'), unit.replaceAll('/opt/svc-ingest/', `${dir}/prefix/`));
    await writeFile(join(at, 'svc-ingest.timer'), await readFile(join(SYSTEMD, 'svc-ingest.timer')));
    for (const [f, text] of Object.entries(dropIns))
      await writeFile(join(at, 'svc-ingest.service.d', f), text);
    return at;
  }

  it('is systemd 247 (bullseye)', () => {
    if ('why' in tool) throw new Error(tool.why);
    const r = spawnSync(tool.analyze, ['--version'], {
      encoding: 'utf8',
      env: { ...process.env, LD_LIBRARY_PATH: tool.libs },
    });
    expect(r.stdout).toMatch(/^systemd 247 \(247\.\d/);
  });

  it('the unit and the timer: nothing to say; with the before-247 drop-in too', async () => {
    const unit = await readFile(join(SYSTEMD, 'svc-ingest.service'), 'utf8');
    const bare = verify(await folder('bare', unit), ['svc-ingest.service', 'svc-ingest.timer']);
    expect(bare.ours).toEqual([]);
    expect(bare.status).toBe(0);
    const dropIn = await readFile(join(SYSTEMD, 'svc-ingest-before-247.conf'), 'utf8');
    const withIt = verify(await folder('dropin', unit, { 'before-247.conf': dropIn }), [
      'svc-ingest.service',
      'svc-ingest.timer',
    ]);
    expect(withIt.ours).toEqual([]);
    expect(withIt.status).toBe(0);
  });

  it("the previous release's unit (its %d line): 247 drops the token's Environment= line, as the issue found", async () => {
    const git = spawnSync('git', ['-C', ROOT, 'show', '289b3b2:deploy/systemd/svc-ingest.service'], {
      encoding: 'utf8',
    });
    if (git.status !== 0) return; // a clone without that commit (shallow): nothing to compare with
    const old = verify(await folder('previous', git.stdout), ['svc-ingest.service']);
    expect(old.ours).toEqual([
      expect.stringMatching(/Failed to resolve unit specifiers in SVC_AUTH_TOKEN_FILE=%d\/token, ignoring/),
    ]);
  });
});
