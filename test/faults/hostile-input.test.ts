// Hostile input: each case is a reject or one clear error line, never a stack trace, never the end of the good records.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, runCliHere, startCli } from '../helpers/cli.ts';
import { useSimulator } from '../helpers/simulator.ts';
import { CANONICAL_COLUMNS, csvOf, makeTx } from '../helpers/transactions.ts';
import { FAST, readRejects, report, STACK, settles, summary, workdir } from './helpers.ts';

const sim = useSimulator({ seed: 7 }, 'faults');

const good = (i: number, p: string) => JSON.stringify(makeTx(i, p));

/** The JSONTestSuite one-line cases (vendored), each decoded as the reader would, in name order. */
function jsonTestSuiteCases(): string[] {
  const file = join(ROOT, 'test', 'faults', 'corpora', 'json-test-suite', 'cases.json');
  const stored = JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>;
  // Generated rather than stored: 100,000 opening brackets.
  stored['n_structure_100000_opening_arrays.json'] = Buffer.from('['.repeat(100_000)).toString('base64');
  return Object.keys(stored)
    .sort()
    .map((name) => Buffer.from(stored[name] as string, 'base64').toString('utf8'));
}

describe('hostile NDJSON (cases modelled on JSONTestSuite)', () => {
  it('every bad line is a reject with its line number; every good line around them is sent', async () => {
    const w = await workdir('hostile-ndjson');
    const base = { ...makeTx(9000, 'hn') } as Record<string, unknown>;
    const body = JSON.stringify(base).slice(1, -1);
    const bad = [
      '{"a":1,}', // trailing comma
      "{'transactionId':'x'}", // single quotes
      '[1,2,3]', // an array, not an object
      '"just a string"',
      '123',
      'null',
      'true',
      '{"a":NaN}',
      '{"a":Infinity}',
      '{"a":"\u0001"}', // raw control character inside a string
      '{"a":1} {"b":2}', // two values on one line
      '{"a":1', // unterminated
      '\u0000\u0000\u0000', // NUL bytes
      '\ufeff{"a":1}', // a BOM in the middle of the file
      '{"a":"\\uD800"}', // lone surrogate: parses, then fails the mapping (missing fields)
      '['.repeat(100_000), // 100,000 opening brackets
      `${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}`, // 50,000-deep object
      `{${body.replace(/"postedAmount":"\d+"/, '"postedAmount":1e309')}}`, // Infinity amount
      `{${body.replace(/"postedAmount":"\d+"/, '"postedAmount":-0')}}`, // minus zero
      `{${body.replace(/"postedAmount":"\d+"/, '"postedAmount":123456789012345678901234567890')}}`,
      `{${body.replace(/"postedAmount":"\d+"/, '"postedAmount":"123456789012345678901234567890"')}}`,
      `{${body.replace(/"cardNetworkIdentifier":\d/, '"cardNetworkIdentifier":1e400')}}`,
      `{${body.replace(/"paymentNetworkMerchant":"[^"]*"/, `"paymentNetworkMerchant":"${'M'.repeat(200_000)}"`)}}`,
      `{${body.replace(/"transactionId":"[^"]*"/, `"transactionId":"${'t'.repeat(65)}"`)}}`,
    ];
    const lines: string[] = [];
    const badLines: number[] = [];
    let g = 0;
    for (const b of bad) {
      lines.push(good(g++, 'hn'));
      lines.push(b);
      badLines.push(lines.length);
    }
    lines.push(good(g++, 'hn'));
    const file = join(w.dir, 'in.ndjson');
    await writeFile(file, `${lines.join('\n')}\n`);
    const r = await runCliHere(['send', ...FAST, file], { env: w.env(sim) });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).not.toMatch(STACK);
    const s = summary(r);
    expect(s).toMatchObject({ read: lines.length, sent: g, rejected: bad.length });
    expect(settles(s)).toBe(true);
    const rj = await readRejects(w.rejects);
    expect(rj.map((l) => l.line)).toEqual(badLines);
    // A reject line is bounded by the longest line read (1 MiB), however long the field.
    for (const l of rj) expect(JSON.stringify(l).length).toBeLessThan(1.1 * 1024 * 1024);
    report('hostile: NDJSON edge cases', { lines: lines.length, good: g, rejected: rj.length, exit: r.code });
  });

  // The one-line cases of JSONTestSuite, vendored with their licence in corpora/json-test-suite/ (see its README).
  it('JSONTestSuite corpus: each one-line case a reject, the good lines sent', async () => {
    const w = await workdir('hostile-jts');
    const lines: string[] = [];
    let cases = 0;
    let g = 0;
    for (const text of jsonTestSuiteCases()) {
      lines.push(good(g++, 'jt'), text);
      cases++;
    }
    expect(cases).toBe(306);
    lines.push(good(g++, 'jt'));
    const file = join(w.dir, 'in.ndjson');
    await writeFile(file, `${lines.join('\n')}\n`);
    const r = await runCliHere(['send', ...FAST, file], { env: w.env(sim) });
    expect(r.stderr).not.toMatch(STACK);
    const s = summary(r);
    // No case is a valid transaction, so each is a reject (a blank-looking one may be skipped as blank).
    expect(s.sent).toBe(g);
    expect(s.rejected).toBeGreaterThan(cases * 0.95);
    expect(s.rejected).toBeLessThanOrEqual(cases);
    report('hostile: JSONTestSuite corpus', { cases, good: g, rejected: s.rejected, exit: r.code });
  });
});

