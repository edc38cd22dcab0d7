// Samples are executable: every file in samples/ goes through the real CLI with its profile, and no
// card number from any sample appears in any output file, in stdout or in stderr.
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { luhnValid } from '../../src/mask/index.ts';
import { ROOT, runCliHere, summaryOf } from '../helpers/cli.ts';
import { useSimulator } from '../helpers/simulator.ts';

const SAMPLES: Record<string, { mapping?: string; read: number; valid: number; rejected: number }> = {
  'canonical.csv': { read: 22, valid: 18, rejected: 4 },
  'canonical.csv.gz': { read: 22, valid: 18, rejected: 4 },
  'canonical.ndjson': { read: 21, valid: 18, rejected: 3 },
  'northwind.csv': { mapping: 'northwind-csv', read: 30, valid: 27, rejected: 3 },
  'harbor.ndjson': { mapping: 'harbor-ndjson', read: 31, valid: 28, rejected: 3 },
  'stripe-issuing.ndjson': { mapping: 'stripe-issuing', read: 13, valid: 11, rejected: 2 },
  'lithic.ndjson': { mapping: 'lithic', read: 12, valid: 10, rejected: 2 },
};

const sim = useSimulator({ seed: 21 });

/** Every 13-19 digit run (spaces or dashes allowed) passing Luhn in the samples: the card numbers. */
async function samplePans(): Promise<string[]> {
  const pans = new Set<string>();
  for (const f of await readdir(join(ROOT, 'samples'))) {
    const buf = await readFile(join(ROOT, 'samples', f));
    const text = f.endsWith('.gz') ? gunzipSync(buf).toString('utf8') : buf.toString('utf8');
    for (const m of text.matchAll(/\d(?:[ -]?\d){12,18}/g)) {
      const digits = m[0].replace(/[ -]/g, '');
      if (digits.length >= 13 && luhnValid(digits)) pans.add(digits);
    }
  }
  return [...pans];
}

describe('every sample through the CLI', () => {
  it('lists every file in samples/ (a new sample needs a row here)', async () => {
    const files = (await readdir(join(ROOT, 'samples'))).filter((f) => f !== 'README.md').sort();
    expect(files).toEqual(Object.keys(SAMPLES).sort());
  });

  for (const [file, want] of Object.entries(SAMPLES)) {
    it(`${file}: read ${want.read}, valid ${want.valid}, rejected ${want.rejected}; no card number leaves`, async () => {
      const dir = await mkdtemp(join(tmpdir(), 'svc-sample-'));
      const ledger = join(dir, 'ledger.ndjson');
      const rejects = join(dir, 'rejects.ndjson');
      const args = [
        'send',
        '--json',
        '--log-level',
        'debug',
        '--base-url',
        sim.url,
        '--ledger',
        ledger,
        '--rejects',
        rejects,
      ];
      if (want.mapping) args.push('--mapping', want.mapping);
      const r = await runCliHere([...args, join('samples', file)]);
      expect(r.code, r.stderr).toBe(2);
      const { mapping: _m, ...counts } = want;
      expect(summaryOf(r)).toMatchObject({ ...counts, sent: want.valid, failed: 0, skipped: 0 });
      const rejectLines = (await readFile(rejects, 'utf8'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(rejectLines).toHaveLength(want.rejected);
      for (const l of rejectLines) {
        expect(l.source).toBe(join('samples', file));
        expect(l.line).toBeGreaterThan(1);
        expect(l.errors.length).toBeGreaterThan(0);
      }
      const outputs = [
        r.stdout,
        r.stderr,
        await readFile(ledger, 'utf8'),
        await readFile(rejects, 'utf8'),
      ].join('\n');
      const sent = JSON.stringify([...sim.transactions()]);
      for (const pan of await samplePans()) {
        expect(outputs.includes(pan), `card number ending ${pan.slice(-4)} leaked into an output`).toBe(
          false,
        );
        expect(sent.includes(pan), `card number ending ${pan.slice(-4)} was sent to the service`).toBe(false);
      }
    });
  }

  it('the samples do hold card numbers (so the grep above means something)', async () => {
    expect((await samplePans()).length).toBeGreaterThanOrEqual(3);
  });
});
