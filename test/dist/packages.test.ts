// The .deb and the .rpm (make deb rpm): lintian finds no error in the .deb; the .deb installed into a scratch root
// (dpkg --root, its maintainer scripts run outside a chroot with DPKG_ROOT set, as Debian's tools run them for a
// root being built) gives a working /usr/bin/svc-ingest, the units, the sysusers file and its user, the conffile,
// and no timer enabled; the .rpm lists the same files and its scriptlets create the user and enable nothing.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { built, DIST, EXE, run, VERSION, why } from './helpers.ts';

const DEB = join(DIST, `svc-ingest_${VERSION}_amd64.deb`);
const RPM = join(DIST, `svc-ingest-${VERSION}-1.x86_64.rpm`);

const FILES = [
  '/usr/bin/svc-ingest',
  '/usr/lib/systemd/system/svc-ingest.service',
  '/usr/lib/systemd/system/svc-ingest.timer',
  '/usr/lib/systemd/system/svc-ingest.service.d/package.conf',
  '/usr/lib/sysusers.d/svc-ingest.conf',
  '/etc/svc-ingest/config.json',
  '/usr/share/doc/svc-ingest/copyright',
  '/usr/share/man/man1/svc-ingest.1.gz',
];

describe('the .deb', () => {
  let root = '';
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'svc-deb-root-'));
  });
  afterAll(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('passes lintian with no error (the two overrides are explained in the package)', async () => {
    const r = await run('lintian', ['--tag-display-limit', '0', built(DEB)]);
    expect(
      r.stdout.split('\n').filter((l) => /^E: /.test(l)),
      why(r),
    ).toEqual([]);
    expect(r.code, why(r)).toBe(0);
  });

  it('holds the files, the conffile and maintainer scripts that enable and start nothing', async () => {
    const list = await run('dpkg-deb', ['--contents', built(DEB)]);
    const paths = list.stdout.split('\n').map((l) => l.split(/\s+/)[5]?.replace(/^\./, ''));
    for (const f of FILES) expect(paths).toContain(f);
    expect(list.stdout).toMatch(/^-rwxr-xr-x root\/root .* \.\/usr\/bin\/svc-ingest$/m);
    const conffiles = await run('dpkg-deb', ['--info', DEB, 'conffiles']);
    expect(conffiles.stdout.trim()).toBe('/etc/svc-ingest/config.json');
    for (const script of ['postinst', 'prerm', 'postrm']) {
      const text = (await run('dpkg-deb', ['--info', DEB, script])).stdout
        .split('\n')
        .filter((l) => !/^\s*#/.test(l))
        .join('\n');
      expect(text).not.toMatch(/\b(enable|start)\b.*svc-ingest|deb-systemd-helper enable/);
    }
  });

  it('installs into a scratch root: /usr/bin/svc-ingest runs, the user exists, the timer is not enabled', async () => {
    for (const d of ['var/lib/dpkg/info', 'var/lib/dpkg/updates', 'var/log', 'etc'])
      await mkdir(join(root, d), { recursive: true });
    await writeFile(join(root, 'var/lib/dpkg/status'), '');
    await writeFile(join(root, 'var/lib/dpkg/available'), '');
    // The libraries are the host's (the scratch root has no libc6 package): --force-depends.
    const install = await run('dpkg', [
      `--root=${root}`,
      '--force-script-chrootless',
      '--force-depends',
      '--log=/dev/null',
      '-i',
      DEB,
    ]);
    expect(install.code, why(install)).toBe(0);
    for (const f of FILES) expect(existsSync(join(root, f)), f).toBe(true);
    const version = await run(join(root, 'usr/bin/svc-ingest'), ['--version'], {
      env: { PATH: '/nonexistent' },
    });
    expect(version.stdout).toBe((await run(built(EXE), ['--version'])).stdout);
    expect(version.stdout).toMatch(/^\d+\.\d+\.\d+ \([0-9a-f]{7}(-dirty)?\)\n$/);
    const unit = await readFile(join(root, 'usr/lib/systemd/system/svc-ingest.service'), 'utf8');
    expect(unit).toMatch(/^ExecStart=\/usr\/bin\/svc-ingest send/m);
    // systemd-sysusers ran against the scratch root (where the machine has it: Debian's systemd package).
    if ((await run('sh', ['-c', 'command -v systemd-sysusers'])).code === 0)
      expect(await readFile(join(root, 'etc/passwd'), 'utf8')).toMatch(
        /^svc-ingest:x:\d+:\d+:.*:\/var\/lib\/svc-ingest:/m,
      );
    expect(existsSync(join(root, 'etc/systemd/system/timers.target.wants/svc-ingest.timer'))).toBe(false);
    const status = await run('dpkg', [`--root=${root}`, '-s', 'svc-ingest']);
    expect(status.stdout).toContain('Status: install ok installed');
  });
});

describe('the .rpm', () => {
  it('lists the same files, needs only the libraries it links, and its scriptlets enable nothing', async () => {
    const list = await run('rpm', ['-qpl', built(RPM)]);
    expect(list.code, why(list)).toBe(0);
    for (const f of FILES) expect(list.stdout.split('\n')).toContain(f);
    const config = await run('rpm', ['-qpc', RPM]);
    expect(config.stdout.trim()).toBe('/etc/svc-ingest/config.json');
    const needs = await run('rpm', ['-qpR', RPM]);
    expect(needs.stdout).toContain('libc.so.6(GLIBC_2.28)(64bit)');
    expect(needs.stdout).not.toMatch(/nodejs|npm/);
    const scripts = (await run('rpm', ['-qp', '--scripts', RPM])).stdout;
    expect(scripts).toContain('systemd-sysusers svc-ingest.conf');
    expect(scripts).toContain('daemon-reload');
    expect(scripts).not.toMatch(/systemctl (enable|start|preset)/);
  });

  it('rpmlint finds no error but the missing signature (signing is the release key holder’s step)', async () => {
    if ((await run('sh', ['-c', 'command -v rpmlint'])).code !== 0) return;
    const r = await run('rpmlint', [RPM]);
    const errors = r.stdout.split('\n').filter((l) => /: E: /.test(l));
    expect(
      errors.map((l) => l.split(': E: ')[1]?.split(' ')[0]),
      why(r),
    ).toEqual(['no-signature']);
  });
});
