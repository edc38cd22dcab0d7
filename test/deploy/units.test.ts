// deploy/: the systemd service and timer pass `systemd-analyze verify` (where the command exists) with nothing to
// say, and name options the CLI has; the Kubernetes CronJob is well-formed YAML with what running this tool needs
// (one run at a time, the token from a Secret, the ledger on a volume or from a Secret, a read-only export), and
// its command is one `svc-ingest send --help` accepts. The README's `send … && ledger prune` cron line, run as
// written, prunes after a night with rejects too.
import { spawn, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { BIN, collectOutput, compileCacheEnv, ROOT, runCli } from '../helpers/cli.ts';
import { jsonLines } from '../helpers/nights.ts';
import { useSimulator } from '../helpers/simulator.ts';

const SYSTEMD = join(ROOT, 'deploy/systemd');
// A parsed manifest: checked by hand, member by member.
// biome-ignore lint/suspicious/noExplicitAny: YAML of any shape, read by path
type Manifest = Record<string, any>;

const hasSystemdAnalyze = spawnSync('systemd-analyze', ['--version']).status === 0;

/** The options of `svc-ingest send` as its --help lists them. */
async function sendOptions(): Promise<Set<string>> {
  const help = await runCli(['send', '--help']);
  return new Set([...help.stdout.matchAll(/^\s+(?:-\w, )?(--[a-z-]+)/gm)].map((m) => m[1]!));
}

/** The arguments of the unit's ExecStart (continuation lines joined). */
function execStart(unit: string): string[] {
  const m = /^ExecStart=((?:.*\\\n)*.*)$/m.exec(unit);
  if (!m) throw new Error('no ExecStart');
  return m[1]!.replace(/\\\n/g, ' ').trim().split(/\s+/);
}

describe('deploy/systemd', () => {
  it.skipIf(!hasSystemdAnalyze)(
    'systemd-analyze verify passes on the service and the timer, with no warning, and with the before-247 drop-in',
    async () => {
      // The unit names the installed launcher under /opt/svc-ingest; verify checks that it exists and is
      // executable, so point it at this clone's launcher through a prefix of the same shape.
      const dir = await mkdtemp(join(tmpdir(), 'svc-units-'));
      await mkdir(join(dir, 'prefix/bin'), { recursive: true });
      await symlink(BIN, join(dir, 'prefix/bin/svc-ingest'));
      const service = await readFile(join(SYSTEMD, 'svc-ingest.service'), 'utf8');
      expect(service).toContain('ExecStart=/opt/svc-ingest/bin/svc-ingest send');
      await writeFile(
        join(dir, 'svc-ingest.service'),
        service.replaceAll('/opt/svc-ingest/', `${dir}/prefix/`),
      );
      await writeFile(join(dir, 'svc-ingest.timer'), await readFile(join(SYSTEMD, 'svc-ingest.timer')));
      const verify = () =>
        spawnSync('systemd-analyze', ['verify', 'svc-ingest.service', 'svc-ingest.timer'], {
          cwd: dir,
          encoding: 'utf8',
        });
      const r = verify();
      expect(`${r.stdout}${r.stderr}`).toBe('');
      expect(r.status).toBe(0);
      // And with the drop-in the packages add on systemd older than 247 (read from the unit's .d folder beside it).
      await mkdir(join(dir, 'svc-ingest.service.d'));
      await writeFile(
        join(dir, 'svc-ingest.service.d/before-247.conf'),
        await readFile(join(SYSTEMD, 'svc-ingest-before-247.conf')),
      );
      const withDropIn = verify();
      expect(`${withDropIn.stdout}${withDropIn.stderr}`).toBe('');
      expect(withDropIn.status).toBe(0);
    },
  );
  if (!hasSystemdAnalyze)
    it.skip(
      'systemd-analyze verify: skipped, this machine has no systemd-analyze (Debian: apt-get install systemd)',
    );

  it('the service: exit statuses, state, user, hardening, and options the CLI has', async () => {
    const service = await readFile(join(SYSTEMD, 'svc-ingest.service'), 'utf8');
    const keys = (key: string) => [...service.matchAll(new RegExp(`^${key}=(.*)$`, 'gm'))].map((m) => m[1]);
    expect(keys('Type')).toEqual(['oneshot']);
    expect(keys('User')).toEqual(['svc-ingest']);
    expect(keys('StateDirectory')).toEqual(['svc-ingest']);
    expect(keys('SuccessExitStatus')).toEqual(['2']);
    expect(keys('RestartPreventExitStatus')).toEqual(['1 4 130 143']);
    expect(keys('Restart')).toEqual(['on-failure']);
    for (const [k, v] of [
      ['NoNewPrivileges', 'yes'],
      ['ProtectSystem', 'strict'],
      ['PrivateTmp', 'yes'],
      ['ReadOnlyPaths', '/srv/exports'],
    ])
      expect(keys(k!), k).toEqual([v]);
    const args = execStart(service);
    expect(args.slice(0, 2)).toEqual(['/opt/svc-ingest/bin/svc-ingest', 'send']);
    const known = await sendOptions();
    for (const a of args.filter((x) => x.startsWith('--'))) expect(known, a).toContain(a);
    // The export it reads is under the read-only folder; the state under the state directory.
    expect(args.at(-1)).toMatch(/^\/srv\/exports\//);
    // The ledger: a setting an operator's SVC_LEDGER_URL overrides (docs/configuration.md), never --ledger.
    expect(args).not.toContain('--ledger');
    expect(keys('Environment').filter((e) => e!.startsWith('SVC_LEDGER_PATH='))).toEqual([
      'SVC_LEDGER_PATH=/var/lib/svc-ingest/transactions.ndjson',
    ]);
    const timer = await readFile(join(SYSTEMD, 'svc-ingest.timer'), 'utf8');
    expect(timer).toMatch(/^OnCalendar=\*-\*-\* 02:30:00$/m);
    expect(timer).toMatch(/^Unit=svc-ingest\.service$/m);
  });

  it.skipIf(!hasSystemdAnalyze)(
    'the timer fires every night at 02:30, as systemd reads its OnCalendar=',
    async () => {
      const timer = await readFile(join(SYSTEMD, 'svc-ingest.timer'), 'utf8');
      const onCalendar = /^OnCalendar=(.*)$/m.exec(timer)![1]!;
      const r = spawnSync('systemd-analyze', ['calendar', '--iterations=2', onCalendar], {
        encoding: 'utf8',
        env: { ...process.env, TZ: 'UTC' },
      });
      expect(r.status, r.stderr).toBe(0);
      const elapses = [
        ...r.stdout.matchAll(/(?:Next elapse|Iter\. #2): \w+ (\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)/g),
      ];
      expect(elapses.map((m) => m[2])).toEqual(['02:30:00', '02:30:00']);
      const [a, b] = elapses.map((m) => Date.parse(`${m[1]}T00:00:00Z`));
      expect(b! - a!).toBe(86_400_000);
    },
  );
});

describe('deploy/kubernetes', () => {
  it('the CronJob is well-formed and runs svc-ingest send once at a time, token and ledger as documented', async () => {
    const text = await readFile(join(ROOT, 'deploy/kubernetes/svc-ingest-cronjob.yaml'), 'utf8');
    const docs = parseAllDocuments(text);
    for (const d of docs) expect(d.errors).toEqual([]);
    const objects = docs.map((d) => d.toJS()) as Manifest[];
    const cron = objects.find((o) => o.kind === 'CronJob')!;
    expect(cron.apiVersion).toBe('batch/v1');
    expect(cron.spec.concurrencyPolicy).toBe('Forbid');
    expect(cron.spec.schedule).toBe('30 2 * * *');
    const job = cron.spec.jobTemplate.spec;
    // What each exit status means to the Job, against the unit's: test/deploy/cronjob-run.test.ts.
    expect(job.podFailurePolicy.rules.at(-1)).toMatchObject({
      action: 'FailJob',
      onExitCodes: { operator: 'In', values: [1, 4, 130, 143] },
    });
    const pod = job.template.spec;
    expect(pod.restartPolicy).toBe('Never');
    const [container] = pod.containers;
    expect(container.command.slice(0, 2)).toEqual(['svc-ingest', 'send']);
    const known = await sendOptions();
    for (const a of (container.command as string[]).filter((x) => x.startsWith('--')))
      expect(known, a).toContain(a);

    // Every mount has its volume; the token is a Secret's file, named by SVC_AUTH_TOKEN_FILE.
    const volumes = new Map((pod.volumes as Manifest[]).map((v) => [v.name, v]));
    const mounts = container.volumeMounts as Array<{ name: string; mountPath: string; readOnly?: boolean }>;
    for (const m of mounts) expect(volumes.has(m.name), m.name).toBe(true);
    const env = new Map(
      (container.env as Array<{ name: string; value?: string }>).map((e) => [e.name, e.value]),
    );
    const tokenFile = env.get('SVC_AUTH_TOKEN_FILE')!;
    const tokenMount = mounts.find((m) => tokenFile.startsWith(`${m.mountPath}/`))!;
    expect(volumes.get(tokenMount.name)!.secret.secretName).toBeTruthy();
    expect(env.get('SVC_LOG_FORMAT')).toBe('json');

    // The ledger is on the persistent volume the file declares, named by SVC_LEDGER_PATH (which SVC_LEDGER_URL
    // overrides; never --ledger); the export folder is mounted read-only.
    expect(container.command).not.toContain('--ledger');
    const ledger = env.get('SVC_LEDGER_PATH')!;
    const ledgerMount = mounts.find((m) => ledger.startsWith(`${m.mountPath}/`))!;
    const claim = volumes.get(ledgerMount.name)!.persistentVolumeClaim.claimName;
    expect(objects.find((o) => o.kind === 'PersistentVolumeClaim' && o.metadata.name === claim)).toBeTruthy();
    const input = container.command.at(-1) as string;
    expect(mounts.find((m) => input.startsWith(`${m.mountPath}/`))?.readOnly).toBe(true);
    // The root filesystem is read-only: the temporary files go to a writable /tmp.
    expect(container.securityContext.readOnlyRootFilesystem).toBe(true);
    expect(mounts.find((m) => m.mountPath === '/tmp')).toBeTruthy();
  });
});

describe("the README's cron line `send … && ledger prune`", () => {
  const sim = useSimulator({ seed: 31 });

  it('a night with rejects under the caps is a success: the prune after `&&` runs, night after night', async () => {
    const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
    const line = /^(?:\S+\s+){5}(svc-ingest send .* && svc-ingest ledger prune .*)$/m.exec(readme)?.[1];
    expect(line, 'a crontab line with `send … && ledger prune` in README.md').toBeTruthy();
    const dir = await mkdtemp(join(tmpdir(), 'svc-cron-prune-'));
    // As cron runs it (`\%` is cron's `%`), with the paths of a temporary folder and an export with rejects.
    const command = line!
      .replaceAll('\\%', '%')
      .replaceAll('/var/lib/svc-ingest', dir)
      .replace('/data/nightly.csv', join(ROOT, 'samples/canonical.csv'))
      .replace(/(^|&& )svc-ingest /g, `$1${BIN} `);
    // Two nights in a row, as cron runs it: the second finds the same export acknowledged (skipped) and prunes again.
    const night = () =>
      collectOutput(
        spawn('sh', ['-c', command], {
          env: {
            PATH: process.env.PATH,
            // The compile cache cron's HOME would give the CLI, in the clone's (cli.ts) instead of the user's.
            ...compileCacheEnv(),
            SVC_BASE_URL: sim.url,
            SVC_SEND_HEALTH_CHECK_WINDOW_MS: '0',
            SVC_LOG_FORMAT: 'json',
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        }),
      ).closed;
    for (const [n, skipped] of [
      [1, false],
      [2, true],
    ] as const) {
      const r = await night();
      expect(r.code, `night ${n}: ${r.stderr}`).toBe(0);
      const end = jsonLines(r.stderr).find((l) => l.event === 'run.end')!;
      expect([end.exitStatus, Number(end.rejected) > 0, Number(end.skipped) > 0]).toEqual([0, true, skipped]);
      expect(r.stdout).toMatch(/from before .* dropped/);
    }
  });
});
