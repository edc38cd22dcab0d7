// Ledger failures: an unwritable ledger stops the run before sending; a write error mid-run stops new sends at once.
import { stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { ledgerFaultEnv } from '../helpers/ledger-fault.ts';
import { useSimulator } from '../helpers/simulator.ts';
import {
  deliveryCounts,
  FAST,
  idsWith,
  readLedgerBack,
  report,
  STACK,
  summary,
  workdir,
  writeNdjson,
} from './helpers.ts';

const sim = useSimulator({ seed: 5 }, 'reset');

const sends = () => sim.stats().requests.byPath['/v2/data/transactions'] ?? 0;

describe('ledger failures', () => {
  it('an unwritable ledger path at start: exit 1, one clear line, nothing sent', async () => {
    const w = await workdir('ledger-unwritable');
    const file = join(w.dir, 'in.ndjson');
    await writeNdjson(file, 100, 'lu');
    // A path under a regular file can never be created (ENOTDIR), even as root.
    await writeFile(join(w.dir, 'not-a-dir'), 'x');
    const ledger = join(w.dir, 'not-a-dir', 'ledger.ndjson');
    const r = await runCli(['send', ...FAST, file], { env: w.env(sim, { SVC_LEDGER_PATH: ledger }) });
    expect(r.code).toBe(1);
    // --json (in FAST): stdout holds only the error object, stderr the one human line.
    expect(JSON.parse(r.stdout)).toEqual({
      error: { code: 'LEDGER_WRITE', message: expect.stringMatching(/not-a-dir\/ledger\.ndjson.*ENOTDIR/) },
    });
    expect(r.stdout.trim().split('\n')).toHaveLength(1);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^svc-ingest: LEDGER_WRITE: .*not-a-dir\/ledger\.ndjson.*ENOTDIR/);
    expect(r.stderr).not.toMatch(STACK);
    expect(sends()).toBe(0);
    report('ledger: unwritable path at start', { exit: r.code, serverRequests: sends(), error: lines[0] });
  });

  it('a write error mid-run: new sends stop at once, exit 1, clear error; unrecorded <= concurrency x batch', async () => {
    const w = await workdir('ledger-eio');
    const file = join(w.dir, 'in.ndjson');
    const ids = await writeNdjson(file, 10_000, 'le');
    sim.setFaults({ latencyMs: 5, jitterMs: 5 });
    const FAIL_AFTER = 20;
    const CONCURRENCY = 4;
    const args = ['send', ...FAST, '--concurrency', String(CONCURRENCY), file];
    // The fault enters below the tool, at the file-system level (test/helpers/ledger-fault.ts): writes to the
    // ledger fail with EIO once it holds FAIL_AFTER lines, the write crossing that line cut short after it.
    const r = await runCli(args, { env: w.env(sim, ledgerFaultEnv(w.ledger, FAIL_AFTER)) });
    expect(r.code).toBe(1);
    // --json (in FAST): no summary, only the error object.
    expect(r.stdout.trim().split('\n')).toHaveLength(1);
    expect(JSON.parse(r.stdout).error).toMatchObject({ code: 'LEDGER_WRITE' });
    expect(r.stderr).toMatch(/svc-ingest: LEDGER_WRITE: cannot write ledger .*ledger\.ndjson: EIO/);
    expect(r.stderr).not.toMatch(STACK);
    // The lock is released even so.
    await expect(stat(`${w.ledger}.lock`)).rejects.toThrow();

    const ledger = await readLedgerBack(w.ledger);
    expect(ledger.bad).toBe(0);
    expect(ledger.rows).toHaveLength(FAIL_AFTER);
    const recorded = idsWith(ledger.rows, 'acked');
    const delivered = [...sim.deliveries().keys()];
    const unrecorded = delivered.filter((id) => !recorded.has(id));
    // Stopped at once: only the batches already in flight when the write failed were sent after it.
    const requests = sends();
    expect(requests).toBeLessThanOrEqual(FAIL_AFTER + CONCURRENCY);
    expect(unrecorded.length).toBeLessThanOrEqual(CONCURRENCY * 50);

    const rerun = await runCli(args, { env: w.env(sim) });
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(summary(rerun)).toMatchObject({ read: 10_000, skipped: recorded.size });
    const d = deliveryCounts(sim, ids);
    expect(d.missing).toBe(0);
    expect(d.extra).toBe(unrecorded.length);
    report('ledger: write error (EIO) after 20 lines', {
      records: 10_000,
      ledgerLines: ledger.rows.length,
      serverRequests: requests,
      deliveredUnrecorded: unrecorded.length,
      bound: CONCURRENCY * 50,
      exit: r.code,
      rerunDuplicates: d.extra,
      rerunExit: rerun.code,
    });
  });
});
