// deploy/systemd run as systemd runs it (test/helpers/systemd-unit.ts): the unit's ExecStart as a throwaway user
// made from the sysusers line, its umask, environment, credential, state folder and ProtectSystem=strict, with
// /opt, /srv and /var/lib of a temporary root, against the simulator. Nights: a good one (exit 0), one with
// rejects (exit 2: a success), one with the service down (exit 5, restarted, then delivered), one that could not
// run (exit 1, not restarted); node_exporter's textfile reads the metrics file as another user; the docs'
// failed-night recipe, run on the journal of those nights, finds the failed ones and only those. An operator's
// SVC_LEDGER_URL in /etc/svc-ingest/env (the password a credential, as docs/install.md says) takes effect: the
// night is recorded in that database. Then a night under each named platform's systemd (docs/install.md, "systemd
// versions"): the unit as the packages install it there (the before-247 drop-in below 247), as that version loads
// it (test/helpers/systemd-versions.ts); the service demands the token, so each of them proves it was handed over.
import { chmod, chown, mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.ts';
import { type Front, startFront } from '../helpers/front.ts';
import { addUser, isolationUnavailable, LAUNCHER_INSIDE, runIsolated } from '../helpers/isolate.ts';
import { hasJq, jsonLines, northwindExport, runRecipe } from '../helpers/nights.ts';
import { usePostgres } from '../helpers/postgres.ts';
import { useSimulator } from '../helpers/simulator.ts';
import {
  type Machine,
  NOT_APPLIED,
  runUnit,
  type Start,
  type Unit,
  unitOf,
  unknownDirectives,
} from '../helpers/systemd-unit.ts';
import { asSystemd, installedUnit, platforms } from '../helpers/systemd-versions.ts';

const why = isolationUnavailable();
const UNIT = join(ROOT, 'deploy/systemd/svc-ingest.service');
const EXPORT = '/srv/exports/northwind/nightly.csv.gz';
const TEXTFILE = '/var/lib/prometheus/node-exporter';

describe.skipIf(why !== null)('deploy/systemd/svc-ingest.service, started as systemd starts it', () => {
  // The service demands the token the unit hands over (/etc/svc-ingest/token below): a night that runs without it
  // ends 401.
  const sim = useSimulator({ seed: 29, requireToken: 'systemd-test-token' });
  const pgs = usePostgres();
  let front: Front;
  let root = '';
  let machine: Machine;
  let unit: Unit;
  let unitText = '';
  let removeUser = () => {};
  let uid = 0;
  const journal: Start[] = [];
  const night = async (exportFile: Buffer | null, beforeRestart?: (n: number) => Promise<void>) => {
    const file = join(root, EXPORT);
    if (exportFile) await writeFile(file, exportFile);
    else await rm(file, { force: true });
    const starts = await runUnit(unit, machine, beforeRestart);
    journal.push(...starts);
    return starts;
  };
  const ends = (s: Start) => jsonLines(s.stderr).filter((l) => l.event === 'run.end');

  beforeAll(async () => {
    front = await startFront(sim.url);
    unitText = await readFile(UNIT, 'utf8');
    unit = unitOf('svc-ingest.service', unitText);
    root = await mkdtemp(join(tmpdir(), 'svc-systemd-'));
    await chmod(root, 0o755);
    // The user, as svc-ingest.sysusers.conf declares it (`u NAME - "COMMENT" HOME`), under a throwaway name.
    const sysusers = await readFile(join(ROOT, 'deploy/systemd/svc-ingest.sysusers.conf'), 'utf8');
    const [, name, , comment, home] = /^u (\S+) (\S+) "([^"]*)" (\S+)$/m.exec(sysusers)!;
    expect(name).toBe(unit.get('User'));
    const user = addUser(`svcit${process.pid}`, { home: home!, comment: comment! });
    removeUser = user.remove;
    uid = user.uid;
    machine = { root, etc: join(root, 'etc'), users: { [name!]: { ...user, home: home! } } };
    // What docs/install.md has the operator do: the package under /opt/svc-ingest (here the launcher of the CLI
    // built as the npm package installs it, a link into the clone as the namespace shows it),
    // /etc/svc-ingest/env and token, the export folder, node_exporter's folder writable by the user's group.
    await mkdir(join(root, 'opt/svc-ingest/bin'), { recursive: true });
    await symlink(LAUNCHER_INSIDE, join(root, 'opt/svc-ingest/bin/svc-ingest'));
    await mkdir(join(root, 'etc/svc-ingest'), { recursive: true, mode: 0o750 });
    await writeFile(join(root, 'etc/svc-ingest/token'), 'systemd-test-token\n', { mode: 0o600 });
    // The settings an operator writes; here also one try of the service check instead of a minute of them.
    await writeFile(
      join(root, 'etc/svc-ingest/env'),
      `SVC_BASE_URL=${front.url}\nSVC_SEND_HEALTH_CHECK_WINDOW_MS=0\nSVC_LOG_LEVEL=info\n`,
    );
    await mkdir(join(root, 'srv/exports/northwind'), { recursive: true });
    await mkdir(join(root, TEXTFILE), { recursive: true });
    await chown(join(root, TEXTFILE), 0, user.gid);
    await chmod(join(root, TEXTFILE), 0o775);
    console.log(
      `systemd directives not applied here:\n${Object.entries(NOT_APPLIED)
        .filter(([k]) => unit.get(k) !== undefined)
        .map(([k, v]) => `  ${k}: ${v}`)
        .join('\n')}`,
    );
  }, 30_000);

  afterAll(async () => {
    removeUser();
    await front?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('every directive of the unit is applied, or listed as not applicable here', () => {
    expect(unknownDirectives(unit)).toEqual([]);
    expect(unit.get('ExecStart')).toContain(`--metrics-file ${TEXTFILE}/`);
  });

  it("a good night: exit 0, delivered, the state the user's, the metrics 0644 and read by another user", async () => {
    const [start, ...more] = await night(northwindExport('good'));
    expect(more).toEqual([]);
    expect(start!.code, start!.stderr).toBe(0);
    expect(start!.verdict).toBe('success');
    expect(ends(start!).map((e) => [e.exitStatus, e.sent, e.rejected, e.metricsWritten])).toEqual([
      [0, 27, 0, true],
    ]);
    // The state: in StateDirectory=, the user's, private (UMask=0077); the export named by --source-name.
    const ledger = join(root, 'var/lib/svc-ingest/transactions.ndjson');
    const st = await stat(ledger);
    expect([st.uid, st.mode & 0o777]).toEqual([uid, 0o600]);
    const lines = (await readFile(ledger, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(new Set(lines.filter((l) => l.status).map((l) => l.source))).toEqual(
      new Set(['northwind-nightly']),
    );
    // The metrics: 0644 although UMask=0077, and read by another user (node_exporter's) at the unit's path.
    const prom = `${TEXTFILE}/svc_ingest_northwind.prom`;
    expect((await stat(join(root, prom))).mode & 0o777).toBe(0o644);
    const read = await runIsolated({
      root,
      argv: ['cat', prom],
      env: { PATH: '/usr/bin:/bin' },
      uid: 65534,
      gid: 65534,
      umask: 0o022,
      cwd: '/',
      readOnly: true,
      privateTmp: false,
      noNewPrivileges: true,
    });
    expect(read.code, read.stderr).toBe(0);
    expect(read.stdout).toMatch(/^svc_ingest_records_total\{.*outcome="sent".*\} 27$/m);
    expect(read.stdout).toMatch(/^svc_ingest_exit_status\{feed="northwind"\} 0$/m);
  }, 30_000);

  it('a night with rejects: exit 2, a success to systemd, not restarted', async () => {
    const starts = await night(northwindExport('rejects'));
    expect(starts.map((s) => [s.code, s.verdict])).toEqual([[2, 'success']]);
    expect(ends(starts[0]!).map((e) => [e.skipped, e.rejected])).toEqual([[27, 3]]);
  }, 30_000);

  it('the service down: exit 5, started again (Restart=on-failure), and the restart delivers', async () => {
    front.setDown(true);
    const starts = await night(northwindExport('good', 'NW2026'), async () => front.setDown(false));
    expect(starts.map((s) => [s.code, s.verdict])).toEqual([
      [5, 'restart'],
      [0, 'success'],
    ]);
    expect(ends(starts[1]!).map((e) => [e.sent, e.skipped])).toEqual([[27, 0]]);
  }, 30_000);

  it('a night that cannot run (no export): exit 1, not restarted', async () => {
    const starts = await night(null);
    expect(starts.map((s) => [s.code, s.verdict])).toEqual([[1, 'failure']]);
  }, 30_000);

  it("SVC_LEDGER_URL in the env file: the unit's ExecStart records the night in that database, not the file", async () => {
    const url = await pgs.createDatabase();
    const db = new URL(url).pathname.slice(1);
    // As docs/install.md has the operator do it: the URL (no password) in the env file, the password as a
    // credential `ledger-password` loaded by a drop-in (systemctl edit svc-ingest.service), which svc-ingest reads
    // from $CREDENTIALS_DIRECTORY itself (no %d, which systemd 247–250 drop).
    const env = join(root, 'etc/svc-ingest/env');
    const settings = await readFile(env, 'utf8');
    await writeFile(env, `${settings}SVC_LEDGER_URL=${pgs.urlWithoutPassword(db)}\n`);
    await writeFile(join(root, 'etc/svc-ingest/ledger-password'), `${pgs.password}\n`, { mode: 0o600 });
    const dropIn = '\n[Service]\nLoadCredential=ledger-password:/etc/svc-ingest/ledger-password\n';
    const withUrl = unitOf('svc-ingest.service', `${await readFile(UNIT, 'utf8')}${dropIn}`);
    const ledgerFile = join(root, 'var/lib/svc-ingest/transactions.ndjson');
    const fileBefore = await readFile(ledgerFile, 'utf8').catch(() => '');
    await writeFile(join(root, EXPORT), northwindExport('good', 'NWPG01'));
    try {
      const starts = await runUnit(withUrl, machine);
      expect(
        starts.map((st) => [st.code, st.verdict]),
        starts[0]?.stderr,
      ).toEqual([[0, 'success']]);
      const start = jsonLines(starts[0]!.stderr).find((l) => l.event === 'run.start')!;
      expect(start.ledger).toMatch(/^postgres:\/\/[^:@]+@127\.0\.0\.1:\d+\//);
      expect(start.ledgerFrom).toBe('ledger.url');
      expect(ends(starts[0]!).map((e) => [e.exitStatus, e.sent])).toEqual([[0, 27]]);
      const [row] = await pgs.sql<{ n: number }>(
        db,
        `SELECT count(*)::int AS n FROM svc_ingest.transaction_states WHERE state = 'acked'`,
      );
      expect(row!.n).toBe(27);
      // The file ledger of the earlier nights is untouched, and the password was never printed.
      expect(await readFile(ledgerFile, 'utf8').catch(() => '')).toBe(fileBefore);
      expect(starts[0]!.stderr).not.toContain(pgs.password);
    } finally {
      await writeFile(env, settings);
    }
  }, 30_000);

  it.skipIf(!hasJq)(
    "the docs' failed-night recipe, on the journal of those nights, finds exactly the failed runs",
    () => {
      // systemd's own lines about the unit are in `journalctl -u` too, and are not JSON.
      const text = journal
        .map(
          (s) => `Starting svc-ingest.service...\n${s.stderr}svc-ingest.service: exited, status=${s.code}\n`,
        )
        .join('');
      const found = runRecipe(text);
      expect(journal.map((s) => s.code)).toEqual([0, 2, 5, 0, 1]);
      expect(found.map((l) => l.exitStatus)).toEqual([5, 1]);
      for (const l of found) expect(String(l.msg)).not.toBe('');
    },
  );
  if (!hasJq)
    it.skip('the failed-night recipe: skipped, this machine has no jq (Debian: apt-get install jq)');

  // Each platform's systemd (docs/install.md, "systemd versions"), and 250: the last before the %d specifier.
  const versions = [...new Set([...platforms().map((p) => p.systemd), 250])].sort((a, b) => a - b);
  it.each(versions)(
    'under systemd %i: the unit as the packages install it there, as that version loads it, authenticates and delivers',
    async (version) => {
      const loaded = asSystemd(installedUnit(unitText, version), version);
      expect(loaded.loads, loaded.loads ? '' : loaded.why).toBe(true);
      if (!loaded.loads) return;
      // CREDENTIALS_DIRECTORY from 247 only (LoadCredential= dropped below); the token the drop-in's copy there.
      expect(loaded.unit.all('LoadCredential').length > 0).toBe(version >= 247);
      const file = join(root, EXPORT);
      await writeFile(file, northwindExport('good', `NW${String(version).padStart(4, '0')}`));
      const starts = await runUnit(loaded.unit, machine);
      expect(
        starts.map((s) => [s.code, s.verdict]),
        starts.map((s) => s.stderr).join('\n'),
      ).toEqual([[0, 'success']]);
      expect(ends(starts[0]!).map((e) => [e.exitStatus, e.sent])).toEqual([[0, 27]]);
    },
    30_000,
  );

  it('without the drop-in, systemd 245 runs the night with no token (401, not restarted) and 239 refuses the unit', async () => {
    const bare = unitOf('svc-ingest.service', unitText);
    expect(asSystemd(bare, 239)).toMatchObject({ loads: false });
    const at245 = asSystemd(bare, 245);
    if (!at245.loads) throw new Error(at245.why);
    await writeFile(join(root, EXPORT), northwindExport('good', 'NW9245'));
    const starts = await runUnit(at245.unit, machine);
    expect(starts.map((s) => [s.code, s.verdict])).toEqual([[1, 'failure']]);
    expect(starts[0]!.stderr).toContain('401');
  }, 30_000);
});

if (why !== null) describe.skip(`deploy/systemd run as systemd runs it: skipped, ${why}`, () => {});
