// Runs the real CLI: as a child process (the bin launcher, runCli) or in this process (runCliHere); collects its output.
// A child runs the CLI built as the npm package installs it (cli-build.ts, the suite's globalSetup), unless it names
// the clone's own launcher (CLONE_BIN) or the run says SVC_TEST_CLI=clone.
import { type ChildProcess, spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { Readable, Writable } from 'node:stream';

export const ROOT = resolve(import.meta.dirname, '../..');
/** The clone's launcher, on the sources (what `make demo` and a developer run). */
export const CLONE_BIN = join(ROOT, 'src/bin/svc-ingest');
/** Where cli-build.ts builds the CLI as the npm package installs it, and the compile cache its runs here keep. */
export const BUILT_CLI = join(ROOT, 'node_modules/.cache/svc-ingest-test-cli');
const BUILT_CACHE = join(ROOT, 'node_modules/.cache/svc-ingest-test-compile');
/** The CLI a test starts as a process: the built one, or the clone's with SVC_TEST_CLI=clone. */
export const BIN = process.env.SVC_TEST_CLI === 'clone' ? CLONE_BIN : join(BUILT_CLI, 'src/bin/svc-ingest');
/**
 * The environment a child starts with: this process's, the test's over it, and defaults: one try of the check that
 * the service answers (not a minute of them), and the built CLI's compile cache in the clone (not the user's).
 */
export function childEnv(bin: string, env: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    SVC_LOG_LEVEL: 'warn',
    SVC_SEND_HEALTH_CHECK_WINDOW_MS: '0',
    ...compileCacheEnv(bin),
    ...env,
  };
}

/**
 * The built CLI's compile cache in the clone (filled before the first file: warm-cli.ts), for a child that starts
 * `bin` by another way than runCli (a shell's PATH, cron's environment); none for the clone's launcher, which keeps
 * its own.
 */
export function compileCacheEnv(bin: string = BIN): { NODE_COMPILE_CACHE?: string } {
  return bin === CLONE_BIN ? {} : { NODE_COMPILE_CACHE: BUILT_CACHE };
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  /** stderr with each line meant for a person as its text (textOf); the log lines as they came (JSON). */
  stderr: string;
  /** stderr exactly as written: off a terminal, one JSON object a line. */
  rawStderr?: string;
}

/**
 * The events of the JSON lines that carry a line of text for a person (src/log.ts stderrLine): the one error line,
 * a summary, a warning about the input, commander's usage text.
 */
const TEXT_EVENTS = new Set([
  'cli.error',
  'cli.usage',
  'cli.stack',
  'run.summary',
  'input.warning',
  'usage.warning',
  'map.reject',
  'map.summary',
  'map.ambiguous',
  'webhook.listening',
  'reconcile.empty',
]);

/**
 * stderr as a terminal would show those lines: each JSON line of text for a person becomes its `msg` (the very
 * text a terminal gets), every other line is kept; so a test can match `svc-ingest: CODE: …` in either format.
 */
export function textOf(stderr: string): string {
  return stderr.replace(/^\{.*\}$/gm, (line) => {
    try {
      const o = JSON.parse(line) as { event?: string; msg?: string };
      return o.event !== undefined && TEXT_EVENTS.has(o.event) && typeof o.msg === 'string' ? o.msg : line;
    } catch {
      return line;
    }
  });
}

/** A child's exit and what it wrote, once it has closed. */
export interface ChildOutput {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Collect what a child writes on its piped stdout and stderr (as UTF-8 text; a stream not piped stays '').
 * @example const out = collectOutput(spawn('npm', ['pack'])); const { code, stdout } = await out.closed
 */
export function collectOutput(child: ChildProcess): {
  stdout: () => string;
  stderr: () => string;
  closed: Promise<ChildOutput>;
} {
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => {
    stdout += d;
  });
  child.stderr?.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  const closed = new Promise<ChildOutput>((res) => {
    child.on('close', (code, signal) => res({ code, signal, stdout, stderr }));
  });
  return { stdout: () => stdout, stderr: () => stderr, closed };
}

export interface CliRun {
  child: ChildProcess;
  done: Promise<CliResult>;
}

/** How a test starts the CLI: its environment over this process's, its input, folder and launcher (default BIN). */
export interface CliOptions {
  env?: NodeJS.ProcessEnv;
  input?: string | Buffer;
  cwd?: string;
  bin?: string;
}

