// A systemd service unit read and started the way systemd starts it (systemd.exec(5), systemd.service(5)), on a
// machine where systemd is not PID 1: its ExecStart, with the unit's user and group, umask, environment
// (Environment=, EnvironmentFile=, the variables systemd sets), credentials (LoadCredential=, %d), state, runtime
// and working folders, ExecStartPre= with the + prefix (as root, outside the sandbox), and ProtectSystem=strict
// with ReadWritePaths=/ReadOnlyPaths= in a mount namespace (isolate.ts). Its exit status is judged by
// SuccessExitStatus= and Restart=/RestartPreventExitStatus=, and restarted as Restart= says. What it cannot apply
// is listed with why, and a directive it does not know fails.
import { chmod, chown, copyFile, mkdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { type Bind, type IsolatedResult, runIsolated } from './isolate.ts';

export interface UnitEntry {
  section: string;
  key: string;
  value: string;
}

/** The entries of a unit file, in order; continuation lines joined, comments dropped. */
export function parseUnit(text: string): UnitEntry[] {
  const out: UnitEntry[] = [];
  let section = '';
  const lines = text.replace(/\\\n/g, ' ').split('\n');
  for (const raw of lines) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const head = /^\[(.+)\]$/.exec(line);
    if (head) {
      section = head[1]!;
      continue;
    }
    const at = line.indexOf('=');
    out.push({ section, key: line.slice(0, at).trim(), value: line.slice(at + 1).trim() });
  }
  return out;
}

/** What the emulation applies, directive by directive. */
const APPLIED = new Set([
  'Description',
  'Wants',
  'After',
  'StartLimitIntervalSec',
  'StartLimitBurst',
  'Type',
  'User',
  'Group',
  'StateDirectory',
  'StateDirectoryMode',
  'WorkingDirectory',
  'UMask',
  'EnvironmentFile',
  'LoadCredential',
  'Environment',
  'ExecStart',
  'ExecStartPre',
  'RuntimeDirectory',
  'RuntimeDirectoryMode',
  'SuccessExitStatus',
  'Restart',
  'RestartPreventExitStatus',
  'NoNewPrivileges',
  'CapabilityBoundingSet',
  'ProtectSystem',
  'ProtectHome',
  'PrivateTmp',
  'ReadOnlyPaths',
  'ReadWritePaths',
]);

/** What it cannot apply on this machine, and why (the test prints it). */
export const NOT_APPLIED: Record<string, string> = {
  RestartSec: 'not waited: the restart follows at once (the unit says 10 min)',
  TimeoutStartSec: "not enforced: the test's own timeout bounds each start",
  RuntimeMaxSec: "not enforced: the test's own timeout bounds each start",
  TimeoutStopSec: 'no stop in these scenarios',
  KillMode: 'no stop in these scenarios',
  PrivateDevices: "the namespace keeps the machine's /dev",
  ProtectKernelTunables: 'a read-only /proc/sys and /sys: not emulated',
  ProtectKernelModules: 'a capability and a seccomp filter: not emulated (the bounding set is empty anyway)',
  ProtectKernelLogs: 'a seccomp filter: not emulated',
  ProtectControlGroups: 'a read-only /sys/fs/cgroup: not emulated',
  ProtectClock: 'a seccomp filter: not emulated',
  ProtectHostname: 'a UTS namespace: not emulated',
  RestrictNamespaces: 'a seccomp filter: not emulated',
  RestrictRealtime: 'a seccomp filter: not emulated',
  RestrictSUIDSGID: 'a seccomp filter: not emulated',
  LockPersonality: 'a seccomp filter: not emulated',
  RestrictAddressFamilies: 'a seccomp filter: not emulated',
  SystemCallArchitectures: 'a seccomp filter: not emulated',
};

export interface Unit {
  name: string;
  entries: UnitEntry[];
  /** The last value of a [Service]/[Unit] key, or undefined. */
  get(key: string): string | undefined;
  all(key: string): string[];
}

