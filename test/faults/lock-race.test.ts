// The ledger lock raced: rounds of six runs on one ledger (by the same path, a symlinked folder and a hard link),
// each round starting from the owner file of a holder killed -9; exactly one run of each round sends. Ten rounds of
// six: 150 pairs of runs racing, as many as 25 rounds of four (the pid file the kernel lock replaced lost 2 rounds
// of 25 so, docs/ledger.md), at 60 CLI runs instead of 100. Its own file (split from state-files.test.ts), run
// beside the others.
import { link, mkdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startCli, waitFor } from '../helpers/cli.ts';
import { useSimulator } from '../helpers/simulator.ts';
import { makeTx, ndjsonOf, range } from '../helpers/transactions.ts';
import { deliveryCounts, FAST, report, summary, workdir } from './helpers.ts';
import { oneLine, ownerWritten } from './ledger-lock.ts';

const sim = useSimulator({ seed: 19 }, 'reset');

describe('the ledger lock', () => {
  it('10 rounds of six runs racing (same path, a symlinked folder, a hard link; a holder killed -9 before): exactly one sends', async () => {
    const w = await workdir('lock-race');
    const ROUNDS = 10;
    const PER_ROUND = 60;
    // A real holder killed -9: it leaves its owner file, which every round below starts with.
    const first = join(w.dir, 'killed', 'ledger.ndjson');
    const killed = startCli(['send', '--format', 'ndjson', '--json', '-'], {
      env: w.env(sim, { SVC_LEDGER_PATH: first }),
      keepStdinOpen: true,
    });
    await waitFor(() => ownerWritten(first), killed.child);
    killed.child.kill('SIGKILL');
    await killed.done;
    const staleOwner = JSON.parse(await readFile(`${first}.lock`, 'utf8')) as Record<string, unknown>;
    expect(staleOwner.pid).toBe(killed.child.pid);

    let namedPid = 0;
    let losersSamePath = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const dir = join(w.dir, `r${round}`);
      await mkdir(dir);
      const ledger = join(dir, 'ledger.ndjson');
      await writeFile(ledger, '', { mode: 0o600 });
      const st = await stat(ledger);
      await writeFile(`${ledger}.lock`, JSON.stringify({ ...staleOwner, dev: st.dev, ino: st.ino }));
      await symlink(dir, `${dir}-link`);
      await link(ledger, join(dir, 'hard.ndjson'));
      const linked = join(`${dir}-link`, 'ledger.ndjson');
      const paths = [ledger, ledger, linked, join(dir, 'hard.ndjson'), ledger, linked];
      const runs = paths.map((p, k) =>
        startCli(['send', ...FAST, '--format', 'ndjson', '-'], {
          env: w.env(sim, { SVC_LEDGER_PATH: p, SVC_REJECTS_PATH: join(dir, `rejects-${k}.ndjson`) }),
          keepStdinOpen: true,
        }),
      );
      const exited = new Set<number>();
      for (const [k, r] of runs.entries()) void r.done.then(() => exited.add(k));
      // The losers stop at the lock; the winner holds it, waiting for its input.
      await waitFor(() => exited.size >= paths.length - 1, undefined, 30_000).catch(() => {
        throw new Error(`round ${round}: only ${exited.size} runs gave way: two runs hold the ledger`);
      });
      await new Promise((r) => setTimeout(r, 50));
      expect(exited.size, `round ${round}`).toBe(paths.length - 1);
      const k = paths.findIndex((_, i) => !exited.has(i));
      const winner = runs[k]!;
      winner.child.stdin!.end(ndjsonOf(range(PER_ROUND).map((i) => makeTx(i, `race${round}`))));
      const won = await winner.done;
      expect(won.code, won.stderr).toBe(0);
      expect(summary(won)).toMatchObject({ read: PER_ROUND, sent: PER_ROUND });
      for (const [i, run] of runs.entries()) {
        if (i === k) continue;
        const r = await run.done;
        expect(r.code, r.stderr).toBe(1);
        // --json (in FAST): stdout holds only the error object.
        expect(JSON.parse(r.stdout).error).toMatchObject({ code: 'LEDGER_LOCKED' });
        const msg = oneLine(r, 'LEDGER_LOCKED');
        expect(msg).toMatch(/is in use by (process \d+|another process)/);
        if (paths[i] === paths[k]) {
          losersSamePath++;
          if (msg.includes(`process ${winner.child.pid}`)) namedPid++;
        }
      }
      const ids = range(PER_ROUND).map((i) => makeTx(i, `race${round}`).transactionId);
      expect(deliveryCounts(sim, ids)).toMatchObject({ missing: 0, duplicated: 0 });
    }
    expect(sim.stats().transactions.duplicates).toBe(0);
    report('lock: 10 rounds x 6 racing runs', {
      rounds: ROUNDS,
      runsThatSentPerRound: 1,
      duplicates: sim.stats().transactions.duplicates,
      losersOnTheWinnersPath: losersSamePath,
      ofWhichNamedTheWinnersPid: namedPid,
    });
  }, 240_000);
});
