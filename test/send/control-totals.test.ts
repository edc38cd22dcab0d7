// Control totals: what the producer declares (the command line, a control file, a trailer row the profile
// declares) against what was read. A file that disagrees is refused before the first request; a stream is sent
// and the night fails at its end (exit 1, the summary's error naming both figures).
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { runCliHere, sendEnv, summaryOf } from '../helpers/cli.ts';
import { useSimulator } from '../helpers/simulator.ts';
import { CANONICAL_COLUMNS, csvOf, makeTx, range } from '../helpers/transactions.ts';

const sim = useSimulator({ seed: 52 }, 'reset');
const N = 120;
const txs = range(N).map((i) => makeTx(i, 'ctl'));
const CSV = csvOf(txs);
const TOTAL = txs.reduce((a, t) => a + Number(t.postedAmount), 0);
let dir: string;
const env = () => sendEnv(sim.url, dir);

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-control-'));
  await writeFile(join(dir, 'data.csv'), CSV);
});

/** A profile reading the canonical columns, whose export ends with a TRAILER row (count and total columns). */
async function trailerProfile(): Promise<string> {
  const path = join(dir, 'trailer.json');
  const profile = {
    name: 'canonical-trailer',
    fields: Object.fromEntries(CANONICAL_COLUMNS.map((c) => [c, c])),
    controlTotals: {
      trailer: {
        when: { column: 'transactionId', equals: 'TRAILER' },
        count: 'transactionType',
        total: 'postedAmount',
      },
    },
  };
  await writeFile(path, JSON.stringify(profile));
  return path;
}

function trailerRow(count: number, total: number): string {
  const values = CANONICAL_COLUMNS.map((c) =>
    c === 'transactionId'
      ? 'TRAILER'
      : c === 'transactionType'
        ? String(count)
        : c === 'postedAmount'
          ? String(total)
          : '',
  );
  return `${values.join(',')}\n`;
}

describe('control totals', () => {
  it('the command line: agreeing figures send; a file that disagrees is refused before the first request', async () => {
    const file = join(dir, 'data.csv');
    const ok = await runCliHere(
      ['send', '--json', '--expect-count', String(N), '--expect-total', `${TOTAL}.00`, file],
      { env: env() },
    );
    expect(ok.code, ok.stderr).toBe(0);
    expect(summaryOf(ok)).toMatchObject({ read: N, sent: N });

    sim.reset();
    const bad = await runCliHere(
      [
        'send',
        '--json',
        '--no-resume',
        '--expect-count',
        String(N + 1),
        '--expect-total',
        String(TOTAL),
        file,
      ],
      { env: env() },
    );
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(
      `svc-ingest: INPUT_CONTROL_TOTALS: control totals disagree: the run: ${N} records read, --expect-count declares ${N + 1}`,
    );
    expect(sim.stats().transactions.distinct).toBe(0);
  });

  it('a control file beside the export (key=value, and JSON): a stream is sent, then the night fails with both figures', async () => {
    await writeFile(join(dir, 'data.ctl'), `# nightly control\ncount=${N}\ntotal=${TOTAL + 5}\n`);
    const r = await runCliHere(['send', '--json', '--control', join(dir, 'data.ctl'), '-'], {
      env: env(),
      input: CSV,
    });
    expect(r.code).toBe(1);
    const s = summaryOf(r);
    expect(s).toMatchObject({ read: N, sent: N, exitStatus: 1 });
    expect((s.error as unknown as { code: string; message: string }).message).toBe(
      `control totals disagree: the run: amount total read ${TOTAL}, control file ${join(dir, 'data.ctl')} declares ${TOTAL + 5}`,
    );

    await writeFile(join(dir, 'data.json'), JSON.stringify({ count: N, total: String(TOTAL) }));
    const ok = await runCliHere(['send', '--json', '--control', join(dir, 'data.json'), '-'], {
      env: env(),
      input: CSV,
    });
    expect(ok.code, ok.stderr).toBe(0);
    expect(summaryOf(ok)).toMatchObject({ read: N, skipped: N });
  });

  it('a trailer row the profile declares: not sent itself; a file cut before it, or disagreeing, fails', async () => {
    const mapping = await trailerProfile();
    await writeFile(join(dir, 'whole.csv'), CSV + trailerRow(N, TOTAL));
    const ok = await runCliHere(['send', '--json', '--mapping', mapping, join(dir, 'whole.csv')], {
      env: env(),
    });
    expect(ok.code, ok.stderr).toBe(0);
    expect(summaryOf(ok)).toMatchObject({ read: N, sent: N, rejected: 0 });
    expect(sim.deliveries().has('TRAILER')).toBe(false);

    sim.reset();
    const lines = CSV.split('\n');
    await writeFile(join(dir, 'short.csv'), `${lines.slice(0, -2).join('\n')}\n${trailerRow(N, TOTAL)}`);
    const bad = await runCliHere(
      ['send', '--json', '--no-resume', '--mapping', mapping, join(dir, 'short.csv')],
      {
        env: env(),
      },
    );
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(
      `short.csv: ${N - 1} records read, the trailer (line ${N + 1}) declares ${N}`,
    );
    expect(sim.stats().transactions.distinct).toBe(0);

    // A stream cut before its trailer: what was read is sent, the night fails naming the missing trailer.
    const cut = await runCliHere(['send', '--json', '--no-resume', '--mapping', mapping, '-'], {
      env: env(),
      input: lines.slice(0, 61).join('\n') + '\n',
    });
    expect(cut.code).toBe(1);
    expect(summaryOf(cut)).toMatchObject({ read: 60, sent: 60 });
    expect(cut.stderr).toContain(
      'stdin: no trailer row (the profile declares one): the export may be cut short',
    );
  });
});

describe('control totals and a stream cut short', () => {
  it('a trailer profile on a stream ending mid-record: every record read is in one bucket', async () => {
    const mapping = await trailerProfile();
    const cut = CSV.slice(0, CSV.length - 10); // inside the last record, before any trailer
    const r = await runCliHere(['send', '--json', '--mapping', mapping, '-'], { env: env(), input: cut });
    expect(r.code).toBe(1);
    const s = summaryOf(r) as Record<string, number>;
    expect(s).toMatchObject({ read: N, rejected: 1 });
    expect(s.read).toBe(Number(s.sent) + Number(s.failed) + Number(s.rejected) + Number(s.skipped));
    expect((summaryOf(r).error as unknown as { code: string }).code).toBe('INPUT_TRUNCATED');
  });
});
