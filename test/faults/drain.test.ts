// Drain: SIGTERM / SIGINT mid-run stop reading, finish what is in flight, record it; the rerun adds no duplicate — on
// the file ledger and on the PostgreSQL ledger.
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCliHere, startCli, waitFor } from '../helpers/cli.ts';
import { usePostgres } from '../helpers/postgres.ts';
import { useSimulator } from '../helpers/simulator.ts';
import {
  deliveryCounts,
  FAST,
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

const RECORDS = 6_000;
const sim = useSimulator({ seed: 143 });
const pgs = usePostgres();
let file: string;
let ids: string[];

beforeAll(async () => {
  const w = await workdir('drain-input');
  file = join(w.dir, 'in.ndjson');
  ids = await writeNdjson(file, RECORDS, 'dr');
});

describe.each(ledgerKinds(pgs).map((kind) => [kindName(kind), kind] as const))(
  'drain on a signal [%s ledger]',
  (kindLabel, kind) => {
    for (const [signal, exit] of [
      ['SIGTERM', 143],
      ['SIGINT', 130],
    ] as const) {
      it(`${signal} mid-run: exit ${exit}, every accepted batch in the ledger, the rerun sends no duplicate`, async () => {
        sim.reset();
        // Latency plus some 500s, so the signal finds requests in flight and retries waiting.
        sim.setFaults({ ...NO_FAULTS, latencyMs: 15, jitterMs: 10, failRate: 0.1 });
        const w = await workdir('drain', kind);
        const args = [
          'send',
          ...FAST,
          '--concurrency',
          '4',
          '--retry-base-ms',
          '20',
          '--retry-max-ms',
          '80',
          file,
        ];
        const run = startCli(args, { env: w.env(sim) });
        await waitFor(() => sim.stats().transactions.accepted >= 1_000, run.child, 60_000);
        run.child.kill(signal);
        const r = await run.done;
        expect(r.code, r.stderr).toBe(exit);
        expect(r.stderr).not.toMatch(STACK);
        const s = summary(r);
        expect(s.interrupted).toBe(signal);
        expect(settles(s)).toBe(true);
        expect(s.read).toBeLessThan(RECORDS);

        // Drained: what the service accepted is exactly what the ledger shows acked, nothing more.
        const ledger = await w.readLedger();
        expect(ledger.bad).toBe(0);
        const acked = idsWith(ledger.rows, 'acked');
        const delivered = new Set(sim.deliveries().keys());
        expect(acked.size).toBe(delivered.size);
        for (const id of delivered) expect(acked.has(id)).toBe(true);
        expect(s.sent).toBe(acked.size);

        sim.setFaults({ failRate: 0, latencyMs: 0, jitterMs: 0 });
        const rerun = await runCliHere(args, { env: w.env(sim) });
        expect(rerun.code, rerun.stderr).toBe(0);
        expect(summary(rerun)).toMatchObject({
          read: RECORDS,
          skipped: acked.size,
          sent: RECORDS - acked.size,
        });
        const d = deliveryCounts(sim, ids);
        expect(d).toEqual({ missing: 0, once: RECORDS, duplicated: 0, extra: 0 });
        report(`drain [${kindLabel} ledger]: ${signal} mid-run`, {
          records: RECORDS,
          readBeforeStop: s.read,
          sentBeforeStop: s.sent,
          failedInterrupted: s.failed,
          exit: r.code,
          duplicatesAfterRerun: d.extra,
          rerunExit: rerun.code,
        });
      });
    }
  },
);
