// Reject amplification and noisy reruns: a tiny .gz or a newline bomb cannot grow the rejects file past its
// caps (the run stops, exit 1, one line); a rerun does not append the rejects it already recorded.
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { ROOT, runCliHere } from '../helpers/cli.ts';
import { useSimulator } from '../helpers/simulator.ts';
import { CANONICAL_COLUMNS, makeTx } from '../helpers/transactions.ts';
import {
  FAST,
  idsWith,
  readLedgerBack,
  readRejects,
  report,
  STACK,
  settles,
  summary,
  workdir,
  writeNdjson,
} from './helpers.ts';

const sim = useSimulator({ seed: 29 }, 'reset');
const HEADER = `${CANONICAL_COLUMNS.join(',')}\n`;
const TOO_MANY = /^svc-ingest: INPUT_TOO_MANY_REJECTS: the input is not what the profile expects: /m;

/** The last stderr line is the one error line; the summary (on stdout) carries it too. */
function stoppedLine(stderr: string): string {
  const last = stderr.trim().split('\n').pop() ?? '';
  expect(last).toMatch(TOO_MANY);
  expect(stderr).not.toMatch(STACK);
  return last;
}

describe('reject amplification', () => {
  it('a small .gz of 5M bad rows: stopped after the first 1,000 records (>= 90% rejected), rejects file small', async () => {
    const w = await workdir('amp-gz');
    const gz = gzipSync(HEADER + 'x\n'.repeat(5_000_000), { level: 9 });
    const file = join(w.dir, 'amp.csv.gz');
    await writeFile(file, gz);
    const t0 = Date.now();
    const r = await runCliHere(['send', ...FAST, file], { env: w.env(sim) });
    const ms = Date.now() - t0;
    expect(r.code).toBe(1);
    expect(stoppedLine(r.stderr)).toMatch(/1000 of the first 1000 records were rejected \(limit 90%/);
    const s = summary(r);
    expect(s).toMatchObject({ read: 1000, rejected: 1000, sent: 0 });
    expect(s.error).toMatchObject({ code: 'INPUT_TOO_MANY_REJECTS' });
    expect(settles(s)).toBe(true);
    const size = (await stat(w.rejects)).size;
    expect((await readRejects(w.rejects)).length).toBe(1000);
    expect(size).toBeLessThan(1 << 20);
    expect(ms).toBeLessThan(15_000);
    report('rejects: .gz amplifier', {
      gzBytes: gz.length,
      rowsInside: 5_000_000,
      rejectsBytes: size,
      ms,
      exit: r.code,
    });
  });

  it('a newline bomb with the ratio check off: the rejects file stays under --max-reject-bytes, and --max-rejects is exact', async () => {
    const w = await workdir('amp-nl');
    const file = join(w.dir, 'bomb.csv');
    await writeFile(file, HEADER + ' \n'.repeat(5_000_000)); // 10 MB
    const CAP = 1_000_000;
    const t0 = Date.now();
    const r = await runCliHere(
      ['send', ...FAST, '--max-reject-percent', '0', '--max-reject-bytes', String(CAP), file],
      {
        env: w.env(sim),
      },
    );
    const ms = Date.now() - t0;
    expect(r.code).toBe(1);
    expect(stoppedLine(r.stderr)).toMatch(/more than 1000000 bytes .*--max-reject-bytes/);
    const size = (await stat(w.rejects)).size;
    expect(size).toBeLessThanOrEqual(CAP);
    expect(size).toBeGreaterThan(CAP - 1000);
    const s = summary(r);
    expect(settles(s)).toBe(true);
    expect(s.read).toBeLessThan(10_000);
    expect(ms).toBeLessThan(15_000);

    const lines = await runCliHere(
      [
        'send',
        ...FAST,
        '--max-reject-percent',
        '0',
        '--max-rejects',
        '500',
        '--rejects',
        join(w.dir, 'r2.ndjson'),
        file,
      ],
      {
        env: w.env(sim),
      },
    );
    expect(lines.code).toBe(1);
    expect(stoppedLine(lines.stderr)).toMatch(/more than 500 rejects .*--max-rejects/);
    expect((await readRejects(join(w.dir, 'r2.ndjson'))).length).toBe(500);
    // Every reject counted is a line in the file; the 501st stopped the run unread (a rerun reads it).
    expect(summary(lines)).toMatchObject({ read: 500, rejected: 500, rejectedNew: 500 });
    report('rejects: newline bomb (10 MB of " \\n")', {
      capBytes: CAP,
      rejectsBytes: size,
      ms,
      readBeforeStop: s.read,
    });
  });

  it('good records then a flood of bad ones: in-flight batches settle, the unsent rest is failed in the ledger, a rerun sends it', async () => {
    const w = await workdir('amp-mixed');
    const file = join(w.dir, 'mixed.ndjson');
    const ids = await writeNdjson(file, 2010, 'mx');
    await writeFile(file, `${await readFile(file, 'utf8')}${'{"transactionId":1}\n'.repeat(20_000)}`);
    const r = await runCliHere(['send', ...FAST, '--max-rejects', '300', file], { env: w.env(sim) });
    expect(r.code).toBe(1);
    stoppedLine(r.stderr);
    const s = summary(r);
    expect(s).toMatchObject({ read: 2310, sent: 2000, failed: 10, rejected: 300, rejectedNew: 300 });
    expect(settles(s)).toBe(true);
    const { rows } = await readLedgerBack(w.ledger);
    const failed = rows.filter((x) => x.status === 'failed');
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ error: 'not sent: stopped, too many rejects', attempts: 0 });
    expect(failed[0]!.transactionIds).toEqual(ids.slice(2000));
    expect(idsWith(rows, 'acked').size).toBe(2000);

    // Limits off: the rest is sent, the 300 rejects already recorded are not appended again.
    const again = await runCliHere(['send', ...FAST, '--max-rejects', '0', '--max-reject-bytes', '0', file], {
      env: w.env(sim),
    });
    expect(again.code, again.stderr).toBe(2);
    expect(summary(again)).toMatchObject({
      read: 22_010,
      skipped: 2000,
      sent: 10,
      rejected: 20_000,
      rejectedKnown: 300,
      rejectedNew: 19_700,
    });
    expect((await readRejects(w.rejects)).length).toBe(20_000);
  });
});

