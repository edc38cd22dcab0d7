// deploy/kubernetes/svc-ingest-backfill-{plan,job}.yaml run as their pods would run them, as child processes on this
// machine (test/helpers/k8s-job.ts podCommand): the plan Job's command, then the Indexed Job's command for indexes 0
// and 1 at once (JOB_COMPLETION_INDEX in the env and in the worker id, the Secret's ledger URL and password file, the
// volumes' paths moved to folders here), against the simulator and PostgreSQL. Every record is delivered once: once
// at the service, once acknowledged in the ledger.
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { header, row } from '../bench/gen.ts';
import { deliveryCounts, readPgLedger } from '../faults/helpers.ts';
import { statusOf, workerSummary } from '../helpers/backfill.ts';
import { ROOT, runCli, startCli } from '../helpers/cli.ts';
import { jobOf, type Manifest, podCommand } from '../helpers/k8s-job.ts';
import { usePostgres } from '../helpers/postgres.ts';
import { useSimulator } from '../helpers/simulator.ts';

const pgs = usePostgres();
const sim = useSimulator({ seed: 48 });
const K8S = join(ROOT, 'deploy/kubernetes');
/** Records in each export file (generated Northwind rows, all valid). */
const ROWS = 1000;

/** Rows the profile rejects (too few columns). */
const REJECTED = ['NWBAD0001,1', 'NWBAD0002,2', 'NWBAD0003,3'];

/** Northwind rows [start, start + ROWS): the CSV and its ids. */
function northwindRows(start: number): { csv: string; ids: string[] } {
  // The generator's Northwind ids: NW and the row number in 10 digits.
  const ids = Array.from({ length: ROWS }, (_, i) => `NW${String(start + i).padStart(10, '0')}`);
  return { csv: header('northwind-csv') + ids.map((_, i) => row('northwind-csv', start + i)).join(''), ids };
}

describe('the backfill as a Kubernetes Indexed Job, its pods run as the Job would run them', () => {
  let root = '';
  afterAll(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('the plan Job, then indexes 0 and 1 at once: every record delivered once, both workers done, rejects exit 0', async () => {
    const plan = jobOf(await readFile(join(K8S, 'svc-ingest-backfill-plan.yaml'), 'utf8'));
    const work = jobOf(await readFile(join(K8S, 'svc-ingest-backfill-job.yaml'), 'utf8'));
    expect(work.spec.completionMode).toBe('Indexed');
    expect(work.spec.parallelism).toBeGreaterThanOrEqual(2);

    root = await mkdtemp(join(tmpdir(), 'svc-backfill-job-'));
    const volumes = {
      exports: join(root, 'exports'),
      secret: join(root, 'secret'),
      backfill: join(root, 'backfill'),
      tmp: join(root, 'tmp'),
    };
    for (const dir of Object.values(volumes)) await mkdir(dir, { recursive: true });
    // The Secret's files as the kubelet mounts them (defaultMode 0400); its ledger-url key without the password.
    const url = await pgs.createDatabase();
    const secrets = {
      token: 'backfill-job-test-token\n',
      'ledger-password': `${pgs.password}\n`,
      'ledger-url': new URL(url).href.replace(`:${encodeURIComponent(pgs.password)}@`, '@'),
    };
    expect(secrets['ledger-url']).not.toContain(pgs.password);
    for (const key of ['token', 'ledger-password'] as const) {
      await writeFile(join(volumes.secret, key), secrets[key]);
      await chmod(join(volumes.secret, key), 0o400);
    }
    // The files the plan names, under the exports' volume: each with records of its own.
    const planned = (plan.spec.template.spec.containers[0] as Manifest).command.filter((a: string) =>
      a.startsWith('/srv/exports/'),
    ) as string[];
    expect(planned.length).toBeGreaterThanOrEqual(2);
    const ids: string[] = [];
    for (const [n, file] of planned.entries()) {
      const rows = northwindRows(n * ROWS);
      ids.push(...rows.ids);
      const at = join(volumes.exports, file.slice('/srv/exports/'.length));
      await mkdir(join(at, '..'), { recursive: true });
      // Three short rows (rejected) at the end of the last file: --allow-rejects makes its pod's exit 0.
      const csv = n === planned.length - 1 ? `${rows.csv}${REJECTED.join('\n')}\n` : rows.csv;
      await writeFile(at, file.endsWith('.gz') ? gzipSync(csv) : csv);
    }
    const pod = (job: Manifest, index?: number) =>
      podCommand(job, { index, secrets, volumes, envPatch: { SVC_BASE_URL: sim.url } });

    const p = pod(plan);
    const planned1 = await runCli(p.args, { env: p.env });
    expect(planned1.code, planned1.stderr).toBe(0);

    sim.setFaults({ latencyMs: 20, jitterMs: 5 });
    const pods = [0, 1].map((index) => {
      const w = pod(work, index);
      expect(w.args).toContain(`svc-ingest-backfill-${index}`);
      return startCli(w.args, { env: w.env });
    });
    const ends = await Promise.all(pods.map((w) => w.done));
    for (const r of ends) expect(r.code, r.stderr.slice(-2000)).toBe(0);
    const summaries = ends.map(workerSummary);
    expect(summaries.map((s) => s.workerId)).toEqual(['svc-ingest-backfill-0', 'svc-ingest-backfill-1']);
    expect(summaries.reduce((n, s) => n + s.partitions.done, 0)).toBe(planned.length);
    expect(summaries.map((s) => [s.sent > 0, s.failed])).toEqual([
      [true, 0],
      [true, 0],
    ]);
    expect(summaries.reduce((n, s) => n + s.rejected, 0)).toBe(REJECTED.length);
    const rejectsFiles = await readdir(volumes.backfill);
    const rejected = (
      await Promise.all(rejectsFiles.map((f) => readFile(join(volumes.backfill, f), 'utf8')))
    ).join('');
    expect(rejected.trim().split('\n')).toHaveLength(REJECTED.length);
    expect(summaries.reduce((n, s) => n + s.sent, 0)).toBe(ids.length);

    // Once at the service ...
    expect(deliveryCounts(sim, ids)).toEqual({ missing: 0, once: ids.length, duplicated: 0, extra: 0 });
    expect(sim.stats().transactions.accepted).toBe(ids.length);
    // ... and once acknowledged in the ledger, in no failed batch.
    const { rows } = await readPgLedger(pgs, url);
    const acked = rows.filter((r) => r.status === 'acked').flatMap((r) => r.transactionIds);
    expect(acked.length).toBe(ids.length);
    expect(new Set(acked)).toEqual(new Set(ids));
    expect(rows.filter((r) => r.status === 'failed')).toEqual([]);
    expect(await statusOf(url)).toMatchObject({ done: true });
  }, 120_000);
});
