// deploy/kubernetes/svc-ingest-cronjob.yaml run as the kubelet runs its container (test/helpers/k8s-job.ts): its
// command (the CLI built as the npm package installs it for the image's svc-ingest), env, user, fsGroup, no
// privilege escalation, no capability and a read-only root file system, with its volumes mounted, against the
// simulator. A good night (exit 0), a night with rejects (a success: --allow-rejects), the service down (exit 5,
// another pod, which delivers); SVC_LEDGER_URL set for it (the manifest's commented lines) records the night in that
// database; and the Job's podFailurePolicy means what the systemd unit means by every exit status.
import { chmod, chown, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.ts';
import { type Front, startFront } from '../helpers/front.ts';
import { isolationUnavailable } from '../helpers/isolate.ts';
import {
  containerOf,
  cronJobOf,
  drainIgnored,
  judgePod,
  type Manifest,
  NOT_APPLIED_K8S,
  type PodMachine,
  prepareVolumes,
  runContainer,
} from '../helpers/k8s-job.ts';
import { jsonLines, northwindExport } from '../helpers/nights.ts';
import { usePostgres } from '../helpers/postgres.ts';
import { useSimulator } from '../helpers/simulator.ts';
import { judge, unitOf } from '../helpers/systemd-unit.ts';

const why = isolationUnavailable();
const MANIFEST = join(ROOT, 'deploy/kubernetes/svc-ingest-cronjob.yaml');

describe('the CronJob and the systemd unit agree on what each exit status means', () => {
  it('0 and 2 succeed, 3 and 5 are tried again, 1, 4, 130 and 143 fail for good; a drained pod is tried again', async () => {
    const cron = cronJobOf(await readFile(MANIFEST, 'utf8'));
    const unit = unitOf(
      'svc-ingest.service',
      await readFile(join(ROOT, 'deploy/systemd/svc-ingest.service'), 'utf8'),
    );
    const command = containerOf(cron).command as string[];
    // A Job counts only 0 as success: 2 (rejects under the caps) reaches it as 0 through --allow-rejects.
    const seen = (code: number) => (code === 2 && command.includes('--allow-rejects') ? 0 : code);
    const table = [0, 1, 2, 3, 4, 5, 130, 143].map((code) => [
      code,
      judge(unit, code),
      judgePod(cron, seen(code)),
    ]);
    expect(table.map(([code, systemd]) => [code, systemd])).toEqual([
      [0, 'success'],
      [1, 'failure'],
      [2, 'success'],
      [3, 'restart'],
      [4, 'failure'],
      [5, 'restart'],
      [130, 'failure'],
      [143, 'failure'],
    ]);
    for (const [code, systemd, job] of table) expect(job, `exit ${code}`).toBe(systemd);
    expect(drainIgnored(cron)).toBe(true);
  });
});

describe.skipIf(why !== null)(
  'deploy/kubernetes/svc-ingest-cronjob.yaml, its container run as the kubelet runs it',
  () => {
    const sim = useSimulator({ seed: 30 });
    const pgs = usePostgres();
    let front: Front;
    let root = '';
    let cron: Manifest;
    let m: PodMachine;
    const exportFile = () => {
      const input = (containerOf(cron).command as string[]).at(-1)!;
      return join(m.volumes.exports!, input.replace(/^\/srv\/exports\//, ''));
    };
    /** Pods of one Job run: another pod as long as the policy says so (within backoffLimit + 1 pods). */
    const job = async (between: () => void = () => {}) => {
      const pods: Array<{ code: number | null; verdict: string; stderr: string }> = [];
      for (let n = 0; n <= cron.spec.jobTemplate.spec.backoffLimit; n++) {
        const r = await runContainer(cron, m);
        const verdict = judgePod(cron, r.code ?? -1);
        pods.push({ code: r.code, verdict, stderr: r.stderr });
        if (verdict !== 'restart') break;
        between();
      }
      return pods;
    };
    const ends = (stderr: string) => jsonLines(stderr).filter((l) => l.event === 'run.end');

    beforeAll(async () => {
      cron = cronJobOf(await readFile(MANIFEST, 'utf8'));
      front = await startFront(sim.url);
      root = await mkdtemp(join(tmpdir(), 'svc-cronjob-'));
      const vol = (name: string) => join(root, 'volumes', name);
      m = {
        root,
        volumes: { state: vol('state'), exports: vol('exports'), token: vol('token'), tmp: vol('tmp') },
        // The base URL as a kustomize patch would set it; one try of the service check instead of a minute.
        envPatch: { SVC_BASE_URL: front.url, SVC_SEND_HEALTH_CHECK_WINDOW_MS: '0' },
      };
      await prepareVolumes(cron, m, { token: 'cronjob-test-token\n' });
      await mkdir(join(m.volumes.exports!, 'northwind'), { recursive: true });
      console.log(
        `CronJob fields not applied here:\n${Object.entries(NOT_APPLIED_K8S)
          .map(([k, v]) => `  ${k}: ${v}`)
          .join('\n')}`,
      );
    }, 30_000);

    afterAll(async () => {
      await front?.close();
      if (root) await rm(root, { recursive: true, force: true });
    });

    it('a good night: exit 0, delivered, the ledger on the volume, the user the manifest names', async () => {
      await writeFile(exportFile(), northwindExport('good'));
      const pods = await job();
      expect(
        pods.map((p) => [p.code, p.verdict]),
        pods[0]?.stderr,
      ).toEqual([[0, 'success']]);
      expect(ends(pods[0]!.stderr).map((e) => [e.exitStatus, e.sent])).toEqual([[0, 27]]);
      const st = await stat(join(m.volumes.state!, 'transactions.ndjson'));
      const sc = cron.spec.jobTemplate.spec.template.spec.securityContext;
      expect([st.uid, st.gid]).toEqual([sc.runAsUser, sc.fsGroup]);
    }, 30_000);

    it('a night with rejects: a success for the Job (exit 0 by --allow-rejects), the rejects counted', async () => {
      await writeFile(exportFile(), northwindExport('rejects'));
      const pods = await job();
      expect(pods.map((p) => [p.code, p.verdict])).toEqual([[0, 'success']]);
      expect(ends(pods[0]!.stderr).map((e) => [e.exitStatus, e.skipped, e.rejected])).toEqual([[0, 27, 3]]);
      const rejects = (await readFile(join(m.volumes.state!, 'rejects.ndjson'), 'utf8')).trim().split('\n');
      expect(rejects).toHaveLength(3);
    }, 30_000);

    it('the service down: exit 5, another pod (backoffLimit), which delivers', async () => {
      await writeFile(exportFile(), northwindExport('good', 'NW2027'));
      front.setDown(true);
      const pods = await job(() => front.setDown(false));
      expect(pods.map((p) => [p.code, p.verdict])).toEqual([
        [5, 'restart'],
        [0, 'success'],
      ]);
      expect(ends(pods[1]!.stderr).map((e) => [e.sent, e.skipped])).toEqual([[27, 0]]);
    }, 30_000);

    it('SVC_LEDGER_URL set (the commented lines): the night is recorded in that database, not on the volume', async () => {
      const url = await pgs.createDatabase();
      const db = new URL(url).pathname.slice(1);
      // The Secret's commented ledger-password item: a file in the token volume, as the kubelet would mount it.
      const pw = join(m.volumes.token!, 'ledger-password');
      await writeFile(pw, `${pgs.password}\n`);
      await chown(pw, 0, cron.spec.jobTemplate.spec.template.spec.securityContext.fsGroup);
      await chmod(pw, 0o440);
      const patch = m.envPatch;
      m.envPatch = {
        ...patch,
        SVC_LEDGER_URL: pgs.urlWithoutPassword(db),
        SVC_LEDGER_PASSWORD_FILE: '/etc/svc-ingest/ledger-password',
      };
      const onVolume = await readFile(join(m.volumes.state!, 'transactions.ndjson'), 'utf8');
      try {
        await writeFile(exportFile(), northwindExport('good', 'NWPG02'));
        const pods = await job();
        expect(
          pods.map((p) => [p.code, p.verdict]),
          pods[0]?.stderr,
        ).toEqual([[0, 'success']]);
        expect(ends(pods[0]!.stderr).map((e) => [e.sent, e.ledger])).toEqual([
          [27, expect.stringMatching(/^postgres:\/\//)],
        ]);
        const [row] = await pgs.sql<{ n: number }>(
          db,
          `SELECT count(*)::int AS n FROM svc_ingest.transaction_states WHERE state = 'acked'`,
        );
        expect(row!.n).toBe(27);
        expect(await readFile(join(m.volumes.state!, 'transactions.ndjson'), 'utf8')).toBe(onVolume);
      } finally {
        m.envPatch = patch;
      }
    }, 30_000);
  },
);

if (why !== null) describe.skip(`the CronJob run as the kubelet runs it: skipped, ${why}`, () => {});
