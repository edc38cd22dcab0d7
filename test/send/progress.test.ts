// Progress with nobody watching (a log line every N seconds when stderr is not a TTY, with rate and ETA when the
// input's size is known), on a terminal (percent and ETA on the live line, log lines never glued onto it), and
// batches cut short by a stop logged as "interrupted, not sent".
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { BIN, collectOutput, runCliHere, startCli, summaryOf, waitFor } from '../helpers/cli.ts';
import { useSimulator } from '../helpers/simulator.ts';
import { csvOf, makeTx, range } from '../helpers/transactions.ts';

const sim = useSimulator({ seed: 9 }, 'reset');
let dir: string;
const env = (extra: NodeJS.ProcessEnv = {}) => ({
  SVC_BASE_URL: sim.url,
  SVC_LEDGER_PATH: join(dir, 'ledger.ndjson'),
  SVC_REJECTS_PATH: join(dir, 'rejects.ndjson'),
  SVC_LOG_LEVEL: 'info',
  ...extra,
});
type LogLine = Record<string, unknown> & { event?: string; msg?: string; level?: number };
const logLines = (stderr: string): LogLine[] =>
  stderr
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as LogLine);
const progressLines = (stderr: string) => logLines(stderr).filter((l) => l.event === 'run.progress');

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-progress-'));
});

describe('send: progress when stderr is not a TTY', () => {
  it('logs read, sent, rate, percent and ETA every --progress-interval seconds for a file', async () => {
    sim.setFaults({ latencyMs: 60 });
    const file = join(dir, 'in.csv');
    await writeFile(file, csvOf(range(1500).map((i) => makeTx(i, 'pg'))));
    const size = (await stat(file)).size;
    const r = await runCliHere(['send', '--json', '--concurrency', '1', '--progress-interval', '0.3', file], {
      env: env(),
    });
    expect(r.code, r.stderr).toBe(0);
    const lines = progressLines(r.stderr);
    expect(lines.length).toBeGreaterThanOrEqual(3);
    for (const l of lines) {
      expect(l).toMatchObject({ level: 30, bytesTotal: size });
      for (const k of ['read', 'sent', 'skipped', 'rejected', 'failed', 'ratePerSecond', 'inFlight'])
        expect(typeof l[k]).toBe('number');
      expect(l.bytesRead as number).toBeLessThanOrEqual(size);
      expect(l.percent as number).toBeGreaterThanOrEqual(0);
      expect(l.percent as number).toBeLessThanOrEqual(100);
    }
    const later = lines.at(-1)!;
    expect(later.read as number).toBeGreaterThan(0);
    expect(later.ratePerSecond as number).toBeGreaterThan(0);
    expect(typeof later.etaSeconds).toBe('number');
    expect(later.msg).toMatch(/^progress: read \d+ \(\d+\.\d%\)\s+sent \d+ .* \d+\/s .*ETA \d+(s|m\d\ds)$/);
    // Counts only move forward.
    for (let k = 1; k < lines.length; k++)
      expect(lines[k]!.read as number).toBeGreaterThanOrEqual(lines[k - 1]!.read as number);
  });

  it('from a pipe the size is unknown: rate but no percent or ETA', async () => {
    sim.setFaults({ latencyMs: 60 });
    const r = await runCliHere(['send', '--json', '--concurrency', '1', '--progress-interval', '0.3', '-'], {
      env: env(),
      input: csvOf(range(800).map((i) => makeTx(i, 'pp'))),
    });
    expect(r.code, r.stderr).toBe(0);
    const lines = progressLines(r.stderr);
    expect(lines.length).toBeGreaterThanOrEqual(2);
    for (const l of lines) {
      expect(l).toMatchObject({ bytesTotal: null, percent: null, etaSeconds: null });
      expect(l.msg).not.toMatch(/ETA/);
    }
  });

  it('the interval is a config key too (SVC_SEND_PROGRESS_INTERVAL_MS); --no-progress and the 30 s default stay quiet', async () => {
    sim.setFaults({ latencyMs: 40 });
    const file = join(dir, 'in.csv');
    await writeFile(file, csvOf(range(600).map((i) => makeTx(i, 'pq'))));
    const byEnv = await runCliHere(['send', '--json', '--concurrency', '1', '--no-resume', file], {
      env: env({ SVC_SEND_PROGRESS_INTERVAL_MS: '200' }),
    });
    expect(progressLines(byEnv.stderr).length).toBeGreaterThanOrEqual(2);
    const off = await runCliHere(
      ['send', '--json', '--concurrency', '1', '--no-resume', '--no-progress', file],
      {
        env: env({ SVC_SEND_PROGRESS_INTERVAL_MS: '200' }),
      },
    );
    expect(off.code).toBe(0);
    expect(progressLines(off.stderr)).toHaveLength(0);
    const byDefault = await runCliHere(['send', '--json', '--concurrency', '1', '--no-resume', file], {
      env: env(),
    });
    expect(progressLines(byDefault.stderr)).toHaveLength(0);
    const bad = await runCliHere(['send', '--progress-interval', 'soon', file], { env: env() });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/--progress-interval: expected a number of seconds, got "soon"/);
  });
});

