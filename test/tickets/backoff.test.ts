// `tickets create` waits between resubmissions by the settings table's backoff (send.retryBaseMs, send.retryMaxMs):
// its --retry-base-ms and --retry-max-ms, env SVC_SEND_RETRY_BASE_MS / SVC_SEND_RETRY_MAX_MS and a config file's
// send.retry* reach the waits its log lines give (ticket.resubmit's delayMs); a value the table refuses is refused in
// one line naming the flag, before anything is stored or sent. The real CLI against a capture server answering 503.
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useCapture } from '../helpers/capture.ts';
import { createTicket } from '../helpers/tickets.ts';

const capture = useCapture();

/** A create of ticket T-1 with --force, through a ledger of its own; the waits its resubmit lines give. */
async function create(extra: string[], env: NodeJS.ProcessEnv = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-backoff-'));
  const args = ['--force', '--base-url', capture.url, ...extra];
  const r = await createTicket(
    { SVC_LEDGER_PATH: join(dir, 'l.ndjson'), ...env },
    'T-1',
    'cust-1',
    '123',
    args,
  );
  const waits = r.stderr
    .split('\n')
    .filter((l) => l.includes('"ticket.resubmit"'))
    .map((l) => (JSON.parse(l) as { delayMs?: number }).delayMs);
  return { ...r, dir, waits };
}

describe('tickets create: the backoff of the settings table', () => {
  it('--retry-base-ms and --retry-max-ms set the waits between resubmissions', async () => {
    capture.failWith = { status: 503, body: '{}' };
    const r = await create(['--max-attempts', '4', '--retry-base-ms', '20', '--retry-max-ms', '30']);
    expect(r.code, r.stderr).toBe(3);
    expect(capture.all.length).toBe(4);
    // Doubled each time, capped at 30; the last attempt has no wait after it.
    expect(r.waits).toEqual([20, 30, 30, undefined]);
  });

  it('env SVC_SEND_RETRY_BASE_MS and a config file’s send.retryMaxMs apply to it, a flag over both', async () => {
    capture.failWith = { status: 503, body: '{}' };
    const file = join(mkdtempSync(join(tmpdir(), 'svc-backoff-')), 'config.json');
    writeFileSync(file, JSON.stringify({ send: { retryMaxMs: 40 } }));
    const env = { SVC_SEND_RETRY_BASE_MS: '15' };
    const fromEnv = await create(['--max-attempts', '4', '--config', file], env);
    expect(fromEnv.code, fromEnv.stderr).toBe(3);
    expect(fromEnv.waits).toEqual([15, 30, 40, undefined]);
    const flagged = await create(['--max-attempts', '3', '--config', file, '--retry-base-ms', '5'], env);
    expect(flagged.waits).toEqual([5, 10, undefined]);
  });

  it('a value the table refuses: one line naming the flag, exit 1, nothing stored or sent', async () => {
    const [negative, below] = await Promise.all([
      create(['--retry-base-ms', '-1']),
      create(['--retry-base-ms', '100', '--retry-max-ms', '50']),
    ]);
    for (const r of [negative, below]) {
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(readdirSync(r.dir)).toEqual([]);
    }
    expect(negative.stderr).toContain(
      'config key send.retryBaseMs (from flag --retry-base-ms): expected an integer from 0 to 3600000, got "-1"',
    );
    expect(below.stderr).toContain(
      'config key send.retryMaxMs (from flag --retry-max-ms): expected a value >= send.retryBaseMs (100), got 50',
    );
    expect(capture.all).toEqual([]);
  });
});