export function unitOf(name: string, text: string): Unit {
  const entries = parseUnit(text);
  const all = (key: string) => entries.filter((e) => e.key === key).map((e) => e.value);
  return { name, entries, all, get: (key) => all(key).at(-1) };
}

/** Directives of the unit the emulation neither applies nor lists as not applicable (should be none). */
export function unknownDirectives(unit: Unit): string[] {
  return unit.entries
    .filter((e) => e.section !== 'Install' && !APPLIED.has(e.key) && !(e.key in NOT_APPLIED))
    .map((e) => e.key);
}

export interface Machine {
  /** The temporary root (isolate.ts): /opt, /srv, /var/lib inside are its. */
  root: string;
  /** Where the machine's /etc files the unit names are (EnvironmentFile=, LoadCredential= sources). */
  etc: string;
  /** The unit's User=/Group= names → the throwaway user's ids. */
  users: Record<string, { uid: number; gid: number; home: string }>;
}

/** A path of the machine as the test holds it: /etc/… → machine.etc, /opt|/srv|/var/lib/… → the root. */
function hostPath(m: Machine, path: string): string {
  if (path.startsWith('/etc/')) return join(m.etc, path.slice('/etc/'.length));
  return join(m.root, path);
}

const words = (s: string) => [...s.matchAll(/"([^"]*)"|(\S+)/g)].map((x) => x[1] ?? x[2]!);

function specifiers(s: string, unit: Unit, creds: string): string {
  return s.replace(/%(.)/g, (_, c: string) => {
    if (c === 'd') return creds;
    if (c === '%') return '%';
    if (c === 'n') return unit.name;
    throw new Error(`specifier %${c}: not emulated`);
  });
}

/** KEY=VALUE lines of an environment file (systemd.exec(5) EnvironmentFile=). */
function envFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (m) out[m[1]!] = m[2]!.replace(/^"(.*)"$/, '$1').replace(/^'(.*)'$/, '$1');
  }
  return out;
}

/** The unit's user on the test machine, and the start's first environment (what systemd sets for every unit). */
function userOf(unit: Unit, m: Machine) {
  const user = m.users[unit.get('User') ?? 'root'];
  if (!user) throw new Error(`User=${unit.get('User')}: no such user on the test machine`);
  const group = unit.get('Group');
  if (group !== undefined && group !== unit.get('User')) throw new Error(`Group=${group}: not emulated`);
  const env: Record<string, string> = {
    PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin',
    LANG: 'C.UTF-8',
    USER: unit.get('User') ?? 'root',
    LOGNAME: unit.get('User') ?? 'root',
    HOME: user.home,
    SHELL: '/usr/sbin/nologin',
    INVOCATION_ID: 'f'.repeat(32),
  };
  return { user, env };
}

/**
 * StateDirectory=: /var/lib/NAME, made and owned by the user, with its mode; writable whatever ProtectSystem says.
 * RuntimeDirectory=: /run/NAME, the same, made afresh for each start (systemd removes it when the unit stops).
 */
async function directories(
  unit: Unit,
  m: Machine,
  user: Machine['users'][string],
  binds: Bind[],
  env: Record<string, string>,
) {
  const kinds = [
    ['StateDirectory', 'var/lib', '/var/lib', 'STATE_DIRECTORY'],
    ['RuntimeDirectory', '.run', '/run', 'RUNTIME_DIRECTORY'],
  ] as const;
  for (const [key, under, inside, variable] of kinds)
    for (const name of unit.all(key).flatMap(words)) {
      const dir = join(m.root, under, name);
      if (key === 'RuntimeDirectory') await rm(dir, { recursive: true, force: true });
      await mkdir(dir, { recursive: true });
      await chown(dir, user.uid, user.gid);
      await chmod(dir, Number.parseInt(unit.get(`${key}Mode`) ?? '0755', 8));
      binds.push({ from: dir, to: `${inside}/${name}`, rw: true });
      env[variable] = `${inside}/${name}`;
    }
}