describe('reruns are not noisy', () => {
  it('the same file with 20 bad records, three times: the rejects file after runs 2 and 3 is the one after run 1', async () => {
    const w = await workdir('rerun-rejects');
    const file = join(w.dir, 'nightly.ndjson');
    const good = Array.from({ length: 30 }, (_, i) => JSON.stringify(makeTx(i, 'rr')));
    const bad = Array.from({ length: 18 }, (_, i) =>
      JSON.stringify({ ...makeTx(100 + i, 'rr'), paymentNetworkMCC: '58' }),
    );
    // An unparsable line and a repeated transactionId: 20 rejects in all.
    await writeFile(file, [...good, ...bad, '{"transactionId": oops', good[0]].join('\n') + '\n');
    const runs = [];
    const texts: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await runCliHere(['send', ...FAST, file], { env: w.env(sim) });
      expect(r.code, r.stderr).toBe(2);
      runs.push(summary(r));
      texts.push(await readFile(w.rejects, 'utf8'));
    }
    expect(texts[0]!.trim().split('\n')).toHaveLength(20);
    expect(texts[1]).toBe(texts[0]);
    expect(texts[2]).toBe(texts[0]);
    expect(runs[0]).toMatchObject({ rejected: 20, rejectedNew: 20, rejectedKnown: 0, sent: 30 });
    expect(runs[1]).toMatchObject({ rejected: 20, rejectedNew: 0, rejectedKnown: 20, skipped: 30, sent: 0 });
    expect(runs[2]).toMatchObject({ rejected: 20, rejectedNew: 0, rejectedKnown: 20 });
    // The human summary tells them apart.
    const human = await runCliHere(['send', '--retry-base-ms', '1', file], { env: w.env(sim) });
    expect(human.code).toBe(2);
    expect(human.stderr).toContain('(0 new, 20 recorded by an earlier run)');

    // A changed record at the same line is a new reject.
    await writeFile(file, (await readFile(file, 'utf8')).replace('"58"', '"59"'));
    const changed = await runCliHere(['send', ...FAST, file], { env: w.env(sim) });
    expect(summary(changed)).toMatchObject({ rejectedNew: 1, rejectedKnown: 19 });
    expect((await readFile(w.rejects, 'utf8')).trim().split('\n')).toHaveLength(21);
  });

  it('the samples: a second run appends nothing to the rejects file', async () => {
    const w = await workdir('rerun-samples');
    const file = join(ROOT, 'samples', 'northwind.csv');
    const args = ['send', ...FAST, '--mapping', 'northwind-csv', file];
    const first = await runCliHere(args, { env: w.env(sim) });
    expect(first.code, first.stderr).toBe(2);
    const before = await readFile(w.rejects, 'utf8');
    const second = await runCliHere(args, { env: w.env(sim) });
    expect(second.code).toBe(2);
    expect(summary(second)).toMatchObject({ rejected: 3, rejectedKnown: 3, rejectedNew: 0 });
    expect(await readFile(w.rejects, 'utf8')).toBe(before);
  });
});
