// The check before reading that the service answers: retried with backoff within its window, each try logged,
// then exit 5; a service that comes back within the window is sent to. Real CLI, real sockets.
import { once } from 'node:events';
import { mkdtemp, readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startSimulator } from '../../src/simulator/index.ts';
import { ROOT, runCliHere, startCli } from '../helpers/cli.ts';

const SAMPLE = join(ROOT, 'samples/canonical.ndjson');

/** A loopback port nothing listens on (taken, then freed). */
async function deadPort(): Promise<number> {
  const srv = createServer().listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const port = (srv.address() as { port: number }).port;
  srv.close();
  await once(srv, 'close');
  return port;
}

const events = (stderr: string, event: string) =>
  stderr
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((o) => o.event === event);

describe('the service check before reading', () => {
  it('retries with backoff for its window, logging each try, then exits 5 having read nothing', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-health-'));
    const port = await deadPort();
    const t0 = Date.now();
    const r = await runCliHere(['send', '--json', '--health-check-window-ms', '700', SAMPLE], {
      cwd: dir,
      env: { SVC_BASE_URL: `http://127.0.0.1:${port}`, SVC_LOG_LEVEL: 'info' },
    });
    expect(r.code, r.stderr).toBe(5);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(700);
    const tries = events(r.rawStderr ?? '', 'service.check.retry');
    expect(tries.length).toBeGreaterThanOrEqual(1);
    expect(tries.map((t) => t.attempt)).toEqual(tries.map((_, i) => i + 1));
    expect(tries[0]).toMatchObject({ level: 40, delayMs: expect.any(Number) });
    expect(events(r.rawStderr ?? '', 'service.check.gave-up')).toHaveLength(1);
    expect(r.stderr).toMatch(/svc-ingest: SEND_UNAVAILABLE: service unavailable: HEAD/);
    // Nothing was read, so nothing was recorded.
    expect(await readFile(join(dir, 'ledger/transactions.ndjson'), 'utf8').catch(() => '')).toBe('');
  });

  it('a service that comes up within the window is sent to (exit 2: the sample has rejects)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-health-'));
    const port = await deadPort();
    const run = startCli(['send', '--json', '--health-check-window-ms', '20000', SAMPLE], {
      cwd: dir,
      env: { SVC_BASE_URL: `http://127.0.0.1:${port}`, SVC_LOG_LEVEL: 'info' },
    });
    let stderr = '';
    run.child.stderr!.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    while (!stderr.includes('"event":"service.check.retry"')) await new Promise((r) => setTimeout(r, 20));
    const sim = await startSimulator({ seed: 3, port });
    try {
      const r = await run.done;
      expect(r.code, r.stderr).toBe(2);
      expect(JSON.parse(r.stdout)).toMatchObject({ sent: 18, exitStatus: 2 });
      expect(events(r.rawStderr ?? '', 'service.check.ok')).toHaveLength(1);
    } finally {
      await sim.close();
    }
  });

  it('a window of 0 is one try', async () => {
    const port = await deadPort();
    const r = await runCliHere(['send', '--health-check-window-ms', '0', SAMPLE], {
      cwd: await mkdtemp(join(tmpdir(), 'svc-health-')),
      env: { SVC_BASE_URL: `http://127.0.0.1:${port}`, SVC_LOG_LEVEL: 'info' },
    });
    expect(r.code).toBe(5);
    expect(events(r.rawStderr ?? '', 'service.check.retry')).toHaveLength(0);
  });
});
