// The shipped units against docs/install.md's "systemd versions" tables: every setting, value and specifier they use
// has its first systemd version there; on each named platform's systemd the unit, with the drop-in where the
// packages add it, loads and hands the token over; an Environment= with a specifier a version cannot resolve is
// dropped whole, as systemd 247–250 drop `%d`. And the packages' install functions (packaging/maintainer.sh), run
// against a `systemctl` that answers each platform's version, add the drop-in below 247 and only there, give
// /etc/svc-ingest its group and mode, make the env file 0640, and purge what they and the service made.
import { spawnSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.ts';
import { unitOf } from '../helpers/systemd-unit.ts';
import {
  asSystemd,
  BEFORE_247,
  features,
  installedUnit,
  platforms,
  versionTable,
  withDropIns,
} from '../helpers/systemd-versions.ts';

const SYSTEMD = join(ROOT, 'deploy/systemd');

/** The drop-in packaging/stage.sh writes (package.conf), as the script has it. */
async function packageConf(): Promise<string> {
  const stage = await readFile(join(ROOT, 'packaging/stage.sh'), 'utf8');
  const m = /package\.conf" <<'CONF'\n([\s\S]*?)\nCONF/.exec(stage);
  if (!m) throw new Error('packaging/stage.sh: no package.conf');
  return m[1]!;
}

describe("the shipped units and docs/install.md's systemd versions", () => {
  it('every setting, value and specifier of the unit, timer and drop-ins has its row', async () => {
    const table = versionTable();
    const texts = await Promise.all(
      ['svc-ingest.service', 'svc-ingest.timer', 'svc-ingest-before-247.conf'].map((f) =>
        readFile(join(SYSTEMD, f), 'utf8'),
      ),
    );
    const pkg = await packageConf();
    // Each file alone (the unit's oneshot with Restart=), and the unit with its drop-ins merged.
    const used = [
      ...new Set([
        ...[...texts, pkg].flatMap((t) => [...features(unitOf('svc-ingest.service', t))]),
        ...features(withDropIns('svc-ingest.service', texts[0]!, ...texts.slice(1), pkg)),
      ]),
    ];
    expect(used.filter((f) => !table.has(f))).toEqual([]);
    // The rows that matter, as systemd's NEWS has them (the test reads the table; these pin it).
    expect(
      Object.fromEntries(
        ['LoadCredential=', 'ProtectClock=', 'ProtectKernelLogs=', 'ExecStartPre=+', '%d'].map((f) => [
          f,
          table.get(f)?.since,
        ]),
      ),
    ).toEqual({
      'LoadCredential=': 247,
      'ProtectClock=': 245,
      'ProtectKernelLogs=': 244,
      'ExecStartPre=+': 231,
      '%d': 251,
    });
    expect(table.get('Type=oneshot with Restart=on-failure')).toMatchObject({ since: 244 });
    expect(used).toContain('Type=oneshot with Restart=on-failure');
    // No specifier at all: the token is found through $CREDENTIALS_DIRECTORY, never through %d.
    expect(used.filter((f) => f.startsWith('%'))).toEqual([]);
  });

  it("on each platform's systemd the installed unit loads and hands the token over", async () => {
    const text = await readFile(join(SYSTEMD, 'svc-ingest.service'), 'utf8');
    const seen = platforms();
    expect(seen.map((p) => p.systemd)).toEqual(expect.arrayContaining([239, 245, 247, 249]));
    for (const { name, systemd } of seen) {
      const loaded = asSystemd(installedUnit(text, systemd), systemd);
      expect(loaded.loads, `${name}: ${loaded.loads ? '' : loaded.why}`).toBe(true);
      if (!loaded.loads) continue;
      const u = loaded.unit;
      const byCredential = u.all('LoadCredential').some((l) => l.startsWith('token:/etc/svc-ingest/token'));
      const byCopy =
        u.all('ExecStartPre').some((l) => l.includes('/etc/svc-ingest/token /run/svc-ingest/token')) &&
        u.all('Environment').includes('SVC_AUTH_TOKEN_FILE=/run/svc-ingest/token');
      expect([name, byCredential || byCopy]).toEqual([name, true]);
      // Below 244 the drop-in's Type=simple is what lets the unit load with Restart=on-failure.
      expect([name, u.get('Restart')]).toEqual([name, 'on-failure']);
    }
  });

  it('an Environment= with %d is dropped whole by 247–250 and kept from 251', () => {
    const unit = unitOf(
      'x.service',
      '[Service]\nEnvironment=SVC_AUTH_TOKEN_FILE=%d/token SVC_LOG_FORMAT=json\nEnvironment=SVC_LOG_LEVEL=info\n',
    );
    for (const v of [247, 250]) {
      const at = asSystemd(unit, v);
      expect(at.loads && at.unit.all('Environment')).toEqual(['SVC_LOG_LEVEL=info']);
    }
    const at251 = asSystemd(unit, 251);
    expect(at251.loads && at251.unit.all('Environment')).toHaveLength(2);
  });
});

/** Runs `calls` of packaging/maintainer.sh's functions in sh, DPKG_ROOT=root, with `systemctl` answering `version`. */
function maintainer(root: string, version: number | null, calls: string) {
  const bin = join(root, '.bin');
  const script = `. ${JSON.stringify(join(ROOT, 'packaging/maintainer.sh'))}\n${calls}`;
  return spawnSync('sh', ['-ec', script], {
    encoding: 'utf8',
    env: {
      PATH: version === null ? `${bin}-none:/usr/bin:/bin` : `${bin}:/usr/bin:/bin`,
      DPKG_ROOT: root,
    },
  });
}

describe("the packages' install functions (packaging/maintainer.sh)", () => {
  let root = '';
  const dropIn = () => join(root, 'etc/systemd/system/svc-ingest.service.d/before-247.conf');
  const has = (p: string) =>
    stat(p).then(
      () => true,
      () => false,
    );
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'svc-maint-'));
    await mkdir(join(root, 'usr/share/svc-ingest'), { recursive: true });
    await writeFile(
      join(root, 'usr/share/svc-ingest/svc-ingest-before-247.conf'),
      await readFile(BEFORE_247),
    );
    await mkdir(join(root, 'etc/svc-ingest'), { recursive: true, mode: 0o755 });
    await writeFile(join(root, 'etc/group'), 'root:x:0:\nsvc-ingest:x:4242:\n');
    await mkdir(join(root, '.bin'));
  });
  afterAll(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('adds the drop-in below systemd 247 only, removes it on a newer one and on removal', async () => {
    for (const [version, added] of [
      [239, true],
      [245, true],
      [246, true],
      [247, false],
      [249, false],
      [252, false],
      [null, false],
    ] as const) {
      if (version !== null) {
        await writeFile(
          join(root, '.bin/systemctl'),
          `#!/bin/sh\n[ "$1" = --version ] && printf 'systemd ${version} (${version}-1)\\n+PAM +AUDIT\\n'\n`,
        );
        await chmod(join(root, '.bin/systemctl'), 0o755);
      }
      const r = maintainer(root, version, 'svc_ingest_dropin install');
      expect(r.status, r.stderr).toBe(0);
      expect([version, await has(dropIn())]).toEqual([version, added]);
      if (added) expect(await readFile(dropIn(), 'utf8')).toBe(await readFile(BEFORE_247, 'utf8'));
    }
    await writeFile(join(root, '.bin/systemctl'), "#!/bin/sh\nprintf 'systemd 239 (239-78.el8)\\n'\n");
    expect(maintainer(root, 239, 'svc_ingest_dropin install').status).toBe(0);
    expect(await has(dropIn())).toBe(true);
    expect(maintainer(root, 239, 'svc_ingest_dropin remove').status).toBe(0);
    expect(await has(dropIn())).toBe(false);
    expect(await has(join(root, 'etc/systemd/system/svc-ingest.service.d'))).toBe(false);
  });

  it("/etc/svc-ingest 0750 root:svc-ingest, an env file 0640 (an administrator's one kept); purge removes what it says", async () => {
    const r = maintainer(root, 252, 'svc_ingest_folder');
    expect(r.status, r.stderr).toBe(0);
    const folder = await stat(join(root, 'etc/svc-ingest'));
    expect([folder.mode & 0o7777, folder.uid, folder.gid]).toEqual([0o750, 0, 4242]);
    const env = await stat(join(root, 'etc/svc-ingest/env'));
    expect([env.mode & 0o7777, env.uid, env.gid]).toEqual([0o640, 0, 4242]);
    // Run again (an upgrade): the administrator's settings stay as they are.
    await writeFile(join(root, 'etc/svc-ingest/env'), 'SVC_BASE_URL=https://svc.example.com\n');
    expect(maintainer(root, 252, 'svc_ingest_folder').status).toBe(0);
    expect(await readFile(join(root, 'etc/svc-ingest/env'), 'utf8')).toBe(
      'SVC_BASE_URL=https://svc.example.com\n',
    );
    // What purge removes: the token, the env file, the service's metrics files; the folder once empty; not the
    // ledger, nor another exporter's file.
    await writeFile(join(root, 'etc/svc-ingest/token'), 'secret\n', { mode: 0o600 });
    const textfile = join(root, 'var/lib/prometheus/node-exporter');
    await mkdir(textfile, { recursive: true });
    await writeFile(join(textfile, 'svc_ingest_northwind.prom'), 'x 1\n');
    await writeFile(join(textfile, 'apt.prom'), 'x 1\n');
    await mkdir(join(root, 'var/lib/svc-ingest'), { recursive: true });
    await writeFile(join(root, 'var/lib/svc-ingest/transactions.ndjson'), '{}\n');
    expect(maintainer(root, 252, 'svc_ingest_purge').status).toBe(0);
    expect(await has(join(root, 'etc/svc-ingest'))).toBe(false);
    expect(await has(join(textfile, 'svc_ingest_northwind.prom'))).toBe(false);
    expect(await has(join(textfile, 'apt.prom'))).toBe(true);
    expect(await has(join(root, 'var/lib/svc-ingest/transactions.ndjson'))).toBe(true);
  });
});
