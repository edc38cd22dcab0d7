// A process run the way a service manager or a container runtime runs it, with what Linux gives root here: a
// mount namespace (`unshare -m`) in which /opt, /srv and /var/lib are a temporary root's (the machine's own are
// never touched), folders bound read-only or read-write onto their paths, a private /tmp, the rest of the file
// system read-only; then the user, group, umask, working folder and a clean environment (`setpriv`, `env -i`).
// test/deploy/systemd-run.test.ts and cronjob-run.test.ts run the shipped units through it.
import { spawn, spawnSync } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { BIN, collectOutput, ROOT } from './cli.ts';

/** Paths of the machine that are the temporary root's inside the namespace (bound over whole). */
export const MAPPED = ['/opt', '/srv', '/var/lib'] as const;

/**
 * Where the clone is inside the namespace (read-only): a clone in a folder other users cannot enter (root's home,
 * mode 0700) stays reachable for the unit's user. The image's or the package's `svc-ingest` is the launcher of the
 * CLI the tests start (BIN in cli.ts: built as the npm package installs it, whose start costs about a third of the
 * sources'), as the namespace shows it.
 */
export const CLONE_INSIDE = '/opt/svc-ingest-clone';
export const LAUNCHER_INSIDE = join(CLONE_INSIDE, relative(ROOT, BIN));

/** What the machine can do: root, a mount namespace, setpriv. Null when it can; else why not. */
export function isolationUnavailable(): string | null {
  if (process.getuid?.() !== 0) return 'not root: a mount namespace and another user need root';
  const r = spawnSync('unshare', ['-m', 'true']);
  if (r.status !== 0) return `unshare -m fails here (${String(r.stderr).trim() || r.error?.message})`;
  if (spawnSync('setpriv', ['--version']).status !== 0) return 'no setpriv (Debian: util-linux)';
  return null;
}

export interface Bind {
  /** A folder of the test's. */
  from: string;
  /** Where the process sees it. */
  to: string;
  rw: boolean;
}

export interface IsolatedRun {
  /** The temporary root: ROOT/opt, ROOT/srv, ROOT/var/lib are /opt, /srv, /var/lib inside. */
  root: string;
  argv: string[];
  env: Record<string, string>;
  uid: number;
  gid: number;
  /** Supplementary groups (none when empty). */
  groups?: number[];
  umask: number;
  cwd: string;
  binds?: Bind[];
  /** Everything but the binds, the private /tmp and /proc, /sys, /dev read-only (ProtectSystem=strict, a
   *  container's readOnlyRootFilesystem). */
  readOnly: boolean;
  /** A private, empty /tmp (and /var/tmp). */
  privateTmp: boolean;
  /** Folders made empty and inaccessible (ProtectHome=yes: /home, /root, /run/user). */
  inaccessible?: string[];
  /** NoNewPrivileges=yes, an empty capability set. */
  noNewPrivileges: boolean;
  timeoutMs?: number;
}

export interface IsolatedResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

const q = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/** The first folder of `path` that is one of the machine's own (not under a mapped root): /etc, /run, … */
function topOf(path: string): string {
  return `/${path.split('/')[1]}`;
}

/**
 * The shell script run in the new mount namespace, as root, ending in `exec setpriv … env -i … argv`.
 * A bind onto a path that exists nowhere yet gets its folder: in the temporary root under a mapped path, else
 * in an overlay of its top folder (e.g. /etc) whose upper layer is the temporary root's.
 */