/**
 * Start the CLI. Its standard input gets `input` and is closed, or stays open for the caller to write
 * (`child.stdin`) with `keepStdinOpen`.
 */
export function startCli(args: string[], opts: CliOptions & { keepStdinOpen?: boolean } = {}): CliRun {
  const bin = opts.bin ?? BIN;
  const child = spawn(bin, args, {
    cwd: opts.cwd ?? ROOT,
    env: childEnv(bin, opts.env),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const output = collectOutput(child);
  child.stdin!.on('error', () => {});
  if (opts.input !== undefined) child.stdin!.end(opts.input);
  else if (!opts.keepStdinOpen) child.stdin!.end();
  const done = output.closed.then((o) => ({ ...o, stderr: textOf(o.stderr), rawStderr: o.stderr }));
  return { child, done };
}

export function runCli(args: string[], opts: CliOptions = {}) {
  return startCli(args, opts).done;
}

/** Parse the last JSON line of stdout as the --json summary (a traced Node's lines may share stdout with it). */
export function summaryOf(r: CliResult): Record<string, number | string | boolean | null> {
  const last =
    r.stdout
      .trim()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .pop() ?? '';
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

/** A writable that keeps what is written on it, as UTF-8 text. */
function textSink(): { stream: Writable; text: () => string } {
  const chunks: Buffer[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, _enc, cb) {
      chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
      cb();
    },
  });
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
}

/**
 * runCli's twin that runs the CLI in this process (src/cli/run.ts main(argv, io)): the same arguments, environment
 * (the test's over this process's, with the same two defaults), standard input and result, at a fraction of the
 * cost of a start (which costs ~0.13–0.35 s of CPU). For what is not about the process: signals, locks held by
 * another process, crashes, the launcher and the package keep runCli. A `cwd` other than this process's is this
 * process's for the run (relative paths are the process's own) and given back after it; while it is, another call
 * runs the child instead (vitest's forks run one test file at a time each, but a file may start runs together).
 */
export async function runCliHere(args: string[], opts: Omit<CliOptions, 'bin'> = {}): Promise<CliResult> {
  const moves = opts.cwd !== undefined && resolve(opts.cwd) !== process.cwd();
  if (cwdMoved || (moves && inProcessRuns > 0)) return runCli(args, opts);
  inProcessRuns++;
  const before = process.cwd();
  if (moves) {
    cwdMoved = true;
    process.chdir(opts.cwd as string);
  }
  try {
    return await runMainHere(args, opts);
  } finally {
    inProcessRuns--;
    if (moves) {
      process.chdir(before);
      cwdMoved = false;
    }
  }
}

/** In-process runs under way, and whether one of them has moved this process's folder. */
let inProcessRuns = 0;
let cwdMoved = false;

async function runMainHere(args: string[], opts: Omit<CliOptions, 'bin'>): Promise<CliResult> {
  const { main } = await import('../../src/cli/run.ts');
  // The sources, in this process: the environment a child on them would get.
  const env = childEnv(CLONE_BIN, opts.env);
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete env[k];
  const stdout = textSink();
  const stderr = textSink();
  const stdin = Readable.from(opts.input === undefined ? [] : [Buffer.from(opts.input)]);
  const code = await main(['node', CLONE_BIN, ...args], {
    stdout: stdout.stream,
    stderr: stderr.stream,
    stdin,
    env,
    onSignal: () => () => {},
    exit: (status) => {
      throw new Error(`the CLI asked to exit (${status}) in-process`);
    },
  });
  const raw = stderr.text();
  return { code, signal: null, stdout: stdout.text(), stderr: textOf(raw), rawStderr: raw };
}

/**
 * The environment of a `send` run into `dir` against `baseUrl`: the service, the ledger file and the rejects file
 * (`<tag>.ledger.ndjson`, `<tag>.rejects.ndjson` with a tag, for several runs in one folder).
 * @example runCliHere(['send', 'a.csv'], { env: sendEnv(sim.url, dir) })
 */
export function sendEnv(baseUrl: string, dir: string, tag?: string): Record<string, string> {
  const named = (file: string): string => join(dir, tag === undefined ? file : `${tag}.${file}`);
  return {
    SVC_BASE_URL: baseUrl,
    SVC_LEDGER_PATH: named('ledger.ndjson'),
    SVC_REJECTS_PATH: named('rejects.ndjson'),
  };
}
