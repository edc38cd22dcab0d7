// Runs one measured child process and reports its wall time, CPU time and peak RSS (plus event-loop delay for Node).
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';

export const ROOT = new URL('../../', import.meta.url).pathname.replace(/\/$/, '');
export const NODE = process.execPath;
const PRELOAD = join(ROOT, 'test/bench/usage-preload.ts');
const GNU_TIME = '/usr/bin/time';

/**
 * What one child process cost.
 * @example { wallMs: 9120, cpuMs: 11800, userMs: 11000, systemMs: 800, maxRssMb: 96, code: 0, stdout: '{…}' }
 */
export interface ChildResult {
  wallMs: number;
  cpuMs: number;
  userMs: number;
  systemMs: number;
  maxRssMb: number;
  loopP99Ms?: number;
  loopMaxMs?: number;
  /** process.memoryUsage() samples (MB) when BENCH_MEMORY_EVERY_MS was set: [ms, rss, heapTotal, heapUsed, external, arrayBuffers]. */
  memory?: number[][];
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Date.now() when the child was spawned. */
  spawnedAt: number;
}

export interface RunOptions {
  /** 'ignore', or a stream whose data is the child's standard input. */
  stdin?: 'ignore' | Readable;
  /** Keep standard output (default true); false sends it to /dev/null (Miller's JSON). */
  captureStdout?: boolean;
  env?: Record<string, string>;
  cwd?: string;
}

let seq = 0;
function usageFile(): string {
  return join(tmpdir(), `svc-bench-usage-${process.pid}-${++seq}.json`);
}