async function script(o: IsolatedRun): Promise<string> {
  const lines = ['set -e', 'mount --make-rprivate /'];
  for (const m of MAPPED) {
    await mkdir(join(o.root, m), { recursive: true });
    lines.push(`mount --bind ${q(join(o.root, m))} ${m}`);
  }
  const overlaid = new Set<string>();
  const rw: string[] = [];
  for (const b of [{ from: ROOT, to: CLONE_INSIDE, rw: false }, ...(o.binds ?? [])]) {
    const mapped = MAPPED.some((m) => b.to === m || b.to.startsWith(`${m}/`));
    if (mapped) await mkdir(join(o.root, b.to), { recursive: true });
    else {
      const top = topOf(b.to);
      if (!overlaid.has(top)) {
        overlaid.add(top);
        const up = join(o.root, '.overlay', top, 'up');
        const work = join(o.root, '.overlay', top, 'work');
        await mkdir(up, { recursive: true });
        await mkdir(work, { recursive: true });
        lines.push(`mount -t overlay overlay -o lowerdir=${top},upperdir=${q(up)},workdir=${q(work)} ${top}`);
      }
      lines.push(`mkdir -p ${q(b.to)}`);
    }
    lines.push(`mount --bind ${q(b.from)} ${q(b.to)}`);
    if (b.rw) rw.push(b.to);
  }
  if (o.privateTmp) {
    lines.push('mount -t tmpfs -o mode=1777 tmpfs /tmp', 'mount -t tmpfs -o mode=1777 tmpfs /var/tmp');
    rw.push('/tmp', '/var/tmp');
  }
  for (const dir of o.inaccessible ?? [])
    lines.push(`if [ -d ${q(dir)} ]; then mount -t tmpfs -o ro,mode=000 tmpfs ${q(dir)}; fi`);
  if (o.readOnly) {
    // Every mount but the API file systems and the writable ones, remounted read-only (each mount has its own
    // flag: a read-only parent leaves a writable bind below it writable).
    const keep = [...rw].map(q).join(' ');
    lines.push(
      `keep=" ${keep.replaceAll("'", '')} "`,
      `awk '{print $5}' /proc/self/mountinfo | sort -u | while read -r mp; do`,
      '  case $mp in /proc|/proc/*|/sys|/sys/*|/dev|/dev/*) continue ;; esac',
      '  case $keep in *" $mp "*) continue ;; esac',
      '  mount -o remount,bind,ro "$mp" 2>/dev/null || true',
      'done',
    );
  }
  lines.push(`cd ${q(o.cwd)}`, `umask ${o.umask.toString(8).padStart(4, '0')}`);
  const priv = [
    'setpriv',
    `--reuid=${o.uid}`,
    `--regid=${o.gid}`,
    (o.groups ?? []).length > 0 ? `--groups=${o.groups!.join(',')}` : '--clear-groups',
    ...(o.noNewPrivileges ? ['--no-new-privs', '--inh-caps=-all', '--bounding-set=-all'] : []),
    '--',
    'env',
    '-i',
    ...Object.entries(o.env).map(([k, v]) => q(`${k}=${v}`)),
    ...o.argv.map(q),
  ];
  lines.push(`exec ${priv.join(' ')}`);
  return lines.join('\n');
}

/** Runs `argv` isolated as described; its exit status and what it wrote. */
export async function runIsolated(o: IsolatedRun): Promise<IsolatedResult> {
  const text = await script(o);
  const child = spawn('unshare', ['-m', 'bash', '-c', text], { stdio: ['ignore', 'pipe', 'pipe'] });
  const out = collectOutput(child);
  const timer = setTimeout(() => child.kill('SIGKILL'), o.timeoutMs ?? 30_000);
  const { code, stdout, stderr } = await out.closed;
  clearTimeout(timer);
  return { code, stdout, stderr };
}

/** A throwaway system user (useradd), removed by the returned function; its uid and gid. */
export function addUser(
  name: string,
  o: { home: string; comment: string },
): {
  uid: number;
  gid: number;
  remove: () => void;
} {
  spawnSync('userdel', [name]);
  const args = ['--system', '--user-group', '--no-create-home', '--home-dir', o.home];
  args.push('--shell', '/usr/sbin/nologin', '--comment', o.comment, name);
  // Another test file may hold /etc/passwd's lock for a moment: try again.
  let r = spawnSync('useradd', args, { encoding: 'utf8' });
  for (let i = 0; r.status !== 0 && /lock/i.test(r.stderr ?? '') && i < 20; i++) {
    spawnSync('sleep', ['0.1']);
    r = spawnSync('useradd', args, { encoding: 'utf8' });
  }
  if (r.status !== 0) throw new Error(`useradd ${name}: ${r.error?.message ?? r.stderr}`);
  const id = (flag: string) => Number(spawnSync('id', [flag, name], { encoding: 'utf8' }).stdout.trim());
  return { uid: id('-u'), gid: id('-g'), remove: () => void spawnSync('userdel', [name]) };
}
