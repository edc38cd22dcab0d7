// The .deb and the .rpm (make deb rpm): lintian finds no error in the .deb; the .deb installed into a scratch root
// (dpkg --root, its maintainer scripts run outside a chroot with DPKG_ROOT set, as Debian's tools run them for a
// root being built) gives a working /usr/bin/svc-ingest, the units (the installed unit's header the package's
// steps), the sysusers file and its user, the conffile, /etc/svc-ingest 0750 root:svc-ingest with an env file 0640,
// the before-247 drop-in where `systemctl --version` answers 239, and no timer enabled; purged, it removes the
// token, the env file, the drop-in and the service's metrics files, and keeps the ledger. The .rpm lists the same
// files, the folder's mode and group, and its scriptlets create the user, run the same install functions and enable
// nothing.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.ts';
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
    // The libraries are the host's (the scratch root has no libc6 package): --force-depends. A `systemctl` that
    // answers RHEL 8's version first on PATH: the install script adds the before-247 drop-in.
    await mkdir(join(root, '.fake-bin'));
    await writeFile(join(root, '.fake-bin/systemctl'), "#!/bin/sh\nprintf 'systemd 239 (239-78.el8)\\n'\n", {
      mode: 0o755,
    });
    const install = await run(
      'dpkg',
      [`--root=${root}`, '--force-script-chrootless', '--force-depends', '--log=/dev/null', '-i', DEB],
      { env: { ...process.env, PATH: `${join(root, '.fake-bin')}:${process.env.PATH}` } },
    );
    expect(install.code, why(install)).toBe(0);
    expect(
      await readFile(join(root, 'etc/systemd/system/svc-ingest.service.d/before-247.conf'), 'utf8'),
    ).toBe(await readFile(join(ROOT, 'deploy/systemd/svc-ingest-before-247.conf'), 'utf8'));
    for (const f of FILES) expect(existsSync(join(root, f)), f).toBe(true);
    const version = await run(join(root, 'usr/bin/svc-ingest'), ['--version'], {
      env: { PATH: '/nonexistent' },
    });
    expect(version.stdout).toBe((await run(built(EXE), ['--version'])).stdout);
    expect(version.stdout).toMatch(/^\d+\.\d+\.\d+ \([0-9a-f]{7}(-dirty)?\)\n$/);
    const unit = await readFile(join(root, 'usr/lib/systemd/system/svc-ingest.service'), 'utf8');
    expect(unit).toMatch(/^ExecStart=\/usr\/bin\/svc-ingest send/m);
    // Its header gives the package's steps, not the npm install's.
    const header = unit.slice(0, unit.indexOf('[Unit]'));
    expect(header).toContain('installed by the svc-ingest package');
    expect(header).not.toMatch(/\/opt|npm/);
    // systemd-sysusers ran against the scratch root (where the machine has it: Debian's systemd package).
    if ((await run('sh', ['-c', 'command -v systemd-sysusers'])).code === 0)
      expect(await readFile(join(root, 'etc/passwd'), 'utf8')).toMatch(
        /^svc-ingest:x:\d+:\d+:.*:\/var\/lib\/svc-ingest:/m,
      );
    expect(existsSync(join(root, 'etc/systemd/system/timers.target.wants/svc-ingest.timer'))).toBe(false);
    const status = await run('dpkg', [`--root=${root}`, '-s', 'svc-ingest']);
    expect(status.stdout).toContain('Status: install ok installed');
  });

  it('/etc/svc-ingest is 0750 root:svc-ingest with an env file 0640; purge removes the token, env and metrics, keeps the ledger', async () => {
    const group = /^svc-ingest:[^:]*:(\d+):/m.exec(
      await readFile(join(root, 'etc/group'), 'utf8').catch(() => ''),
    );
    if (!group) {
      // No systemd-sysusers on this machine: no user, nothing to give the folder.
      expect((await run('sh', ['-c', 'command -v systemd-sysusers'])).code).not.toBe(0);
      return;
    }
    const gid = Number(group[1]);
    const folder = await stat(join(root, 'etc/svc-ingest'));
    expect([folder.mode & 0o7777, folder.uid, folder.gid]).toEqual([0o750, 0, gid]);
    const env = await stat(join(root, 'etc/svc-ingest/env'));
    expect([env.mode & 0o7777, env.uid, env.gid]).toEqual([0o640, 0, gid]);
    // What the administrator and the service made: the token, the settings, a night's metrics, the ledger.
    await writeFile(join(root, 'etc/svc-ingest/token'), 'secret\n', { mode: 0o600 });
    await writeFile(join(root, 'etc/svc-ingest/env'), 'SVC_BASE_URL=https://svc.example.com\n');
    const textfile = join(root, 'var/lib/prometheus/node-exporter');
    await mkdir(textfile, { recursive: true });
    await writeFile(join(textfile, 'svc_ingest_northwind.prom'), 'svc_ingest_exit_status 0\n');
    await mkdir(join(root, 'var/lib/svc-ingest'), { recursive: true });
    await writeFile(join(root, 'var/lib/svc-ingest/transactions.ndjson'), '{}\n');
    const purge = await run('dpkg', [
      `--root=${root}`,
      '--force-script-chrootless',
      '--force-depends',
      '--log=/dev/null',
      '--purge',
      'svc-ingest',
    ]);
    expect(purge.code, why(purge)).toBe(0);
    for (const gone of [
      'etc/svc-ingest',
      'etc/systemd/system/svc-ingest.service.d',
      'var/lib/prometheus/node-exporter/svc_ingest_northwind.prom',
      'usr/bin/svc-ingest',
    ])
      expect(existsSync(join(root, gone)), gone).toBe(false);
    expect(existsSync(join(root, 'var/lib/svc-ingest/transactions.ndjson'))).toBe(true);
  });
});

