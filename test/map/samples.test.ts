// Every file in samples/ is read, mapped with its profile and validated to the counts samples/README.md states.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadProfile } from '../../src/map/profile.ts';
import { luhnValid } from '../../src/mask/index.ts';
import { readInput, resolveInputs } from '../../src/read/open.ts';
import { validateTransaction } from '../../src/validate/validate.ts';

const SAMPLES = path.resolve(import.meta.dirname, '../../samples');
const readme = readFileSync(path.join(SAMPLES, 'README.md'), 'utf8');
const rows = [...readme.matchAll(/^\| ([\w.-]+) \| ([\w-]+) \| (\d+) \| (\d+) \| (\d+) \|$/gm)].map((m) => ({
  file: m[1] as string,
  profile: m[2] as string,
  read: Number(m[3]),
  valid: Number(m[4]),
  rejected: Number(m[5]),
}));
// The lines README.md lists per sample: "- line N: ..." under "**file**".
function listedLines(file: string): number[] {
  const section = readme
    .split(/^\*\*/m)
    .find(
      (s) => s.startsWith(`${file}**`) || (file.endsWith('.gz') && s.startsWith(`${file.slice(0, -3)}**`)),
    );
  return [...(section ?? '').matchAll(/^- line (\d+):/gm)].map((m) => Number(m[1]));
}

describe('samples', () => {
  it('README.md lists every sample file', () => {
    const files = readdirSync(SAMPLES).filter((f) => f !== 'README.md');
    expect(rows.map((r) => r.file).sort()).toEqual(files.sort());
  });
  for (const row of rows) {
    it(`${row.file} with ${row.profile}: read ${row.read}, valid ${row.valid}, rejected ${row.rejected}`, async () => {
      const profile = await loadProfile(row.profile);
      const [spec] = await resolveInputs([path.join(SAMPLES, row.file)], {});
      if (spec === undefined) throw new Error('no spec');
      let read = 0;
      const rejectLines: number[] = [];
      const ids = new Set<string>();
      const sent: string[] = [];
      for await (const items of readInput(spec, { delimiter: profile.delimiter })) {
        for (const item of items) {
          read++;
          if (item.kind === 'reject') {
            rejectLines.push(item.reject.line);
            continue;
          }
          const r = profile.map(item.record.fields);
          const errors = r.ok
            ? validateTransaction(r.tx as unknown as Record<string, unknown>, profile.required)
            : r.errors;
          if (!r.ok || errors.length > 0 || ids.has(r.tx.transactionId)) {
            rejectLines.push(item.record.line);
            const masked = JSON.stringify(profile.maskRecord(item.record.fields));
            for (const run of masked.match(/\d{13,19}/g) ?? []) expect(luhnValid(run)).toBe(false);
            continue;
          }
          ids.add(r.tx.transactionId);
          sent.push(JSON.stringify(r.tx));
        }
      }
      expect({ read, valid: sent.length, rejected: rejectLines.length }).toEqual({
        read: row.read,
        valid: row.valid,
        rejected: row.rejected,
      });
      expect(rejectLines).toEqual(listedLines(row.file));
      for (const tx of sent)
        for (const run of tx.match(/\d{13,19}/g) ?? []) expect(luhnValid(run), run).toBe(false);
    });
  }
});
