// False positives of the third pass (test/helpers/fp-kinds.ts), 100,000 seeded values a kind, measured both ways
// and checked against the rates docs/security.md publishes: an id kind declared with its shape (`ownNumericIds`)
// is never refused; undeclared, it is refused at the published rate (a number that may be a card number is one
// until the profile says otherwise); free text and error text are mangled at the published rate, merchant names
// under 0.1 %.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { report } from '../faults/helpers.ts';
import { ID_KINDS, idRefusals, mangled, TEXT_KINDS } from '../helpers/fp-kinds.ts';

const N = 100_000;
const pct = (k: number) => `${((100 * k) / N).toFixed(2)} %`;

/** The rows of docs/security.md's rate tables: first cell → the cells. */
function publishedRows(): Map<string, string[]> {
  const doc = readFileSync(new URL('../../docs/security.md', import.meta.url), 'utf8');
  const rows = new Map<string, string[]>();
  for (const line of doc.split('\n')) {
    const m = /^\| (.+) \|$/.exec(line);
    if (m === null) continue;
    const cells = (m[1] as string).split(' | ').map((c) => c.trim());
    rows.set(cells[0] as string, cells.slice(1));
  }
  return rows;
}

describe('false positives, third pass: rates published in docs/security.md', () => {
  const rows = publishedRows();

  for (const kind of ID_KINDS) {
    it(`${kind.name} (${kind.field}): 0 refused declared; undeclared at the published rate`, () => {
      const r = idRefusals(kind, N);
      report(`pan false positives: ${kind.name}`, {
        values: N,
        undeclared: r.undeclared,
        declared: r.declared,
      });
      expect(r.examples).toEqual([]);
      expect(r.declared).toBe(0);
      expect(rows.get(kind.name), `docs/security.md has no row for ${kind.name}`).toEqual([
        `\`${kind.field}\``,
        pct(r.undeclared),
        '0',
        `\`${JSON.stringify({ field: kind.field, ...kind.declare })}\``,
      ]);
    });
  }

  for (const kind of TEXT_KINDS) {
    it(`${kind.name}: mangled at the published rate, under 0.1 %`, () => {
      const r = mangled(kind, N);
      report(`pan text false positives: ${kind.name}`, { values: N, mangled: r.count });
      expect(r.count / N).toBeLessThan(0.001);
      expect(rows.get(kind.name), `docs/security.md has no row for ${kind.name}`).toEqual([pct(r.count)]);
    });
  }
});
