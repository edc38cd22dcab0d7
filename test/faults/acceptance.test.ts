// Found by the acceptance pass, each through the real CLI: a run's files that are one and the same (a metrics file
// renamed over the ledger, a ledger or rejects file appended to the export), a card number in an input's name, a
// signal during the connection check, the breaker's "closed" notice, one-line errors (control characters in a
// name, commander's usage errors), the base URL's query, and `mapping check` on NDJSON with paths it cannot find.
import { link, mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type CliResult, runCliHere, startCli, waitFor } from '../helpers/cli.ts';
import { useSimulator } from '../helpers/simulator.ts';
import { makeTx, ndjsonOf, range } from '../helpers/transactions.ts';
import { FAST, NO_FAULTS, STACK, summary, workdir } from './helpers.ts';

const sim = useSimulator({ seed: 41 }, 'reset');
const sends = () => sim.stats().requests.byPath['/v2/data/transactions'] ?? 0;
const PAN = '4111111111111111';

/** One line on stderr, `svc-ingest: CODE: …`, no stack trace. */
function oneLine(r: CliResult, code: string): string {
  const lines = r.stderr.trim().split('\n');
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(new RegExp(`^svc-ingest: ${code}: `));
  expect(r.stderr).not.toMatch(STACK);
  return lines[0] as string;
}

