// `tickets listen` under attack, as a real child process: forged, replayed, oversized, mistyped and slow POSTs are
// refused without being printed; signed updates from the simulator (`simulate` with SVC_SIM_WEBHOOK_SECRET) go
// through end to end; every printed update has its card numbers masked.
import { mkdtempSync } from 'node:fs';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { SIGNATURE_HEADER, signWebhook, TIMESTAMP_HEADER } from '../../src/tickets/webhook.ts';
import { type CliRun, runCliHere, startCli, waitFor } from '../helpers/cli.ts';

const SECRET = 'whsec-test-0123456789abcdef';
const signedEnv = { SVC_WEBHOOK_SECRET_ENV: 'HOOK_SECRET', HOOK_SECRET: SECRET };

interface Listener {
  run: CliRun;
  url: string;
  out(): { stdout: string; stderr: string };
  stop(): Promise<{ stdout: string; stderr: string; code: number | null }>;
}

/** A fresh folder for a listener's ledger, so its ticket store (tickets.ndjson next to it) starts empty. */
const freshLedger = () => join(mkdtempSync(join(tmpdir(), 'svc-webhook-')), 'transactions.ndjson');

/** Starts `tickets listen` (its own ticket store) and waits for its URL. */
async function listen(args: string[] = [], env: NodeJS.ProcessEnv = signedEnv): Promise<Listener> {
  const run = startCli(['tickets', 'listen', '--port', '0', ...args], {
    env: { SVC_LEDGER_PATH: freshLedger(), ...env },
  });
  let stdout = '';
  let stderr = '';
  run.child.stdout!.on('data', (d: Buffer | string) => {
    stdout += d;
  });
  run.child.stderr!.on('data', (d: Buffer | string) => {
    stderr += d;
  });
  await waitFor(() => /listening on (\S+)/.test(stderr), run.child, 10_000);
  const url = /listening on (\S+)/.exec(stderr)![1]!;
  return {
    run,
    url,
    out: () => ({ stdout, stderr }),
    async stop() {
      if (run.child.exitCode === null) run.child.kill('SIGTERM');
      const r = await run.done;
      return { stdout, stderr, code: r.code };
    },
  };
}

interface Answer {
  status: number;
  body: string;
  closed: boolean;
}

/** One POST with exactly these headers and body. */
function post(url: string, body: string, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: 'POST',
      headers: { 'content-length': Buffer.byteLength(body), ...headers },
    });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => {
        text += d;
      });
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body: text, closed: res.headers.connection === 'close' }),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** POSTs `mib` MiB of spaces as fast as the server takes them; how far it got and the status, if any came. */
function flood(
  url: string,
  headers: Record<string, string>,
  mib: number,
): Promise<{ status: number; written: number }> {
  return new Promise((resolve) => {
    const req = request(url, { method: 'POST', headers });
    let written = 0;
    let status = 0;
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const pump = () => {
      while (written < mib * 1024 * 1024) {
        written += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      req.end();
    };
    req.on('response', (res) => {
      status = res.statusCode ?? 0;
      res.resume();
    });
    req.on('error', () => resolve({ status, written }));
    req.on('close', () => resolve({ status, written }));
    pump();
  });
}

function signed(
  body: string,
  timestamp = Math.floor(Date.now() / 1000),
  secret = SECRET,
): Record<string, string> {
  return {
    'content-type': 'application/json',
    [TIMESTAMP_HEADER]: String(timestamp),
    [SIGNATURE_HEADER]: signWebhook(secret, timestamp, body),
  };
}

const update = (id: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ sourceTicketId: id, processingStatus: 'Success', status: 'In Process', ...extra });

const printed = (stdout: string) =>
  stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { sourceTicketId: string; description?: string });