describe('the .rpm', () => {
  it('lists the same files, needs only the libraries it links, and its scriptlets enable nothing', async () => {
    const list = await run('rpm', ['-qpl', built(RPM)]);
    expect(list.code, why(list)).toBe(0);
    for (const f of FILES) expect(list.stdout.split('\n')).toContain(f);
    // The folder: 0755 as shipped (rpmlint), 0750 and the user's group from %post, which rpm -V does not check.
    const verify = await run('rpm', ['-qp', '--qf', '[%{FILENAMES} %{FILEVERIFYFLAGS:hex}\n]', RPM]);
    const flags = Number.parseInt(/^\/etc\/svc-ingest ([0-9a-f]+)$/m.exec(verify.stdout)?.[1] ?? '0', 16);
    // RPMVERIFY_GROUP (1 << 4) and RPMVERIFY_MODE (1 << 6) off, the rest on.
    expect([flags & 0x50, flags & 0xaf]).toEqual([0, 0xaf]);
    const config = await run('rpm', ['-qpc', RPM]);
    expect(config.stdout.trim()).toBe('/etc/svc-ingest/config.json');
    const needs = await run('rpm', ['-qpR', RPM]);
    expect(needs.stdout).toContain('libc.so.6(GLIBC_2.28)(64bit)');
    expect(needs.stdout).not.toMatch(/nodejs|npm/);
    const scripts = (await run('rpm', ['-qp', '--scripts', RPM])).stdout;
    expect(scripts).toContain('systemd-sysusers svc-ingest.conf');
    expect(scripts).toContain('daemon-reload');
    expect(scripts).not.toMatch(/systemctl (enable|start|preset)/);
    // The same install functions as the .deb's: the drop-in by systemd's version, the folder, and on removal the
    // purge (rpm has none of its own).
    expect(scripts).toMatch(/^postinstall scriptlet[\s\S]*svc_ingest_folder\nsvc_ingest_dropin install$/m);
    expect(scripts).toMatch(/^postuninstall scriptlet[\s\S]*svc_ingest_dropin remove\n\s*svc_ingest_purge$/m);
    expect(scripts).toContain("printf '%s\\n'");
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
