// The file ledger's group commit through the real CLI: at concurrency 8 against a service with latency, the
// outcomes of several batches share one fdatasync (counted by the writer, reported in `ledger.file.closed`),
// and every batch is still on disk, acked, when the run ends.
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCliHere, summaryOf } from '../helpers/cli.ts';
import { burstDoor } from '../helpers/door.ts';
import { useSimulator } from '../helpers/simulator.ts';
import { csvOf, makeTx, range } from '../helpers/transactions.ts';

const sim = useSimulator({ seed: 33, latencyMs: 20 });

describe('file ledger group commit', () => {
  it('at concurrency 8, outcomes that come back together share an fdatasync; every batch is on disk', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-group-'));
    const file = join(dir, 'in.csv');
    await writeFile(file, csvOf(range(2000).map((i) => makeTx(i))));
    const ledger = join(dir, 'ledger.ndjson');
    // The batches reach the service eight at a time, so their answers come back together however the machine's load
    // spreads the sends (under coverage's counters they came back one by one, each with a sync of its own).
    const door = await burstDoor(sim.url, 8);
    const r = await runCliHere(['send', '--json', '--concurrency', '8', file], {
      env: {
        SVC_BASE_URL: door.url,
        SVC_LEDGER_PATH: ledger,
        SVC_REJECTS_PATH: join(dir, 'rejects.ndjson'),
        SVC_LOG_LEVEL: 'info',
      },
    });
    await door.close();
    expect(r.code, r.stderr).toBe(0);
    expect(summaryOf(r)).toMatchObject({ sent: 2000, batches: 40, failed: 0 });
    const lines = (await readFile(ledger, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const batches = lines.filter((l) => l.batchId !== undefined);
    expect(batches).toHaveLength(40);
    expect(batches.every((l) => l.status === 'acked')).toBe(true);
    const closed = (r.rawStderr ?? '')
      .split('\n')
      .filter((l) => l.includes('"event":"ledger.file.closed"'))
      .map((l) => JSON.parse(l));
    expect(closed).toHaveLength(1);
    const { synced, lines: written } = closed[0].groups;
    expect(written).toBe(lines.length);
    // One sync per batch without group commit; with it, outcomes that come back together share syncs (about
    // two outcomes a sync on a quiet machine; fewer shared when the machine is loaded and the answers spread).
    expect(closed[0].groups.delayed).toBeGreaterThan(0);
    expect(synced).toBeLessThan(written);
    expect(sim.stats().maxInFlight).toBeLessThanOrEqual(8);
  });
});