describe('send: batches cut short by a stop', () => {
  it('SIGTERM: every batch not sent is logged "interrupted, not sent", never "batch failed after retries"', async () => {
    sim.setFaults({ latencyMs: 80 });
    const file = join(dir, 'in.csv');
    await writeFile(file, csvOf(range(4000).map((i) => makeTx(i, 'it'))));
    const run = startCli(['send', '--json', '--concurrency', '3', file], { env: env() });
    await waitFor(() => sim.stats().transactions.accepted >= 300, run.child);
    run.child.kill('SIGTERM');
    const r = await run.done;
    expect(r.code).toBe(143);
    const s = summaryOf(r);
    const lines = logLines(r.stderr);
    expect(lines.filter((l) => l.msg === 'batch failed after retries')).toHaveLength(0);
    const interrupted = lines.filter((l) => l.event === 'batch.interrupted');
    expect(interrupted.length).toBe(s.failedBatches);
    expect(interrupted.reduce((n, l) => n + (l.records as number), 0)).toBe(s.failed);
    for (const l of interrupted)
      expect(l).toMatchObject({ level: 40, msg: 'interrupted, not sent', attempts: 0 });
    // The ledger keeps them as failed with attempts 0, so a rerun sends them.
    const ledger = (await readFile(join(dir, 'ledger.ndjson'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const failed = ledger.filter((l) => l.status === 'failed');
    expect(failed).toHaveLength(interrupted.length);
    for (const l of failed) expect(l.attempts).toBe(0);
  });
});

/** Runs the CLI on a pseudo-terminal (util-linux `script`), its pid written to a file; returns the raw output. */
function startOnTty(args: string[], extraEnv: NodeJS.ProcessEnv) {
  const pidFile = join(dir, 'pid');
  const quoted = args.map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ');
  const child = spawn('script', ['-qfec', `echo $$ > '${pidFile}'; exec '${BIN}' ${quoted}`, '/dev/null'], {
    env: { ...process.env, ...extraEnv, COLUMNS: '300' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const output = collectOutput(child);
  const done = output.closed.then(({ code }) => code);
  return { child, pidFile, output: output.stdout, done };
}

describe('send: on a terminal', () => {
  it('shows percent and ETA on the live line, and a log line never lands on it', async () => {
    sim.setFaults({ latencyMs: 80 });
    const file = join(dir, 'in.csv');
    await writeFile(file, csvOf(range(4000).map((i) => makeTx(i, 'ty'))));
    const run = startOnTty(['send', '--concurrency', '3', file], env({ SVC_LOG_LEVEL: 'warn' }));
    await waitFor(() => sim.stats().transactions.accepted >= 300 && run.output().includes('ETA'), run.child);
    const pid = Number((await readFile(run.pidFile, 'utf8')).trim());
    process.kill(pid, 'SIGTERM');
    expect(await run.done).toBe(143);
    const out = run.output();
    // The live line: read N (P%) … ETA.
    expect(out).toMatch(/read \d+ \(\d+\.\d%\) +sent \d+ .*ETA \d+/);
    // Each piece between carriage returns / newlines is either the live line or a log line, never both.
    const pieces = out.split(/[\r\n]/);
    const logs = pieces.filter((p) => /WARN/.test(p));
    expect(logs.some((p) => p.includes('stopping'))).toBe(true);
    expect(logs.some((p) => p.includes('interrupted, not sent'))).toBe(true);
    expect(logs.some((p) => p.includes('batch failed after retries'))).toBe(false);
    for (const p of logs) {
      expect(p).not.toMatch(/in flight \d/);
      expect(p).toMatch(/^(\x1b\[K)?\[\d\d:\d\d:\d\d\.\d{3}\] /);
    }
    // The summary follows on lines of its own.
    expect(pieces.some((p) => /^(\x1b\[K)?read \d+, valid \d+/.test(p))).toBe(true);
  });
});
