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

/** A ledger line's ids: old-<its number, 8 digits>-0 … -49. */
const IDS_PER_LINE = 50;
const ID_DIGITS = 8;

/** Ledger line number `n` as the CLI writes it: acked, 50 ids (~1 KB). */
function ledgerLine(n: string, ids: string): string {
  const transactionIds = Array.from({ length: IDS_PER_LINE }, (_, k) => `old-${ids}-${k}`);
  return `${JSON.stringify({ ts: '2026-11-20T00:00:00.000Z', batchId: `b-${n}`, status: 'acked', requestId: '00000000-0000-4000-8000-000000000000', transactionIds, attempts: 1, httpStatus: 200 })}\n`;
}

/** A line's bytes with placeholders for its number (batchId, `digits` long) and its ids' 8 digits, and where they are. */
interface LineTemplate {
  bytes: Buffer;
  numberAt: number;
  idDigitsAt: number[];
}

function lineTemplate(digits: number): LineTemplate {
  const text = ledgerLine('@'.repeat(digits), '#'.repeat(ID_DIGITS));
  const idDigitsAt: number[] = [];
  for (let at = text.indexOf('#'); at >= 0; at = text.indexOf('#', at + ID_DIGITS)) idDigitsAt.push(at);
  return { bytes: Buffer.from(text, 'latin1'), numberAt: text.indexOf('@'), idDigitsAt };
}

/**
 * A ledger of `lines` acked lines of 50 ids each (~1 KB a line), written in large blocks. Each line is a template
 * with its number's digits put in place, the same bytes as ledgerLine(n) gives: ~0.3 s of CPU for the 100 MB
 * below, against ~1.7 s building and serialising each line's 50 ids.
 */
async function bigLedger(path: string, lines: number): Promise<number> {
  const fh = await open(path, 'w', 0o600);
  const PER_BLOCK = 1000;
  // One template for each length of a line's number (1 to 6 digits here).
  const templates = Array.from({ length: String(lines).length }, (_, k) => lineTemplate(k + 1));
  const block = Buffer.alloc(PER_BLOCK * templates[templates.length - 1]!.bytes.length);
  let bytes = 0;
  for (let from = 0; from < lines; from += PER_BLOCK) {
    let end = 0;
    for (let n = from; n < Math.min(from + PER_BLOCK, lines); n++) {
      const number = String(n);
      const t = templates[number.length - 1]!;
      t.bytes.copy(block, end);
      block.write(number, end + t.numberAt, 'latin1');
      const digits = Buffer.from(number.padStart(ID_DIGITS, '0'), 'latin1');
      for (const at of t.idDigitsAt) digits.copy(block, end + at);
      end += t.bytes.length;
    }
    await fh.write(block, 0, end);
    bytes += end;
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