function collect(
  child: ReturnType<typeof spawn>,
  capture: boolean,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  if (capture)
    child.stdout?.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
    // Keep the head (start-up log lines) and the tail (errors), never megabytes.
    if (stderr.length > 1 << 20) stderr = `${stderr.slice(0, 1 << 18)}\n…\n${stderr.slice(-(1 << 18))}`;
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/**
 * Run `node <args>` with the usage preload; CPU and RSS come from the child's own getrusage at exit.
 * @example const r = await runNode(['src/cli/main.ts', 'send', '--dry-run', 'a.csv'])
 */
export async function runNode(args: string[], o: RunOptions = {}): Promise<ChildResult> {
  return measureNode(NODE, ['--import', PRELOAD, ...args], {}, o);
}

/**
 * Run the CLI as users do, through its launcher (src/bin/svc-ingest, which adds its own V8 flags);
 * the preload and any extra Node flags go in NODE_OPTIONS.
 * @example const r = await runCli(['send', '--dry-run', 'a.csv'], ['--cpu-prof'])
 */
export async function runCli(
  args: string[],
  nodeFlags: string[] = [],
  o: RunOptions = {},
): Promise<ChildResult> {
  const options = [`--import=${PRELOAD}`, ...nodeFlags, process.env.NODE_OPTIONS ?? ''].join(' ').trim();
  return measureNode(LAUNCHER, args, { NODE_OPTIONS: options }, o);
}

export const LAUNCHER = join(ROOT, 'src/bin/svc-ingest');

async function measureNode(
  cmd: string,
  args: string[],
  env: Record<string, string>,
  o: RunOptions,
): Promise<ChildResult> {
  const file = usageFile();
  const spawnedAt = Date.now();
  const t0 = performance.now();
  const child = spawn(cmd, args, {
    cwd: o.cwd ?? ROOT,
    env: { ...process.env, ...env, ...o.env, BENCH_USAGE_FILE: file },
    stdio: [o.stdin ?? 'ignore', o.captureStdout === false ? 'ignore' : 'pipe', 'pipe'],
  });
  const done = await collect(child, o.captureStdout !== false);
  const wallMs = performance.now() - t0;
  let u = { userMs: Number.NaN, systemMs: Number.NaN, maxRssKb: Number.NaN } as {
    userMs: number;
    systemMs: number;
    maxRssKb: number;
    loopP99Ms?: number;
    loopMaxMs?: number;
    memory?: { samples: number[][] };
  };
  if (existsSync(file)) {
    u = JSON.parse(readFileSync(file, 'utf8'));
    rmSync(file, { force: true });
  }
  return {
    wallMs,
    cpuMs: u.userMs + u.systemMs,
    userMs: u.userMs,
    systemMs: u.systemMs,
    maxRssMb: u.maxRssKb / 1024,
    loopP99Ms: u.loopP99Ms,
    loopMaxMs: u.loopMaxMs,
    ...(u.memory ? { memory: u.memory.samples } : {}),
    ...done,
    spawnedAt,
  };
}

/** Whether a program is on PATH. */
export function onPath(cmd: string): boolean {
  return (process.env.PATH ?? '').split(':').some((d) => d !== '' && existsSync(join(d, cmd)));
}

/**
 * Run any program; CPU and peak RSS from GNU time when installed, else by polling /proc (coarser).
 * @example await runExternal('mlr', ['--icsv', '--ojsonl', 'cat', 'a.csv'], { captureStdout: false })
 */
export async function runExternal(cmd: string, args: string[], o: RunOptions = {}): Promise<ChildResult> {
  const spawnedAt = Date.now();
  const t0 = performance.now();
  const stdio: ['ignore' | Readable, 'ignore' | 'pipe', 'pipe'] = [
    o.stdin ?? 'ignore',
    o.captureStdout === false ? 'ignore' : 'pipe',
    'pipe',
  ];
  if (existsSync(GNU_TIME)) {
    const file = usageFile();
    const child = spawn(GNU_TIME, ['-f', '%U %S %M', '-o', file, cmd, ...args], {
      cwd: o.cwd ?? ROOT,
      env: { ...process.env, ...o.env },
      stdio,
    });
    const done = await collect(child, o.captureStdout !== false);
    const wallMs = performance.now() - t0;
    const last = readFileSync(file, 'utf8').trim().split('\n').pop() ?? '';
    rmSync(file, { force: true });
    const [user, sys, rssKb] = last.split(' ').map(Number) as [number, number, number];
    return {
      wallMs,
      cpuMs: (user + sys) * 1000,
      userMs: user * 1000,
      systemMs: sys * 1000,
      maxRssMb: rssKb / 1024,
      ...done,
      spawnedAt,
    };
  }
  const child = spawn(cmd, args, { cwd: o.cwd ?? ROOT, env: { ...process.env, ...o.env }, stdio });
  const tick = 100 / 1000; // USER_HZ is 100 on Linux
  let cpuMs = Number.NaN;
  let rssKb = Number.NaN;
  const poll = setInterval(() => {
    try {
      const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      cpuMs = (Number(f[11]) + Number(f[12])) * tick * 1000;
      const m = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      if (m) rssKb = Number(m[1]);
    } catch {
      // the child has exited between two polls
    }
  }, 50);
  const done = await collect(child, o.captureStdout !== false);
  clearInterval(poll);
  return {
    wallMs: performance.now() - t0,
    cpuMs,
    userMs: Number.NaN,
    systemMs: Number.NaN,
    maxRssMb: rssKb / 1024,
    ...done,
    spawnedAt,
  };
}

/**
 * Start a long-lived child (the simulator) and resolve with the first line it prints. `cmd` is Node (args start
 * with a script) or the launcher (which execs Node, so the pid stays the simulator's).
 */
export async function startDaemon(
  args: string[],
  cmd: string = NODE,
): Promise<{ firstLine: string; stop(): Promise<void>; pid: number }> {
  const child = spawn(cmd, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  const firstLine = await new Promise<string>((resolve, reject) => {
    let buf = '';
    child.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
      const nl = buf.indexOf('\n');
      if (nl !== -1) resolve(buf.slice(0, nl).trim());
    });
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code} before printing`)));
  });
  child.stdout.resume();
  return {
    firstLine,
    pid: child.pid as number,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
