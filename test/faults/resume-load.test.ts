// A signal while the resume index is loading from a large ledger: the run stops promptly (143 / 130), sends
// nothing, and releases the ledger.
import { existsSync } from 'node:fs';
import { open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startCli, waitFor } from '../helpers/cli.ts';
import { useSimulator } from '../helpers/simulator.ts';
import { FAST, report, summary, workdir, writeNdjson } from './helpers.ts';

const sim = useSimulator({ seed: 31 }, 'reset');
const sends = () => sim.stats().requests.byPath['/v2/data/transactions'] ?? 0;
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

/** A ledger of `lines` acked lines of 50 ids each (~1.5 KB a line), written in large blocks. */
async function bigLedger(path: string, lines: number): Promise<number> {
  const fh = await open(path, 'w', 0o600);
  const PER_BLOCK = 1000;
  let bytes = 0;
  for (let b = 0; b < lines / PER_BLOCK; b++) {
    let text = '';
    for (let i = 0; i < PER_BLOCK; i++) {
      const n = b * PER_BLOCK + i;
      const ids = Array.from({ length: 50 }, (_, k) => `old-${String(n).padStart(8, '0')}-${k}`);
      text += `${JSON.stringify({ ts: '2026-11-20T00:00:00.000Z', batchId: `b-${n}`, status: 'acked', requestId: '00000000-0000-4000-8000-000000000000', transactionIds: ids, attempts: 1, httpStatus: 200 })}\n`;
    }
    await fh.write(text);
    bytes += Buffer.byteLength(text);
  }
  await fh.close();
  return bytes;
}

describe('a signal while the resume index loads', () => {
  it('SIGTERM and SIGINT during the load of a 100 MB ledger: prompt exit 143 / 130, nothing sent, ledger released', async () => {
    const w = await workdir('resume-load');
    dirs.push(w.dir);
    const bytes = await bigLedger(w.ledger, 100_000);
    const file = join(w.dir, 'in.ndjson');
    await writeNdjson(file, 200, 'rl');
    const results: Record<string, number> = {};
    for (const [signal, code] of [
      ['SIGTERM', 143],
      ['SIGINT', 130],
    ] as const) {
      const run = startCli(['send', ...FAST, file], { env: w.env(sim, { SVC_LOG_LEVEL: 'info' }) });
      let stderr = '';
      run.child.stderr!.on('data', (d: Buffer) => {
        stderr += d;
      });
      await waitFor(() => stderr.includes('"event":"ledger.loading"'), run.child);
      const t0 = Date.now();
      run.child.kill(signal);
      const r = await run.done;
      const ms = Date.now() - t0;
      results[`${signal}Ms`] = ms;
      expect(r.code, r.stderr).toBe(code);
      expect(summary(r)).toMatchObject({ read: 0, sent: 0, interrupted: signal });
      expect(r.stderr).not.toContain('"event":"ledger.loaded"');
      expect(ms).toBeLessThan(3000);
      expect(sends()).toBe(0);
      expect(existsSync(`${w.ledger}.lock`)).toBe(false);
    }
    // Released: the next run takes the ledger, loads it whole and sends.
    const t0 = Date.now();
    const whole = startCli(['send', ...FAST, file], { env: w.env(sim) });
    const r = await whole.done;
    expect(r.code, r.stderr).toBe(0);
    expect(summary(r)).toMatchObject({ read: 200, sent: 200 });
    report('resume index: signal while loading', {
      ledgerBytes: bytes,
      ackedIds: 5_000_000,
      ...results,
      fullRunMs: Date.now() - t0,
    });
  }, 120_000);
});