describe("a run's files are separate files", () => {
  it('--metrics-file naming the ledger is refused before anything is written: the ledger survives, a rerun sends nothing', async () => {
    const w = await workdir('acc-metrics-ledger');
    const input = join(w.dir, 'in.ndjson');
    await writeFile(input, ndjsonOf(range(30).map((i) => makeTx(i, 'ml'))));
    const first = await runCliHere(['send', ...FAST, input], { env: w.env(sim) });
    expect(first.code, first.stderr).toBe(0);
    const ledgerBefore = await readFile(w.ledger, 'utf8');
    const before = sends();

    // By the same path, and by another name (a hard link): the metrics file would be renamed over the ledger.
    await link(w.ledger, join(w.dir, 'also-ledger.prom'));
    for (const metrics of [w.ledger, join(w.dir, 'also-ledger.prom')]) {
      const r = await runCliHere(['send', ...FAST, '--metrics-file', metrics, input], { env: w.env(sim) });
      expect(r.code, r.stderr).toBe(1);
      const line = oneLine(r, 'LEDGER_PATH_INVALID');
      expect(line).toContain('the metrics file and the ledger are the same file');
      expect(JSON.parse(r.stdout)).toMatchObject({ error: { code: 'LEDGER_PATH_INVALID' } });
    }
    expect(await readFile(w.ledger, 'utf8')).toBe(ledgerBefore);
    expect(sends()).toBe(before);
    const rerun = await runCliHere(['send', ...FAST, input], { env: w.env(sim) });
    expect(summary(rerun)).toMatchObject({ read: 30, skipped: 30, sent: 0 });
    expect(sends()).toBe(before);
  });

  it('--ledger or --rejects naming the export, or each other, is refused; the export is left as it was', async () => {
    const w = await workdir('acc-same-files');
    const input = join(w.dir, 'export.ndjson');
    const text = `${ndjsonOf(range(5).map((i) => makeTx(i, 'sf')))}not json\n`;
    await writeFile(input, text);
    await link(input, join(w.dir, 'export-link.ndjson'));
    const cases: Array<[NodeJS.ProcessEnv, string]> = [
      [{ SVC_LEDGER_PATH: input }, 'the ledger and the input are the same file'],
      [{ SVC_REJECTS_PATH: input }, 'the rejects file and the input are the same file'],
      [
        { SVC_REJECTS_PATH: join(w.dir, 'export-link.ndjson') },
        'the rejects file and the input are the same file',
      ],
      [{ SVC_REJECTS_PATH: w.ledger }, 'the rejects file and the ledger are the same file'],
    ];
    for (const [env, says] of cases) {
      const r = await runCliHere(['send', ...FAST, input], { env: w.env(sim, env) });
      expect(r.code, r.stderr).toBe(1);
      expect(oneLine(r, 'LEDGER_PATH_INVALID')).toContain(says);
    }
    // A dry run that names --rejects is held to the same rule.
    const dry = await runCliHere(['send', '--dry-run', '--rejects', input, input]);
    expect(dry.code, dry.stderr).toBe(1);
    expect(oneLine(dry, 'LEDGER_PATH_INVALID')).toContain('the rejects file and the input');
    expect(await readFile(input, 'utf8')).toBe(text);
    expect(sends()).toBe(0);
  });

  it('--metrics-file never replaces a file svc-ingest did not write; its own metrics file is rewritten', async () => {
    const w = await workdir('acc-metrics-foreign');
    const input = join(w.dir, 'in.ndjson');
    await writeFile(input, ndjsonOf(range(3).map((i) => makeTx(i, 'mf'))));
    const foreign = join(w.dir, 'notes.txt');
    await writeFile(foreign, 'keep me\n');
    const r = await runCliHere(['send', ...FAST, '--metrics-file', foreign, input], { env: w.env(sim) });
    // Never replaced, and never the night's cost: logged at error, the records sent all the same.
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('holds something other than the metrics svc-ingest writes');
    expect(r.stderr).toContain('metrics not written (the run goes on)');
    expect(await readFile(foreign, 'utf8')).toBe('keep me\n');
    expect(sends()).toBe(1);

    const prom = join(w.dir, 'svc_ingest.prom');
    for (let run = 0; run < 2; run++) {
      const ok = await runCliHere(['send', ...FAST, '--metrics-file', prom, input], { env: w.env(sim) });
      expect(ok.code, ok.stderr).toBe(0);
      expect(await readFile(prom, 'utf8')).toMatch(/^# HELP svc_ingest_/);
    }
  });
});

describe('a card number in an input file name', () => {
  it('is masked in the ledger, the rejects, the logs and a drafted profile; known rejects are still known', async () => {
    const w = await workdir('acc-pan-name');
    const dir = join(w.dir, 'per-card');
    await mkdir(dir);
    const input = join(dir, `${PAN}.ndjson`);
    await writeFile(input, `${ndjsonOf(range(4).map((i) => makeTx(i, 'pn')))}{"broken\n`);
    const env = w.env(sim, { SVC_LOG_LEVEL: 'debug' });
    const r = await runCliHere(['send', ...FAST, input], { env });
    expect(r.code, r.stderr).toBe(2);
    const rerun = await runCliHere(['send', ...FAST, input], { env });
    expect(summary(rerun)).toMatchObject({ skipped: 4, rejectedNew: 0, rejectedKnown: 1 });
    const ledger = await readFile(w.ledger, 'utf8');
    const rejects = await readFile(w.rejects, 'utf8');
    const draft = await runCliHere(['mapping', 'draft', input]);
    expect(draft.code, draft.stderr).toBe(0);
    expect(JSON.parse(draft.stdout).name).toBe('411111******1111');
    for (const text of [ledger, rejects, r.stdout, r.stderr, rerun.stdout, rerun.stderr, draft.stdout])
      expect(text).not.toContain(PAN);
    const line = JSON.parse(ledger.split('\n')[0] as string) as { source: string };
    expect(line.source).toBe(join(dir, '411111******1111.ndjson'));
    expect((JSON.parse(rejects.split('\n')[0] as string) as { source: string }).source).toBe(line.source);
  });
});

describe('a signal while the service is being checked', () => {
  it('SIGTERM during a connection check that gets no answer: exit 143 at once, nothing read, not exit 5 after --timeout', async () => {
    const held: Socket[] = [];
    const server = createServer((s) => {
      held.push(s);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const { port } = server.address() as { port: number };
    try {
      const w = await workdir('acc-preflight-signal');
      const input = join(w.dir, 'in.ndjson');
      await writeFile(input, ndjsonOf(range(10).map((i) => makeTx(i, 'ps'))));
      const run = startCli(['send', '--json', '--timeout', '30000', input], {
        env: { ...w.env(sim), SVC_BASE_URL: `http://127.0.0.1:${port}` },
      });
      await waitFor(() => held.length > 0, run.child);
      const t0 = performance.now();
      run.child.kill('SIGTERM');
      const r = await run.done;
      const ms = performance.now() - t0;
      expect(r.code, r.stderr).toBe(143);
      expect(ms).toBeLessThan(5000);
      expect(summary(r)).toMatchObject({ read: 0, sent: 0, interrupted: 'SIGTERM', outage: false });
      expect(await readFile(w.ledger, 'utf8')).toBe('');
    } finally {
      for (const s of held) s.destroy();
      server.close();
    }
  });
});

describe('the outage breaker', () => {
  it('says "service answers again" (info) when it closes, never "service looks down: breaker closed"', async () => {
    sim.setFaults({ ...NO_FAULTS, failRate: 1 });
    const w = await workdir('acc-breaker');
    const input = join(w.dir, 'in.ndjson');
    await writeFile(input, ndjsonOf(range(400).map((i) => makeTx(i, 'bk'))));
    const run = startCli(
      [
        'send',
        '--json',
        '--concurrency',
        '1',
        '--batch-size',
        '10',
        '--max-retries',
        '0',
        '--retry-base-ms',
        '20',
        '--retry-max-ms',
        '40',
        '--outage-max-ms',
        '60000',
        input,
      ],
      { env: w.env(sim, { SVC_LOG_LEVEL: 'info' }) },
    );
    let stderr = '';
    run.child.stderr!.on('data', (d: string) => {
      stderr += d;
    });
    await waitFor(() => stderr.includes('"event":"breaker.open"'), run.child);
    sim.setFaults({ failRate: 0 });
    const r = await run.done;
    expect(r.code, r.stderr).toBe(3);
    const closed = r.stderr
      .split('\n')
      .filter((l) => l.includes('"event":"breaker.closed"'))
      .map((l) => JSON.parse(l) as { level: number; msg: string });
    expect(closed.length).toBeGreaterThan(0);
    for (const c of closed)
      expect(c).toMatchObject({ level: 30, msg: 'service answers again: breaker closed' });
    expect(r.stderr).not.toContain('service looks down: breaker closed');
  });
});

describe('errors stay one line', () => {
  it('a line break in a file name is written as \\n; a usage error is `svc-ingest: USAGE_INVALID: …`', async () => {
    const missing = await runCliHere(['send', '--dry-run', 'bad\nname.csv']);
    expect(missing.code).toBe(1);
    expect(oneLine(missing, 'INPUT_UNREADABLE')).toBe(
      'svc-ingest: INPUT_UNREADABLE: cannot read bad\\nname.csv: no such file',
    );
    for (const [args, says] of [
      [['send', '--bogus'], "unknown option '--bogus'"],
      [['ledger', 'find'], "missing required argument 'id'"],
      [['sned'], "unknown command 'sned'"],
    ] as const) {
      const r = await runCliHere([...args]);
      expect(r.code, r.stderr).toBe(1);
      expect(oneLine(r, 'USAGE_INVALID')).toContain(says);
      expect(r.stderr.trim()).toMatch(/\(run with --help for usage\)$/);
    }
    const json = await runCliHere(['send', '--json', '--bogus']);
    expect(JSON.parse(json.stdout)).toEqual({
      error: { code: 'USAGE_INVALID', message: "unknown option '--bogus'" },
    });
  });

  it("the base URL's query is never echoed (it may hold a token)", async () => {
    const r = await runCliHere(['send', '--base-url', 'http://127.0.0.1:1/v?token=s3cr3t-value', 'x.csv']);
    expect(r.code).toBe(1);
    const line = oneLine(r, 'CONFIG_INVALID');
    expect(line).toContain('got "http://127.0.0.1:1/v"');
    expect(r.stderr).not.toContain('s3cr3t');
  });
});

describe('mapping check on NDJSON', () => {
  it('a required field\'s path no record has is an error (a draft\'s "?"); a path only some records have is not, even under --strict', async () => {
    const w = await workdir('acc-check-ndjson');
    const draft = await runCliHere(['mapping', 'draft', 'samples/lithic.ndjson']);
    expect(draft.code, draft.stderr).toBe(0);
    const profile = join(w.dir, 'lithic-draft.json');
    // The draft fills every field the records hold; a field it could not place is written as "?", as here.
    const drafted = JSON.parse(draft.stdout) as { fields: Record<string, unknown> };
    drafted.fields.currencyCode = { from: '?', description: 'TODO: no column matched' };
    await writeFile(profile, JSON.stringify(drafted, null, 2));
    const r = await runCliHere(['mapping', 'check', profile, 'samples/lithic.ndjson']);
    expect(r.code).toBe(1);
    const line = r.stderr.trim().split('\n').at(-1) as string;
    expect(line).toMatch(
      /^svc-ingest: INPUT_HEADER_MISSING_COLUMN: samples\/lithic\.ndjson: no record has anything at "\?" \(fields\.currencyCode\.from\)/,
    );
    expect(r.stderr).not.toMatch(STACK);

    // The built-in profile finds every path in some record (token_info.wallet_type in 2 of 12: counted, not judged
    // by the first record, which lacks it): exit 0, under --strict too.
    const ok = await runCliHere(['mapping', 'check', 'lithic', 'samples/lithic.ndjson']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain('in some of the 12 only: token_info.wallet_type 2');
    const strict = await runCliHere(['mapping', 'check', '--strict', 'lithic', 'samples/lithic.ndjson']);
    expect(strict.code, strict.stderr).toBe(0);
  });
});
