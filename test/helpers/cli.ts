// Runs the real CLI (the bin launcher) as a child process and collects its output.
import { type ChildProcess, spawn } from 'node:child_process';
import { join, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '../..');
export const BIN = join(ROOT, 'src/bin/svc-ingest');

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliRun {
  child: ChildProcess;
  done: Promise<CliResult>;
}

/**
 * Start the CLI. Its standard input gets `input` and is closed, or stays open for the caller to write
 * (`child.stdin`) with `keepStdinOpen`.
 */
export function startCli(
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; input?: string | Buffer; cwd?: string; keepStdinOpen?: boolean } = {},
): CliRun {
  const child = spawn(BIN, args, {
    cwd: opts.cwd ?? ROOT,
    env: { ...process.env, SVC_LOG_LEVEL: 'warn', ...opts.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => {
    stdout += d;
  });
  child.stderr!.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  child.stdin!.on('error', () => {});
  if (opts.input !== undefined) child.stdin!.end(opts.input);
  else if (!opts.keepStdinOpen) child.stdin!.end();
  const done = new Promise<CliResult>((res) => {
    child.on('close', (code, signal) => res({ code, signal, stdout, stderr }));
  });
  return { child, done };
}

export function runCli(
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; input?: string | Buffer; cwd?: string } = {},
) {
  return startCli(args, opts).done;
}

/** Parse the last stdout line as the --json summary. */
export function summaryOf(r: CliResult): Record<string, number | string | boolean | null> {
  const last = r.stdout.trim().split('\n').pop() ?? '';
  try {
    return JSON.parse(last);
  } catch {
    throw new Error(`no JSON summary on stdout (exit ${r.code}); stderr:\n${r.stderr}`);
  }
}

/** Poll until `cond` holds; fails fast if the child exits first or after `ms`. */
export async function waitFor(cond: () => boolean, child?: ChildProcess, ms = 20_000): Promise<void> {
  const until = Date.now() + ms;
  while (!cond()) {
    if (child && child.exitCode !== null)
      throw new Error(`child exited (${child.exitCode}) before the condition held`);
    if (Date.now() > until) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}
