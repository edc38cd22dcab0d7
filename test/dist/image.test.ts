// The container image (make image: an OCI layout built with umoci, no base pulled) and the CronJob that names it.
// It is run here without a container engine (none on this machine; podman would need one more daemon-less runtime and
// user namespaces this sandbox may not give): umoci unpacks it into a runtime bundle, and its entrypoint runs from
// that root filesystem under `unshare --mount` + `chroot`, as the image's user (10001), the root mounted read-only,
// a tmpfs on /tmp and a host folder as /var/lib/svc-ingest — what the CronJob gives it. The network is the host's, so
// the simulator on loopback is the service.
import { chown, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { ROOT } from '../helpers/cli.ts';
import { built, DIST, EXE, events, run, startSimulator, VERSION, why, writeExport } from './helpers.ts';

const LAYOUT = join(DIST, 'image');

interface CronJob {
  kind: string;
  spec: { jobTemplate: { spec: { template: { spec: { containers: Array<{ image: string }> } } } } };
}

interface RuntimeConfig {
  process: { user: { uid: number; gid: number }; args: string[]; env: string[]; cwd: string };
}

describe('the container image', () => {
  let dir = '';
  let rootfs = '';
  let config: RuntimeConfig;
  let tags: string[] = [];

  /** The image's entrypoint with `args`, as its user, the root read-only, /tmp a tmpfs, `state` as the state folder. */
  const inImage = (args: string[], state: string, extraEnv: string[] = []) => {
    const { uid, gid } = config.process.user;
    const mounts = [
      `mount --bind ${rootfs} ${rootfs}`,
      `mount -o remount,bind,ro ${rootfs}`,
      `mount -t tmpfs -o mode=1777,size=16m tmpfs ${rootfs}/tmp`,
      `mount --bind ${state} ${rootfs}/var/lib/svc-ingest`,
      `exec chroot --userspec=${uid}:${gid} ${rootfs} "$@"`,
    ].join(' && ');
    return run('env', [
      '-i',
      ...config.process.env,
      ...extraEnv,
      '/usr/bin/unshare',
      '--mount',
      '--fork',
      '/bin/sh',
      '-c',
      `PATH=/usr/sbin:/usr/bin:/sbin:/bin; ${mounts}`,
      'sh',
      config.process.args[0]!,
      ...args,
    ]);
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'svc-image-'));
    const ls = await run('umoci', ['ls', '--layout', built(LAYOUT)]);
    tags = ls.stdout.trim().split('\n');
    const unpack = await run('umoci', ['unpack', '--image', `${LAYOUT}:${VERSION}`, join(dir, 'bundle')]);
    expect(unpack.code, why(unpack)).toBe(0);
    rootfs = join(dir, 'bundle/rootfs');
    config = JSON.parse(await readFile(join(dir, 'bundle/config.json'), 'utf8')) as RuntimeConfig;
  }, 120_000);

  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('is tagged with the version and the commit, and holds only what runs, as a non-root user', async () => {
    const version = (await run(built(EXE), ['--version'])).stdout.trim();
    const commit = /\((.+)\)$/.exec(version)![1]!;
    expect(tags.sort()).toEqual([VERSION, `${VERSION}-${commit}`].sort());
    expect(config.process.user).toEqual({ uid: 10001, gid: 10001 });
    expect(config.process.args[0]).toBe('/usr/bin/svc-ingest');
    const files = (await readdir(rootfs, { recursive: true, withFileTypes: true }))
      .filter((e) => !e.isDirectory())
      .map((e) => join(e.parentPath, e.name).slice(rootfs.length))
      .sort();
    expect(files.filter((f) => !/^\/(lib|lib64|usr\/lib)\//.test(f))).toEqual([
      '/etc/group',
      '/etc/nsswitch.conf',
      '/etc/passwd',
      '/usr/bin/svc-ingest',
    ]);
    expect(files).not.toContain('/bin/sh');
  });

  it('runs --version and a send to the simulator on loopback, with a read-only root filesystem', async () => {
    const state = join(dir, 'state');
    await run('install', ['-d', '-m', '0700', state]);
    await chown(state, 10001, 10001);
    const version = await inImage(['--version'], state);
    expect(version.code, why(version)).toBe(0);
    expect(version.stdout).toBe((await run(EXE, ['--version'])).stdout);

    const sim = await startSimulator(EXE, [], { PATH: '/usr/bin:/bin', SVC_LOG_FORMAT: 'json' });
    try {
      await writeExport(join(state, 'export.csv'));
      const send = await inImage(
        [
          'send',
          '--ledger',
          '/var/lib/svc-ingest/transactions.ndjson',
          '--rejects',
          '/var/lib/svc-ingest/rejects.ndjson',
          '/var/lib/svc-ingest/export.csv',
        ],
        state,
        [`SVC_BASE_URL=${sim.url}`],
      );
      expect(send.code, why(send)).toBe(0);
      expect(events(send.stderr, 'run.end').map((e) => [e.read, e.sent, e.failed])).toEqual([[50, 50, 0]]);
      // The root was read-only: the one write outside the state folder would have been there.
      const wrote = await inImage(
        ['send', '--ledger', '/ledger.ndjson', '/var/lib/svc-ingest/export.csv'],
        state,
        [`SVC_BASE_URL=${sim.url}`],
      );
      expect(wrote.code).toBe(1);
      expect(wrote.stderr).toMatch(/EROFS|read-only/i);
    } finally {
      await sim.stop();
    }
  });

  it('is the image the Kubernetes CronJob names', async () => {
    const docs = parseAllDocuments(
      await readFile(join(ROOT, 'deploy/kubernetes/svc-ingest-cronjob.yaml'), 'utf8'),
    ).map((d) => d.toJS() as CronJob);
    const image = docs.find((d) => d.kind === 'CronJob')!.spec.jobTemplate.spec.template.spec.containers[0]!
      .image;
    const [repo, tag] = image.split(/:(?=[^:/]+$)/);
    expect(repo).toMatch(/(^|\/)svc-ingest$/);
    expect(tags).toContain(tag);
    // make image also writes the CronJob naming the exact build, <version>-<commit>, for `kubectl apply -f`.
    const pinned = await readFile(join(DIST, 'svc-ingest-cronjob.yaml'), 'utf8');
    const exact = tags.find((t) => t !== VERSION)!;
    expect(pinned).toContain(`image: ${repo}:${exact}\n`);
  });
});