describe('hostile CSV', () => {
  it('ragged rows, NUL bytes, absurd numbers, a 2 MB field: rejects, and the good rows after them are sent', async () => {
    const w = await workdir('hostile-csv');
    const cols = CANONICAL_COLUMNS;
    const row = (t: Record<string, unknown>) => cols.map((c) => String(t[c] ?? '')).join(',');
    const tx = (i: number, patch: Record<string, unknown> = {}) => ({ ...makeTx(i, 'hc'), ...patch });
    const rows = [
      row(tx(0)),
      row(tx(1)).split(',').slice(0, 5).join(','), // too few fields
      `${row(tx(2))},extra,fields`, // too many
      '\u0000\u0000\u0000', // NUL bytes
      row(tx(3, { postedAmount: '1e309' })),
      row(tx(4, { postedAmount: '-0' })),
      row(tx(5, { postedAmount: '123456789012345678901234567890' })),
      row(tx(6, { paymentNetworkMerchant: 'x'.repeat(2 * 1024 * 1024) })), // one line over 1 MiB
      row(tx(7, { paymentNetworkMerchantCity: 'c'.repeat(5000) })),
      row(tx(8)),
      row(tx(9)),
    ];
    const file = join(w.dir, 'in.csv');
    await writeFile(file, `${cols.join(',')}\n${rows.join('\n')}\n`);
    const r = await runCliHere(['send', ...FAST, file], { env: w.env(sim) });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).not.toMatch(STACK);
    const s = summary(r);
    expect(s).toMatchObject({ read: rows.length, sent: 3, rejected: 8 });
    const rj = await readRejects(w.rejects);
    expect(rj.map((l) => l.line)).toEqual([3, 4, 5, 6, 7, 8, 9, 10]);
    expect(String(JSON.stringify(rj[6]))).toMatch(/longer than/);
    expect(sim.deliveries().get('hc-00000009')).toBe(1);
    report('hostile: CSV ragged / NUL / absurd numbers / long fields', {
      rows: rows.length,
      sent: s.sent,
      rejected: s.rejected,
      exit: r.code,
    });
  });

  it('binary garbage as CSV: one clear error line (exit 1), nothing sent; as NDJSON: rejects, good lines sent', async () => {
    const w = await workdir('hostile-bin');
    let x = 12345;
    const garbage = Buffer.alloc(64 * 1024);
    for (let i = 0; i < garbage.length; i++) {
      x = (x * 1103515245 + 12345) & 0x7fffffff;
      garbage[i] = x >> 16;
    }
    const csv = join(w.dir, 'bin.csv');
    await writeFile(csv, garbage);
    const r = await runCliHere(['send', ...FAST, csv], { env: w.env(sim) });
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^svc-ingest: INPUT_/);
    const nd = join(w.dir, 'bin.ndjson');
    await writeFile(nd, Buffer.concat([garbage, Buffer.from(`\n${good(1, 'hb')}\n`)]));
    const r2 = await runCliHere(['send', ...FAST, nd], { env: w.env(sim) });
    expect(r2.stderr).not.toMatch(STACK);
    expect(r2.code).toBe(2);
    expect(summary(r2).sent).toBe(1);
    report('hostile: binary garbage', {
      csvExit: r.code,
      ndjsonExit: r2.code,
      ndjsonRejected: summary(r2).rejected,
    });
  });

  it('UTF-16 with a BOM: CSV is decoded (csv-parse reads the BOM); NDJSON lines are rejects', async () => {
    const w = await workdir('hostile-u16');
    const txs = [makeTx(1, 'u16'), makeTx(2, 'u16')];
    const csv = join(w.dir, 'u16.csv');
    await writeFile(csv, Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(csvOf(txs), 'utf16le')]));
    const r = await runCliHere(['send', ...FAST, csv], { env: w.env(sim) });
    expect(r.stderr).not.toMatch(STACK);
    expect(r.code, r.stderr).toBe(0);
    expect(summary(r).sent).toBe(2);
    const nd = join(w.dir, 'u16.ndjson');
    await writeFile(
      nd,
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(`${good(3, 'u16')}\n`, 'utf16le')]),
    );
    const r2 = await runCliHere(['send', ...FAST, nd], { env: w.env(sim) });
    expect(r2.stderr).not.toMatch(STACK);
    expect(r2.code).toBe(2);
    expect(summary(r2)).toMatchObject({ sent: 0 });
    report('hostile: UTF-16 BOM', {
      csvExit: r.code,
      csvSent: 2,
      ndjsonExit: r2.code,
      ndjsonRejected: summary(r2).rejected,
    });
  });

  it('csv-spectrum through the CLI: every case read with the expected values', async () => {
    const dir = join(ROOT, 'node_modules/csv-spectrum');
    const names = readdirSync(join(dir, 'csvs')).map((f) => f.replace(/\.csv$/, ''));
    const fixed = makeTx(0) as unknown as Record<string, unknown>;
    const results = await Promise.all(
      names.map(async (name, k) => {
        const w = await workdir(`spectrum-${name}`);
        const parsed = JSON.parse(await readFile(join(dir, 'json', `${name}.json`), 'utf8')) as
          | Record<string, string>
          | Array<Record<string, string>>;
        // csv-spectrum's own location_coordinates.json disagrees with its CSV (phone number, county): the CSV wins.
        const expected =
          name === 'location_coordinates'
            ? [
                {
                  'Contact Phone Number': '2095257564',
                  'Location Coordinates': '37\ufffd36\'37.8"N 121\ufffd2\'17.9"W',
                  Cities: 'Modesto',
                  Counties: 'Stanislaus',
                },
              ]
            : Array.isArray(parsed)
              ? parsed
              : [parsed];
        const header = (await readFile(join(dir, 'csvs', `${name}.csv`), 'utf8'))
          .split(/\r?\n/)[0]!
          .split(',');
        const prefix = `s${k}-`;
        // Every field a constant except transactionId: a hash of every column, so each value must be read exactly.
        const fields: Record<string, unknown> = {};
        for (const [f, v] of Object.entries(fixed)) if (f !== 'transactionId') fields[f] = { const: v };
        fields.transactionId = { hash: { of: header, separator: '|', length: 40, prefix } };
        const profile = join(w.dir, 'spectrum.json');
        await writeFile(profile, JSON.stringify({ name: 'spectrum', format: 'csv', fields }));
        const r = await runCliHere(
          ['send', ...FAST, '--mapping', profile, join(dir, 'csvs', `${name}.csv`)],
          {
            env: w.env(sim),
          },
        );
        // A row with an empty value has no hashed id (any empty part makes it missing): it is rejected, and
        // the rejects file's copy of the source record shows each value as read.
        const hasEmpty = (row: Record<string, string>) => header.some((h) => (row[h] ?? '').trim() === '');
        const want = expected
          .filter((row) => !hasEmpty(row))
          .map(
            (row) =>
              prefix +
              createHash('sha256')
                .update(header.map((h) => (row[h] ?? '').trim()).join('|'))
                .digest('hex')
                .slice(0, 40),
          );
        const wantRejected = expected.filter(hasEmpty);
        const rejected = existsSync(w.rejects)
          ? (await readFile(w.rejects, 'utf8'))
              .split('\n')
              .filter((l) => l !== '')
              .map(
                (l) =>
                  JSON.parse(l) as { errors: Array<{ field: string; message: string }>; record: unknown },
              )
          : [];
        return { name, r, want, wantRejected, rejected };
      }),
    );
    for (const { name, r, want, wantRejected, rejected } of results) {
      expect(r.stderr, name).not.toMatch(STACK);
      expect(r.code, `${name}: ${r.stderr}`).toBe(wantRejected.length > 0 ? 2 : 0);
      expect(summary(r), name).toMatchObject({
        read: want.length + wantRejected.length,
        sent: want.length,
        rejected: wantRejected.length,
      });
      for (const id of want) expect(sim.deliveries().get(id), `${name} ${id}`).toBe(1);
      expect(
        rejected.map((l) => l.record),
        name,
      ).toEqual(wantRejected);
      for (const l of rejected)
        expect(l.errors, name).toEqual([{ field: 'transactionId', message: 'required' }]);
    }
    report('hostile: csv-spectrum', {
      cases: results.length,
      records: results.reduce((n, x) => n + x.want.length + x.wantRejected.length, 0),
    });
  });
});

