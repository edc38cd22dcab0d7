// `svc-ingest simulate` as a real child process: first stdout line is a live URL, flags apply, SIGTERM exits 0.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { BIN, ROOT, runCliHere } from '../helpers/cli.ts';
import { call, makeTx, postTx } from './helpers.ts';

function startCli(args: string[], env: NodeJS.ProcessEnv = {}) {
  const child = spawn(BIN, ['simulate', ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  const firstLine = new Promise<string>((ok, fail) => {
    const rl = createInterface({ input: child.stdout });
    rl.once('line', ok);
    child.once('exit', (code) => fail(new Error(`exited ${code} before printing a URL: ${stderr}`)));
  });
  const exited = new Promise<number | null>((ok) => child.once('exit', (code) => ok(code)));
  return { child, firstLine, exited, stderr: () => stderr };
}

describe('svc-ingest simulate', () => {
  it('prints a URL that answers, applies its flags, and exits 0 on SIGTERM', async () => {
    const run = startCli([
      '--port',
      '0',
      '--seed',
      '3',
      '--fail-first',
      '1',
      '--poison',
      'tx-000009,tx-000010',
    ]);
    const url = await run.firstLine;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await postTx(url, [makeTx(1)])).status).toBe(500);
    expect((await postTx(url, [makeTx(1)])).status).toBe(200);
    expect((await postTx(url, [makeTx(9)])).status).toBe(500);
    const stats = (await call(`${url}/__sim/stats`)).body;
    expect(stats).toMatchObject({ faults: { failFirst: 1, poison: 1 }, transactions: { accepted: 1 } });
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
    expect(run.stderr()).toContain('simulator.started');
    expect(run.stderr()).not.toMatch(/\n\s+at /); // no stack trace
  });

  it('exits 0 on SIGINT too', async () => {
    const run = startCli([]);
    await run.firstLine;
    run.child.kill('SIGINT');
    expect(await run.exited).toBe(0);
  });

  it('refuses bad flags with a one-line error naming the flag and exit 1', async () => {
    const cases: Array<[string[], string]> = [
      [['--fail-rate', '2'], '--fail-rate'],
      [['--port', 'abc'], '--port'],
      [['--fail-first', '-1'], '--fail-first'],
      [['--webhook-url', 'not a url'], '--webhook-url'],
      [['--poison', 'a,,b'], '--poison'],
      [['--tls-cert', '/nonexistent.pem', '--tls-key', '/nonexistent.pem'], '--tls-cert'],
    ];
    // Children run concurrently: each one's start-up dominates.
    const results = await Promise.all(cases.map(([args]) => runCliHere(['simulate', ...args])));
    results.forEach((r, i) => {
      const [args, flag] = cases[i]!;
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stdout).toBe('');
      const lines = r.stderr.trim().split('\n');
      expect(lines, args.join(' ')).toHaveLength(1);
      expect(lines[0]).toContain('USAGE_INVALID');
      expect(lines[0]).toContain(flag);
    });
  });

  it('off loopback only with --allow-remote (its control API is unauthenticated); nothing is bound when refused', async () => {
    for (const host of ['0.0.0.0', '::']) {
      const r = await runCliHere(['simulate', '--host', host]);
      expect(r.code, host).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(/USAGE_INVALID: --host .* is not a loopback address; .*--allow-remote/);
    }
    const run = startCli(['--host', '127.0.0.2']);
    expect(await run.firstLine).toMatch(/^http:\/\/127\.0\.0\.2:\d+$/);
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
  });

  it('--require-token takes the token from SVC_SIM_TOKEN, never from argv', async () => {
    const missing = await runCliHere(['simulate', '--require-token'], { env: { SVC_SIM_TOKEN: '' } });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(
      /--require-token: the token comes from env SVC_SIM_TOKEN, which is not set/,
    );
    const onArgv = await runCliHere(['simulate', '--require-token', 'tok-on-argv']);
    expect(onArgv.code).toBe(1);
    expect(onArgv.stdout).toBe('');
    const run = startCli(['--require-token'], { SVC_SIM_TOKEN: 'tok-from-env-1' });
    try {
      const url = await run.firstLine;
      const tx = [makeTx(1)];
      expect((await postTx(url, tx)).status).toBe(401);
      const ok = await fetch(`${url}/v2/data/transactions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer tok-from-env-1' },
        body: JSON.stringify({ transactions: tx }),
      });
      expect(ok.status).toBe(200);
    } finally {
      run.child.kill('SIGTERM');
      await run.exited;
    }
    expect(run.stderr()).not.toContain('tok-from-env-1');
  });

  it('documents every option with its default in --help', async () => {
    const r = await runCliHere(['simulate', '--help']);
    expect(r.code).toBe(0);
    const flags = [
      '--port',
      '--seed',
      '--latency-ms',
      '--jitter-ms',
      '--fail-rate',
      '--fail-first',
      '--reset-rate',
      '--hang-rate',
      '--rate429',
      '--retry-after-s',
      '--poison',
      '--webhook-url',
      '--ticket-delay-ms',
      '--session-ttl-ms',
      '--require-token',
      '--allow-remote',
    ];
    const text = r.stdout.replace(/\s+/g, ' ');
    for (const f of flags) {
      const at = text.indexOf(`${f} `);
      expect(at, f).toBeGreaterThanOrEqual(0);
      expect(text.slice(at, text.indexOf(' --', at + 2)), f).toMatch(/default/);
    }
  });
});