describe('tickets listen with a shared secret', () => {
  it('end to end: the simulate command signs its webhook POSTs with SVC_SIM_WEBHOOK_SECRET; the listener prints them', async () => {
    const l = await listen(['--until-closed', 'wh-1']);
    const sim = startCli(['simulate', '--ticket-delay-ms', '20', '--webhook-url', l.url], {
      env: { SVC_SIM_WEBHOOK_SECRET: SECRET },
    });
    try {
      const simUrl = await new Promise<string>((resolve) =>
        createInterface({ input: sim.child.stdout! }).once('line', resolve),
      );
      const created = await runCliHere(
        [
          'tickets',
          'create',
          '--ticket-id',
          'wh-1',
          '--customer',
          'cust-0001',
          '--offer',
          '100001',
          '--transaction',
          '7',
          '--description',
          'reward missing after purchase',
          '--base-url',
          simUrl,
          // No ledger here holds transaction 7: sent anyway.
          '--force',
        ],
        { env: { SVC_LEDGER_PATH: freshLedger() } },
      );
      expect(created.code, created.stderr).toBe(0);
      const r = await l.run.done;
      expect(r.code, l.out().stderr).toBe(0);
      expect(printed(l.out().stdout).map((u) => u.sourceTicketId)).toEqual(['wh-1', 'wh-1']);
      expect(l.out().stderr).not.toContain('webhook.refused');
    } finally {
      sim.child.kill('SIGTERM');
      await sim.done;
      await l.stop();
    }
  });

  it('forged, mis-signed and replayed updates get 401 and are not printed; a replay of a delivered one is not printed twice', async () => {
    const l = await listen();
    try {
      const body = update('T-forged', { status: 'Closed' });
      const now = Math.floor(Date.now() / 1000);
      const unsigned = await post(l.url, body, { 'content-type': 'application/json' });
      const badSig = await post(l.url, body, { ...signed(body), [SIGNATURE_HEADER]: `v1=${'0'.repeat(64)}` });
      const otherSecret = await post(l.url, body, signed(body, now, 'another-secret-of-enough-length'));
      const tampered = await post(l.url, update('T-forged', { status: 'Closed', x: 1 }), signed(body));
      const old = await post(l.url, body, signed(body, now - 600));
      const future = await post(l.url, body, signed(body, now + 600));
      for (const a of [unsigned, badSig, otherSecret, tampered, old, future]) {
        expect(a.status).toBe(401);
        expect(a.closed).toBe(true);
      }
      expect(old.body).toMatch(/window/);
      const good = update('T-good');
      const headers = signed(good);
      expect((await post(l.url, good, headers)).status).toBe(200);
      const again = await post(l.url, good, headers);
      expect(again.status).toBe(200);
      expect(again.body).toContain('duplicate');
      await waitFor(() => l.out().stdout.includes('T-good'));
      const r = await l.stop();
      expect(printed(r.stdout).map((u) => u.sourceTicketId)).toEqual(['T-good']);
      expect(r.stdout).not.toContain('T-forged');
      expect(r.stderr.match(/"event":"webhook\.refused"/g)?.length).toBe(6);
    } finally {
      await l.stop();
    }
  });

  it('prints every update with card numbers masked', async () => {
    const l = await listen();
    try {
      const body = update('T-pan', {
        description: 'card 4111 1111 1111 1111 charged twice',
        ref: 5555555555554444,
      });
      expect((await post(l.url, body, signed(body))).status).toBe(200);
      await waitFor(() => l.out().stdout.includes('T-pan'));
      const r = await l.stop();
      const digits = r.stdout.replace(/[ -]/g, '');
      expect(digits).not.toContain('4111111111111111');
      expect(digits).not.toContain('5555555555554444');
      expect(r.stdout).toContain('411111******1111');
    } finally {
      await l.stop();
    }
  });

  it('415 for a body that is not JSON; 413 and a closed connection for an oversized one, not read to the end', async () => {
    const l = await listen();
    try {
      const body = update('T-type');
      expect((await post(l.url, body, { ...signed(body), 'content-type': 'text/plain' })).status).toBe(415);
      expect(
        (await post(l.url, body, { ...signed(body), 'content-type': 'application/x-www-form-urlencoded' }))
          .status,
      ).toBe(415);

      // Declared 300 MB: answered 413 at once; the sender's writes fail long before the end. What the sender gets
      // written is what the kernel buffers on loopback without us reading (up to tcp_rmem's max, 32 MiB on Linux
      // by default, plus the sender's own buffer: ~30-36 MiB seen, more on a loaded machine); reading the body
      // would take all 300 MB within the 1 s linger.
      const unread = 128 * 1024 * 1024;
      const huge = await flood(l.url, { ...signed('{}'), 'content-length': String(300 * 1024 * 1024) }, 300);
      expect(huge.status).toBe(413);
      expect(huge.written).toBeLessThan(unread);
      // Chunked, no length: refused once 1 MiB has come in.
      const chunked = await flood(l.url, signed('{}'), 200);
      expect(chunked.status).toBe(413);
      expect(chunked.written).toBeLessThan(unread);

      // Still serving.
      expect((await post(l.url, body, signed(body))).status).toBe(200);
      const r = await l.stop();
      expect(printed(r.stdout).map((u) => u.sourceTicketId)).toEqual(['T-type']);
    } finally {
      await l.stop();
    }
  });

  it('slow-body connections: beyond the cap the oldest are closed, a valid POST is still served, and the request timeout closes the rest', async () => {
    const l = await listen([], {
      ...signedEnv,
      SVC_WEBHOOK_TIMEOUT_MS: '1500',
      SVC_WEBHOOK_MAX_CONNECTIONS: '32',
    });
    const { port } = new URL(l.url);
    const slow: Socket[] = [];
    let closed = 0;
    try {
      for (let i = 0; i < 200; i++) {
        const s = connect(Number(port), '127.0.0.1');
        s.on('error', () => {});
        // Read (and drop) what comes back, so a close by the server is seen.
        s.resume();
        s.on('close', () => {
          closed++;
        });
        s.write(
          `POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n` +
            `${TIMESTAMP_HEADER}: ${Math.floor(Date.now() / 1000)}\r\n${SIGNATURE_HEADER}: v1=${'a'.repeat(64)}\r\n\r\n{"sl`,
        );
        slow.push(s);
      }
      await waitFor(() => closed >= 200 - 32, undefined, 5_000);
      const body = update('T-served');
      const t0 = performance.now();
      const a = await post(l.url, body, signed(body));
      expect(a.status).toBe(200);
      expect(performance.now() - t0).toBeLessThan(1_000);
      // The request timeout (1.5 s here, 10 s by default) closes every slow one still open.
      await waitFor(() => closed === 200, undefined, 6_000);
      const r = await l.stop();
      expect(printed(r.stdout).map((u) => u.sourceTicketId)).toEqual(['T-served']);
      expect(r.stderr).toContain('webhook.evicted');
    } finally {
      for (const s of slow) s.destroy();
      await l.stop();
    }
  });

  it('a webhook secret too short or with a line break is refused; a non-loopback address without a secret warns', async () => {
    const short = await runCliHere(['tickets', 'listen', '--port', '0'], {
      env: { SVC_WEBHOOK_SECRET_ENV: 'HOOK_SECRET', HOOK_SECRET: 'short' },
    });
    expect(short.code).toBe(1);
    expect(short.stderr).toMatch(/webhook secret in env HOOK_SECRET .* shorter than 16 characters/);
    expect(short.stderr).not.toContain('short\n');
    const broken = await runCliHere(['tickets', 'listen', '--port', '0'], {
      env: { SVC_WEBHOOK_SECRET_ENV: 'HOOK_SECRET', HOOK_SECRET: 'long-enough-secret\nsecond-line' },
    });
    expect(broken.code).toBe(1);
    expect(broken.stderr).toMatch(/control character/);
    expect(broken.stderr).not.toContain('second-line');
    const open = await listen(['--host', '0.0.0.0'], {});
    const r = await open.stop();
    expect(r.stderr).toContain('webhook.unsigned');
    expect(r.stderr).toMatch(/without a webhook secret/);
    const loop = await listen([], {});
    expect((await loop.stop()).stderr).not.toContain('webhook.unsigned');
  });
});
