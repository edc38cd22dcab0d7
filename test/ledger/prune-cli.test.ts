// Retention through the real CLI, both stores: `ledger prune --before DATE` drops the outcomes of an old night, so
// the next resume loads only the recent ones; a rerun of the old export sends it again (the documented trade-off);
// the destinations the ledger knew stay known; a send holding the ledger file makes prune refuse.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pruneInstant } from '../../src/cli/ledger-prune.ts';
import { FAST, kindName, ledgerKinds, summary, workdir, writeNdjson } from '../faults/helpers.ts';
import { runCliHere } from '../helpers/cli.ts';
import { usePostgres } from '../helpers/postgres.ts';
import { useSimulator } from '../helpers/simulator.ts';

const pgs = usePostgres();
const sim = useSimulator({ seed: 41 }, 'reset');
const other = useSimulator({ seed: 42 }, 'reset');
const OLD = '2026-01-02T03:04:05.000Z';

/** Make every outcome recorded so far look as written on OLD. */
async function age(ledger: string): Promise<void> {
  if (ledger.startsWith('postgres')) {
    await pgs.sql(new URL(ledger).pathname.slice(1), 'UPDATE svc_ingest.batches SET ts = $1', [OLD]);
    return;
  }
  const text = await readFile(ledger, 'utf8');
  await writeFile(ledger, text.replace(/"ts":"[^"]+"/g, `"ts":"${OLD}"`));
}

describe('--before', () => {
  it('takes a date, an instant or a number of days', () => {
    const now = Date.parse('2026-11-25T12:00:00Z');
    expect(pruneInstant('2026-08-01', now)).toBe('2026-08-01T00:00:00.000Z');
    expect(pruneInstant('90d', now)).toBe('2026-08-27T12:00:00.000Z');
    expect(() => pruneInstant('yesterday', now)).toThrow(/--before/);
  });
});

describe.each(ledgerKinds(pgs).map((k) => [kindName(k), k] as const))(
  'ledger prune, %s ledger',
  (_, kind) => {
    it('drops the old night: resume loads the recent ids only, the old export is sent again, destinations stay known', async () => {
      const w = await workdir('prune', kind);
      const oldFile = join(w.dir, 'old.ndjson');
      const newFile = join(w.dir, 'new.ndjson');
      await writeNdjson(oldFile, 150, 'old');
      await writeNdjson(newFile, 100, 'new');
      expect((await runCliHere(['send', ...FAST, oldFile], { env: w.env(sim) })).code).toBe(0);
      await age(w.ledger);
      expect((await runCliHere(['send', ...FAST, newFile], { env: w.env(sim) })).code).toBe(0);

      const archive = join(w.dir, 'archive.ndjson');
      const args = ['ledger', 'prune', '--before', '2026-06-01', '--ledger', w.ledger, '--json'];
      const pruned = await runCliHere(kind === 'file' ? [...args, '--archive', archive] : args);
      expect(pruned.code, pruned.stderr).toBe(0);
      const r = JSON.parse(pruned.stdout);
      if (kind === 'file') {
        expect(r).toMatchObject({
          prunedLines: 3,
          prunedIds: 150,
          keptLines: 2,
          before: '2026-06-01T00:00:00.000Z',
        });
        expect(r.bytesAfter).toBeLessThan(r.bytesBefore);
        const archived = (await readFile(archive, 'utf8')).trim().split('\n');
        expect(archived).toHaveLength(3);
      } else expect(r).toMatchObject({ prunedBatches: 3, prunedTransactions: 150 });

      const again = await runCliHere(['send', ...FAST, newFile], {
        env: w.env(sim, { SVC_LOG_LEVEL: 'info' }),
      });
      expect(summary(again)).toMatchObject({ sent: 0, skipped: 100 });
      if (kind === 'file') expect(again.stderr).toMatch(/"event":"ledger.loaded","acked":100,/);
      const rerunOld = await runCliHere(['send', ...FAST, oldFile], { env: w.env(sim) });
      expect(summary(rerunOld)).toMatchObject({ sent: 150, skipped: 0 });

      // The ledger's destination is still its own: another is refused as before.
      const elsewhere = await runCliHere(['send', ...FAST, newFile], { env: w.env(other) });
      expect(elsewhere.code).toBe(1);
      expect(elsewhere.stderr).toContain('LEDGER_DESTINATION');
    });

    it('everything pruned: the destination is still known', async () => {
      const w = await workdir('prune-all', kind);
      const file = join(w.dir, 'in.ndjson');
      await writeNdjson(file, 50, 'all');
      expect((await runCliHere(['send', ...FAST, file], { env: w.env(sim) })).code).toBe(0);
      const pruned = await runCliHere(['ledger', 'prune', '--before', '0d', '--ledger', w.ledger]);
      expect(pruned.code, pruned.stderr).toBe(0);
      const elsewhere = await runCliHere(['send', ...FAST, file], { env: w.env(other) });
      expect(elsewhere.code).toBe(1);
      expect(elsewhere.stderr).toContain('LEDGER_DESTINATION');
      const back = await runCliHere(['send', ...FAST, file], { env: w.env(sim) });
      expect(summary(back)).toMatchObject({ sent: 50 });
    });

    it('nothing older than --before: the ledger is left as it was (no line added)', async () => {
      const w = await workdir('prune-none', kind);
      const file = join(w.dir, 'in.ndjson');
      await writeNdjson(file, 20, 'none');
      expect((await runCliHere(['send', ...FAST, file], { env: w.env(sim) })).code).toBe(0);
      const before = w.ledger.startsWith('postgres') ? null : await readFile(w.ledger, 'utf8');
      for (let i = 0; i < 2; i++) {
        const r = await runCliHere(['ledger', 'prune', '--before', OLD, '--ledger', w.ledger, '--json']);
        expect(r.code, r.stderr).toBe(0);
        const out = JSON.parse(r.stdout) as { prunedLines?: number; prunedBatches?: number };
        expect(out.prunedLines ?? out.prunedBatches).toBe(0);
      }
      if (before !== null) expect(await readFile(w.ledger, 'utf8')).toBe(before);
    });
  },
);