describe('a 100 MB line with no newline on standard input', () => {
  it('is rejected while memory stays bounded; the good lines before it are sent', async () => {
    const w = await workdir('hostile-huge');
    // --allow-unterminated: the last line is read as a file's (without it a stream ending in a line with no
    // line break ends as cut short, exit 1: test/send/cut-short.test.ts); what is tested here is the memory.
    const { child, done } = startCli(['send', ...FAST, '--format', 'ndjson', '--allow-unterminated', '-'], {
      env: w.env(sim),
      keepStdinOpen: true,
    });
    let hwmKb = 0;
    const poll = setInterval(() => {
      try {
        const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
        if (m) hwmKb = Math.max(hwmKb, Number(m[1]));
      } catch {}
    }, 20);
    const write = (b: Buffer | string) =>
      child.stdin!.write(b)
        ? Promise.resolve()
        : new Promise<void>((r) => child.stdin!.once('drain', () => r()));
    for (let i = 0; i < 20; i++) await write(`${good(i, 'hg')}\n`);
    const block = Buffer.alloc(1024 * 1024, 'x');
    await write('{"transactionId":"');
    for (let i = 0; i < 100; i++) await write(block);
    child.stdin!.end();
    const { code, stdout, stderr } = await done;
    clearInterval(poll);
    expect(stderr).not.toMatch(STACK);
    expect(code, stderr).toBe(2);
    const s = JSON.parse(stdout.trim()) as { read: number; sent: number; rejected: number };
    expect(s).toMatchObject({ read: 21, sent: 20, rejected: 1 });
    const rj = await readRejects(w.rejects);
    expect(rj[0]).toMatchObject({ line: 21 });
    expect(JSON.stringify(rj[0])).toMatch(/longer than/);
    expect(hwmKb).toBeGreaterThan(0);
    expect(hwmKb / 1024).toBeLessThan(200);
    report('hostile: 100 MB line without newline on stdin', {
      peakRssMB: Math.round(hwmKb / 1024),
      sent: s.sent,
      rejected: s.rejected,
      exit: code,
    });
  });
});