/** LoadCredential=ID:PATH: a copy in /run/credentials/UNIT/, readable by the user only, the folder read-only. */
async function credentials(
  unit: Unit,
  m: Machine,
  user: Machine['users'][string],
  binds: Bind[],
  env: Record<string, string>,
) {
  const credsPath = `/run/credentials/${unit.name}`;
  const loads = unit.all('LoadCredential');
  if (loads.length === 0) return;
  const dir = join(m.root, '.credentials', unit.name);
  await mkdir(dir, { recursive: true });
  for (const l of loads) {
    const [id, path] = [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1)];
    await copyFile(hostPath(m, path), join(dir, id));
    await chown(join(dir, id), user.uid, user.gid);
    await chmod(join(dir, id), 0o400);
  }
  await chown(dir, user.uid, user.gid);
  await chmod(dir, 0o500);
  binds.push({ from: dir, to: credsPath, rw: false });
  env.CREDENTIALS_DIRECTORY = credsPath;
}

/** Environment= in order, then EnvironmentFile= (which overrides it; a leading '-': a missing file is fine). */
async function environment(unit: Unit, m: Machine, env: Record<string, string>) {
  for (const v of unit.all('Environment'))
    for (const w of words(v)) {
      const at = w.indexOf('=');
      env[w.slice(0, at)] = specifiers(w.slice(at + 1), unit, `/run/credentials/${unit.name}`);
    }
  for (const f of unit.all('EnvironmentFile')) {
    const optional = f.startsWith('-');
    const text = await readFile(hostPath(m, optional ? f.slice(1) : f), 'utf8').catch((err) => {
      if (optional) return '';
      throw err;
    });
    Object.assign(env, envFile(text));
  }
}

/** ReadOnlyPaths=/ReadWritePaths=: a path that does not exist fails the start (226/NAMESPACE) unless '-'. */
async function pathBinds(unit: Unit, m: Machine, binds: Bind[]): Promise<IsolatedResult | null> {
  for (const [key, rw] of [
    ['ReadOnlyPaths', false],
    ['ReadWritePaths', true],
  ] as const)
    for (const w of unit.all(key).flatMap(words)) {
      const p = w.replace(/^-/, '');
      const exists = await stat(hostPath(m, p)).then(
        () => true,
        () => false,
      );
      if (!exists) {
        if (w.startsWith('-')) continue;
        return { code: 226, stdout: '', stderr: `${key}=${p}: No such file or directory (226/NAMESPACE)` };
      }
      binds.push({ from: hostPath(m, p), to: p, rw });
    }
  return null;
}

/**
 * ExecStartPre=+…: as root, outside the sandbox, with the unit's environment; the machine's /etc/NAME folders the
 * command names and the unit's runtime folders bound where it names them, and the unit's User=/Group= names given as
 * the test user's ids (the machine has no user of that name). A failure fails the start with its status.
 */
async function execPre(unit: Unit, m: Machine, binds: Bind[], env: Record<string, string>) {
  const user = m.users[unit.get('User') ?? 'root']!;
  for (const line of unit.all('ExecStartPre')) {
    if (!line.startsWith('+')) throw new Error(`ExecStartPre=${line}: only the + prefix is emulated`);
    const argv = words(specifiers(line.slice(1), unit, `/run/credentials/${unit.name}`)).map((w) =>
      w === unit.get('User') ? String(user.uid) : w === unit.get('Group') ? String(user.gid) : w,
    );
    const etc = [
      ...new Set(argv.filter((w) => w.startsWith('/etc/')).map((w) => w.split('/').slice(0, 3).join('/'))),
    ];
    const r = await runIsolated({
      root: m.root,
      argv,
      env,
      uid: 0,
      gid: 0,
      umask: Number.parseInt(unit.get('UMask') ?? '0022', 8),
      cwd: '/',
      binds: [
        ...etc.map((e) => ({ from: hostPath(m, e), to: e, rw: false })),
        ...binds.filter((b) => b.to.startsWith('/run/') && b.rw),
      ],
      readOnly: false,
      privateTmp: false,
      noNewPrivileges: false,
    });
    if (r.code !== 0) return r;
  }
  return null;
}

