// Issue 50, Must 4: warnings gate a run before anything is sent. `send --check-first` maps the whole input (a file,
// or standard input spooled to a temporary file) before the first request and sends nothing when the mapping warns
// (exit 1, the warnings on stderr); `--strict` makes the warnings errors in `map` and `mapping check`.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCliHere, sendEnv, summaryOf, textOf } from '../helpers/cli.ts';
import { issuerExport, issuerProfile, ndjson } from '../helpers/issuer-export.ts';
import { useSimulator } from '../helpers/simulator.ts';

const sim = useSimulator({ seed: 50 }, 'reset');
let dir = '';
let exportFile = '';
let good = '';
let wrong = '';
const N = 300;
const REFUNDS = Math.floor(N / 9);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-check-first-'));
  exportFile = join(dir, 'issuer.ndjson');
  await writeFile(exportFile, ndjson(issuerExport(N)));
  good = join(dir, 'issuer.json');
  await writeFile(good, JSON.stringify(issuerProfile()));
  // Refunds sent as purchases: the sign check, learning the export's convention, flags exactly the refunds.
  const p = issuerProfile() as { fields: Record<string, unknown> };
  p.fields.transactionType = { from: 'kind', enum: { purchase: 'AUTHORIZED', refund: 'AUTHORIZED' } };
  wrong = join(dir, 'refunds-as-purchases.json');
  await writeFile(wrong, JSON.stringify(p));
});

const send = (mapping: string, tag: string, extra: string[] = [], input?: string) =>
  runCliHere(['send', '--json', '--check-first', '--mapping', mapping, ...extra], {
    env: sendEnv(sim.url, dir, tag),
    ...(input === undefined ? {} : { input }),
  });

describe('send --check-first: the mapping is checked whole before the first request', () => {
  it('a profile that warns sends nothing: exit 1 with the warning', async () => {
    const r = await send(wrong, 'wrong', [exportFile]);
    expect(r.code, r.stderr).toBe(1);
    expect([...sim.transactions()]).toHaveLength(0);
    const text = textOf(r.stderr);
    expect(text).toContain(
      `transactionType contradicts the amount's sign in ${REFUNDS} records (${REFUNDS} AUTHORIZED with a positive amount, 0 REFUND with a negative amount; first: txn_00008)`,
    );
    expect(text).toContain('send --check-first: the mapping warns (1); nothing was sent');
  });

  it('standard input is spooled and checked the same way', async () => {
    const text = ndjson(issuerExport(N));
    const bad = await send(wrong, 'wrong-stdin', ['--format', 'ndjson', '-'], text);
    expect(bad.code, bad.stderr).toBe(1);
    expect([...sim.transactions()]).toHaveLength(0);
    const ok = await send(good, 'good-stdin', ['--format', 'ndjson', '-'], text);
    expect(ok.code, ok.stderr).toBe(0);
    expect(summaryOf(ok)).toMatchObject({ read: N, sent: N, rejected: 0 });
    expect([...sim.transactions()]).toHaveLength(N);
  });

  it('a correct profile on an issuer export (account-side signs, a fixed offset) passes the gate and is sent whole', async () => {
    const r = await send(good, 'good', [exportFile]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('mapping.warning');
    expect(summaryOf(r)).toMatchObject({ read: N, sent: N });
    const refund = [...sim.transactions()].find((t) => t.transactionId === 'txn_00008');
    expect(refund).toMatchObject({ transactionType: 'REFUND', postedAmount: '1196' });
  });

  it('without the option, send logs the warning at its first record (a declared convention), then sends', async () => {
    const p = issuerProfile() as { signConvention?: string; fields: Record<string, unknown> };
    p.signConvention = 'account';
    p.fields.transactionType = { from: 'kind', enum: { purchase: 'AUTHORIZED', refund: 'AUTHORIZED' } };
    const declared = join(dir, 'declared.json');
    await writeFile(declared, JSON.stringify(p));
    const r = await runCliHere(['send', '--json', '--mapping', declared, exportFile], {
      env: sendEnv(sim.url, dir, 'plain'),
    });
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stderr
      .split('\n')
      .filter((l) => l.includes('"mapping.warning"'))
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => [l.kind ?? 'end', l.at ?? ''])).toEqual([
      ['sign', `${exportFile}:9`],
      ['end', ''],
    ]);
    expect(summaryOf(r)).toMatchObject({ sent: N, mappingWarnings: 1 });
  });

  it('--strict makes the warning an error in map and mapping check (exit 1)', async () => {
    const m = await runCliHere(['map', '--strict', '--mapping', wrong, exportFile]);
    expect(m.code).toBe(1);
    expect(textOf(m.stderr)).toContain('error (--strict): transactionType contradicts');
    const c = await runCliHere(['mapping', 'check', '--strict', wrong, exportFile]);
    expect(c.code).toBe(1);
    expect(textOf(c.stderr)).toContain('mapping check --strict: 1 warning');
    const plain = await runCliHere(['mapping', 'check', wrong, exportFile]);
    expect(plain.code).toBe(0);
  });
});
