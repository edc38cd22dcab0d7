// Outage breaker: the service down → stop taking batches, probe with growing waits, exit 5 without hammering.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCliHere } from '../helpers/cli.ts';
import { usePostgres } from '../helpers/postgres.ts';
import { useSimulator } from '../helpers/simulator.ts';
import {
  deliveryCounts,
  idsWith,
  kindName,
  ledgerKinds,
  NO_FAULTS,
  report,
  STACK,
  settles,
  summary,
  workdir,
  writeNdjson,
} from './helpers.ts';

const RECORDS = 5_000;
const CONCURRENCY = 4;
const MAX_RETRIES = 2;
const BASE_MS = 5;
const CAP_MS = 160;
// The limit counts from the first failure, so it also covers the batches' own retries and the ledger writes before
// the breaker opens (400 ms, when it counted from the opening, left no room for probes on a loaded machine; 1 s
// none either, with test files running in parallel on a shared machine).
const OUTAGE_MAX_MS = 2_000;

/** Probes the breaker can send: waits start at the retry base, double, are capped, and stop past the limit. */
function probeBound(): number {
  let n = 0;
  let waited = 0;
  for (let wait = BASE_MS; waited + wait <= OUTAGE_MAX_MS; wait = Math.min(wait * 2, CAP_MS)) {
    waited += wait;
    n++;
  }
  return n;
}

const sim = useSimulator({ seed: 503 });
const pgs = usePostgres();

describe.each(ledgerKinds(pgs).map((kind) => [kindName(kind), kind] as const))(
  'outage breaker [%s ledger]',
  (kindLabel, kind) => {
    it('service down: stops taking batches, probes with growing waits, exits 5 quickly; a rerun after recovery sends all once', async () => {
      sim.reset();
      sim.setFaults({ ...NO_FAULTS, failRate: 1 });
      const w = await workdir('outage', kind);
      const file = join(w.dir, 'in.ndjson');
      const ids = await writeNdjson(file, RECORDS, 'ou');
      const args = [
        'send',
        '--json',
        '--concurrency',
        String(CONCURRENCY),
        '--max-retries',
        String(MAX_RETRIES),
        '--retry-base-ms',
        String(BASE_MS),
        '--retry-max-ms',
        String(CAP_MS),
        '--outage-max-ms',
        String(OUTAGE_MAX_MS),
        file,
      ];
      const t0 = performance.now();
      const r = await runCliHere(args, { env: w.env(sim) });
      const wallMs = Math.round(performance.now() - t0);
      expect(r.code, r.stderr).toBe(5);
      expect(r.stderr).not.toMatch(STACK);
      const s = summary(r);
      expect(s.outage).toBe(true);
      expect(s.sent).toBe(0);
      expect(settles(s), JSON.stringify(s)).toBe(true);
      // Stopped taking input: much of the file was never read.
      expect(s.read).toBeLessThan(RECORDS);

      // Growing waits between probes, as logged (warn level).
      const probes = r.stderr
        .split('\n')
        .filter((l) => l.includes('"event":"breaker.probe"'))
        .map((l) => (JSON.parse(l) as { waitMs: number }).waitMs);
      expect(probes.length).toBeGreaterThan(1);
      expect(probes.length).toBeLessThanOrEqual(probeBound());
      for (let i = 1; i < probes.length; i++) expect(probes[i]!).toBeGreaterThanOrEqual(probes[i - 1]!);
      expect(probes.at(-1)!).toBeGreaterThan(probes[0]!);
      expect(r.stderr).toMatch(/"event":"breaker\.gave-up"/);

      // Not hammering, counted on the server: batches taken before the breaker opened (threshold max(3,
      // concurrency) failed in a row, plus those already in flight), each maxRetries + 1 attempts, one
      // exploratory split (2 single-attempt halves) per batch in flight when the outage began, then one request per probe.
      const threshold = Math.max(3, CONCURRENCY);
      const bound = (threshold + CONCURRENCY - 1) * (MAX_RETRIES + 1) + 2 * CONCURRENCY + probeBound();
      const requests = sim.stats().requests.byPath['/v2/data/transactions'] ?? 0;
      expect(requests).toBeLessThanOrEqual(bound);
      expect(wallMs).toBeLessThan(10_000);

      // Nothing lost: every record read is failed in the ledger; the rest was never read.
      const ledger = await w.readLedger();
      const failed = idsWith(ledger.rows, 'failed');
      expect(idsWith(ledger.rows, 'acked').size).toBe(0);
      expect(failed.size).toBe(s.read);
      expect([...failed].sort()).toEqual(ids.slice(0, s.read));
      expect(sim.deliveries().size).toBe(0);

      sim.setFaults({ failRate: 0 });
      const rerun = await runCliHere(args, { env: w.env(sim) });
      expect(rerun.code, rerun.stderr).toBe(0);
      expect(summary(rerun)).toMatchObject({ read: RECORDS, sent: RECORDS, skipped: 0, failed: 0 });
      const d = deliveryCounts(sim, ids);
      expect(d).toEqual({ missing: 0, once: RECORDS, duplicated: 0, extra: 0 });
      report(`outage [${kindLabel} ledger]: failRate 1 (service down)`, {
        records: RECORDS,
        read: s.read,
        failedInLedger: failed.size,
        neverRead: RECORDS - s.read,
        serverRequests: requests,
        requestBound: bound,
        probeWaitsMs: probes,
        exit: r.code,
        wallMs,
        rerunSent: RECORDS,
        rerunDuplicates: d.extra,
        rerunExit: rerun.code,
      });
    });
  },
);