/** Starts the unit's ExecStart once, as systemd would, and waits for it (Type=oneshot, or simple: a timer's start). */
export async function startOnce(unit: Unit, m: Machine, timeoutMs = 30_000): Promise<IsolatedResult> {
  const unknown = unknownDirectives(unit);
  if (unknown.length > 0) throw new Error(`directives not emulated: ${unknown.join(', ')}`);
  if (!['oneshot', 'simple'].includes(unit.get('Type') ?? 'simple'))
    throw new Error(`Type=${unit.get('Type')}: not emulated`);
  const { user, env } = userOf(unit, m);
  const binds: Bind[] = [];
  await directories(unit, m, user, binds, env);
  await credentials(unit, m, user, binds, env);
  await environment(unit, m, env);
  const missing = await pathBinds(unit, m, binds);
  if (missing) return missing;
  const protect = unit.get('ProtectSystem');
  if (protect !== undefined && protect !== 'strict')
    throw new Error(`ProtectSystem=${protect}: not emulated`);
  const caps = unit.get('CapabilityBoundingSet');
  if (caps !== undefined && caps !== '') throw new Error(`CapabilityBoundingSet=${caps}: not emulated`);
  const pre = await execPre(unit, m, binds, env);
  if (pre) return pre;
  return runIsolated({
    root: m.root,
    argv: words(specifiers(unit.get('ExecStart')!, unit, `/run/credentials/${unit.name}`)),
    env,
    uid: user.uid,
    gid: user.gid,
    umask: Number.parseInt(unit.get('UMask') ?? '0022', 8),
    cwd: unit.get('WorkingDirectory') ?? '/',
    binds,
    readOnly: protect === 'strict',
    privateTmp: unit.get('PrivateTmp') === 'yes',
    inaccessible: unit.get('ProtectHome') === 'yes' ? ['/home', '/root', '/run/user'] : [],
    noNewPrivileges: unit.get('NoNewPrivileges') === 'yes' && caps === '',
    timeoutMs,
  });
}

/** What systemd makes of an exit status: the unit succeeded, failed and is started again, or failed. */
export function judge(unit: Unit, code: number): 'success' | 'restart' | 'failure' {
  const success = [0, ...unit.all('SuccessExitStatus').flatMap(words).map(Number)];
  if (success.includes(code)) return 'success';
  const prevent = unit.all('RestartPreventExitStatus').flatMap(words).map(Number);
  const restart = unit.get('Restart') ?? 'no';
  if (!['no', 'on-failure'].includes(restart)) throw new Error(`Restart=${restart}: not emulated`);
  return restart === 'on-failure' && !prevent.includes(code) ? 'restart' : 'failure';
}

export interface Start extends IsolatedResult {
  verdict: 'success' | 'restart' | 'failure';
}

/**
 * Starts the unit (as its timer would) and again as long as systemd would restart it, at most StartLimitBurst
 * starts; `beforeRestart` runs where systemd would wait RestartSec.
 */
export async function runUnit(
  unit: Unit,
  m: Machine,
  beforeRestart: (n: number) => Promise<void> = async () => {},
): Promise<Start[]> {
  const burst = Number(unit.get('StartLimitBurst') ?? 5);
  const starts: Start[] = [];
  for (let n = 1; n <= burst; n++) {
    const r = await startOnce(unit, m);
    const verdict = judge(unit, r.code ?? -1);
    starts.push({ ...r, verdict });
    if (verdict !== 'restart') break;
    await beforeRestart(n);
  }
  return starts;
}
