// The non-send commands as real child processes against the simulator: output, exit statuses, webhook listening.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/index.ts';
import { type Simulator, startSimulator } from '../../src/simulator/index.ts';
import { configFor, makeTransaction } from '../client/fixtures.ts';
import { runCliHere } from '../helpers/cli.ts';

const BIN = fileURLToPath(new URL('../../src/bin/svc-ingest', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'svc-commands-'));

function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('SVC_')) env[k] = v;
  return { ...env, SVC_LOG_LEVEL: 'warn', ...extra };
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function start(
  args: string[],
  env = cleanEnv(),
): { child: ChildProcess; done: Promise<Run>; out: { stdout: string; stderr: string } } {
  const child = spawn(BIN, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const out = { stdout: '', stderr: '' };
  child.stdout?.on('data', (c) => (out.stdout += c));
  child.stderr?.on('data', (c) => (out.stderr += c));
  const done = new Promise<Run>((resolve) =>
    child.on('close', (code, sig) => {
      if (sig) out.stderr += `[killed by ${sig}]`;
      resolve({ code, ...out });
    }),
  );
  return { child, done, out };
}

/** A run to its end, in this process (the webhook listener, stopped by a signal, keeps `start`). */
const run = async (args: string[], env = cleanEnv()): Promise<Run> => {
  const r = await runCliHere(args, { env });
  return { code: r.code, stdout: r.stdout, stderr: r.rawStderr ?? '' };
};

let sim: Simulator;
let adId: string;
beforeAll(async () => {
  sim = await startSimulator({ seed: 11, ticketDelayMs: 20 });
  const client = createClient(configFor(sim.url));
  const r = await client.getRedemptions('cust-0001', { lookbackWindowInDays: 396 });
  adId = Object.keys(r.ads)[0] ?? '';
  await client.close();
});
afterAll(async () => {
  await sim.close();
});

describe('redemptions', () => {
  it('prints the answer as JSON', async () => {
    const r = await run([
      'redemptions',
      '--customer',
      'cust-0001',
      '--lookback-days',
      '396',
      '--json',
      '--base-url',
      sim.url,
    ]);
    expect(r.code).toBe(0);
    const body = JSON.parse(r.stdout);
    expect(Array.isArray(body.redemptions)).toBe(true);
    expect(Object.keys(body.ads)).toContain(adId);
  });

  it('prints text by default', async () => {
    const r = await run(['redemptions', '--customer', 'cust-0001', '--base-url', sim.url]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/redemption\(s\) for customer cust-0001 \[requestId /);
  });

  it('refuses a lookback out of range before sending (exit 1)', async () => {
    const before = sim.stats().requests.total;
    const r = await run([
      'redemptions',
      '--customer',
      'cust-0001',
      '--lookback-days',
      '397',
      '--base-url',
      sim.url,
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('SEND_LIMIT: limit lookbackWindowInDays');
    expect(r.stdout).toBe('');
    expect(sim.stats().requests.total).toBe(before);
  });

  it('reports bad configuration naming key and source (exit 1, no stack)', async () => {
    const r = await run(['redemptions', '--customer', 'c', '--base-url', 'http://svc.example.com']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('CONFIG_INVALID: config key baseUrl (from flag --base-url)');
    expect(r.stderr).not.toMatch(/\n\s+at /);
    const e = await run(['redemptions', '--customer', 'c'], cleanEnv({ SVC_TIMEOUT_MS: '-5' }));
    expect(e.code).toBe(1);
    expect(e.stderr).toContain('timeoutMs (from env SVC_TIMEOUT_MS)');
  });
});

describe('stores', () => {
  it('lists stores by postal code, as JSON and text', async () => {
    const j = await run([
      'stores',
      '--ad',
      adId,
      '--postal-code',
      '85004',
      '--radius',
      '48000',
      '--json',
      '--base-url',
      sim.url,
    ]);
    expect(j.code).toBe(0);
    expect(Object.keys(JSON.parse(j.stdout).adStoreLocations)).toEqual([adId]);
    const t = await run([
      'stores',
      '--ad',
      adId,
      '--lat',
      '33.45',
      '--lon',
      '-112.07',
      '--radius',
      '48000',
      '--base-url',
      sim.url,
    ]);
    expect(t.code).toBe(0);
    expect(t.stdout).toContain(`ad ${adId}:`);
  });

  it('needs a location and a radius within limits', async () => {
    const noLoc = await run(['stores', '--ad', adId, '--radius', '10', '--base-url', sim.url]);
    expect(noLoc.code).toBe(1);
    expect(noLoc.stderr).toContain('USAGE_INVALID');
    const far = await run([
      'stores',
      '--ad',
      adId,
      '--postal-code',
      '85004',
      '--radius',
      '48001',
      '--base-url',
      sim.url,
    ]);
    expect(far.code).toBe(1);
    expect(far.stderr).toContain('storeLocationRadiusInMeters');
  });
});

describe('tickets', () => {
  it('listen --until-closed prints each update as NDJSON and exits 0 when the ticket closes', async () => {
    const ledgerEnv = cleanEnv({
      SVC_LEDGER_PATH: join(mkdtempSync(join(tmpdir(), 'svc-tickets-')), 'l.ndjson'),
    });
    const listen = start(['tickets', 'listen', '--port', '0', '--until-closed', 'cmd-1'], ledgerEnv);
    const url = await new Promise<string>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`no URL: ${listen.out.stderr}`)), 5000);
      const check = () => {
        const m = /listening on (\S+)/.exec(listen.out.stderr);
        if (m?.[1]) {
          clearTimeout(t);
          resolve(m[1]);
        } else setTimeout(check, 10);
      };
      check();
    });
    const hooked = await startSimulator({ seed: 11, ticketDelayMs: 20, webhookUrl: url });
    try {
      const created = await run(
        [
          'tickets',
          'create',
          '--ticket-id',
          'cmd-1',
          '--customer',
          'cust-0001',
          '--offer',
          adId,
          '--transaction',
          '5',
          '6',
          '--description',
          'reward missing',
          '--json',
          '--base-url',
          hooked.url,
          // No ledger holds transactions 5 and 6: sent anyway.
          '--force',
        ],
        ledgerEnv,
      );
      expect(created.code).toBe(0);
      expect(JSON.parse(created.stdout)).toMatchObject({ sourceTicketId: 'cmd-1', httpStatus: 202 });
      const r = await listen.done;
      expect(r.code).toBe(0);
      const updates = r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(updates.map((u) => u.status)).toEqual(['In Process', 'Closed']);
      const got = await run(['tickets', 'get', 'cmd-1', '--json', '--base-url', hooked.url], ledgerEnv);
      expect(got.code).toBe(0);
      expect(JSON.parse(got.stdout)).toMatchObject({
        sourceTicketId: 'cmd-1',
        status: 'Closed',
        transactionIds: [5, 6],
      });
      const text = await run(['tickets', 'get', 'cmd-1', '--base-url', hooked.url], ledgerEnv);
      expect(text.stdout).toContain('ticket cmd-1');
    } finally {
      listen.child.kill();
      await hooked.close();
    }
  });

  it('create refuses more than 10 transactions; get of an unknown ticket exits 1', async () => {
    const ids = Array.from({ length: 11 }, (_, i) => String(i + 1));
    const r = await run([
      'tickets',
      'create',
      '--ticket-id',
      't',
      '--customer',
      'c',
      '--offer',
      '1',
      '--transaction',
      ...ids,
      '--description',
      'd',
      '--base-url',
      sim.url,
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('ticketTransactionIdsMax');
    const g = await run(['tickets', 'get', 'nope', '--base-url', sim.url]);
    expect(g.code).toBe(1);
    expect(g.stderr).toContain('HTTP 404');
  });

  it('listen stops with 0 on SIGTERM when not waiting for a ticket', async () => {
    const listen = start(
      ['tickets', 'listen', '--port', '0'],
      cleanEnv({ SVC_LEDGER_PATH: join(mkdtempSync(join(tmpdir(), 'svc-tickets-')), 'l.ndjson') }),
    );
    while (!listen.out.stderr.includes('listening on')) await new Promise((r) => setTimeout(r, 10));
    listen.child.kill('SIGTERM');
    const res = await listen.done;
    expect(res.code, res.stderr).toBe(0);
  });
});

describe('reconcile', () => {
  it('matches redemptions to acked ledger lines: 0 when all matched, 2 otherwise', async () => {
    const customer = 'recon-customer';
    const client = createClient(configFor(sim.url));
    const txs = Array.from({ length: 30 }, (_, i) => ({
      ...makeTransaction(1000 + i, customer),
      sourceAccountId: 'acct-r',
    }));
    await client.postTransactions(txs, { requestId: 'recon-batch' });
    const earned = (await client.getRedemptions(customer)).redemptions.map((r) => r.transactionId);
    await client.close();
    expect(earned.length).toBeGreaterThan(0);

    const full = join(dir, 'full.ndjson');
    const line = (status: string, ids: string[]) =>
      JSON.stringify({
        ts: new Date().toISOString(),
        batchId: 'b',
        status,
        transactionIds: ids,
        attempts: 1,
        httpStatus: 200,
      });
    writeFileSync(
      full,
      `${line(
        'acked',
        txs.map((t) => t.transactionId),
      )}\n{"torn":`,
    );
    const ok = await run([
      'reconcile',
      '--customer',
      customer,
      '--ledger',
      full,
      '--json',
      '--base-url',
      sim.url,
    ]);
    expect(ok.code).toBe(0);
    const report = JSON.parse(ok.stdout);
    expect(report.totals).toMatchObject({
      customers: 1,
      customersFailed: 0,
      redemptions: earned.length,
      matched: earned.length,
      unmatched: 0,
    });
    expect(report.customers[0].items.map((i: { transactionId: string }) => i.transactionId)).toEqual(earned);
    expect(report.ledgerBadLines).toBe(1);

    const partial = join(dir, 'partial.ndjson');
    writeFileSync(partial, `${line('failed', earned)}\n`);
    const bad = await run(['reconcile', '--customer', customer, '--ledger', partial, '--base-url', sim.url]);
    expect(bad.code).toBe(2);
    expect(bad.stdout).toMatch(
      new RegExp(`^${customer}\\s+${earned.length}\\s+0\\s+${earned.length}\\s`, 'm'),
    );
    expect(bad.stdout).toContain(`0 matched, ${earned.length} unmatched`);
    for (const id of earned) expect(bad.stdout).toMatch(new RegExp(`transaction ${id} .*UNMATCHED`));

    const viaEnv = await run(
      ['reconcile', '--customer', customer, '--json', '--base-url', sim.url],
      cleanEnv({ SVC_LEDGER_PATH: full }),
    );
    expect(viaEnv.code).toBe(0);
    expect(JSON.parse(viaEnv.stdout).ledgers).toEqual([full]);
  });
});
