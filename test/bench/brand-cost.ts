// What each card scheme of the brand table costs in false positives (docs/security.md, "What each scheme costs"):
// the docs' corpora (test/helpers/false-positives.ts, test/helpers/fp-kinds.ts) run with the whole table, then
// without each scheme's ranges; the difference is what that scheme's ranges refuse or mangle. Not part of
// `make bench`: `node test/bench/brand-cost.ts [values a kind, default 100000]`.
import { withoutBrands } from '../../src/mask/brands.ts';
import { KINDS, RANDOM_NUMBER, refusals } from '../helpers/false-positives.ts';
import { ID_KINDS, idRefusals, mangled, TEXT_KINDS } from '../helpers/fp-kinds.ts';

/** The schemes the fourth pass added (issue 49); the library's new lengths of older brands are the rest. */
const ADDED = [
  'Mir',
  'Troy',
  'Elo',
  'Hiper',
  'Hipercard',
  'Naranja',
  'Verve',
  'UATP',
  'BORICA',
  'Dankort',
  'Humo',
  'Uzcard',
  'Napas',
  'Belkart',
  'ArCa',
  'Prostir',
  'Carnet',
  'GPN',
  'T-Union',
  'InterPayment',
  'InstaPayment',
  'LankaPay',
];

const n = Number(process.argv[2] ?? 100_000);
const measures: Array<[string, () => number]> = [
  ...ID_KINDS.map((k): [string, () => number] => [k.name, () => idRefusals(k, n).undeclared]),
  ...TEXT_KINDS.map((k): [string, () => number] => [k.name, () => mangled(k, n).count]),
  ...[...KINDS, RANDOM_NUMBER].map((k): [string, () => number] => [k.name, () => refusals(k, n).refused]),
];
const pct = (k: number) => `${((100 * k) / n).toFixed(2)} %`;
for (const [name, measure] of measures) {
  withoutBrands(new Set());
  const all = measure();
  if (all === 0) {
    console.log(`${name}: 0 with every scheme`);
    continue;
  }
  const costs: string[] = [];
  for (const brand of ADDED) {
    withoutBrands(new Set([brand]));
    const without = measure();
    if (without !== all) costs.push(`${brand} +${all - without}`);
  }
  console.log(
    `${name}: ${pct(all)} (${all} of ${n}); of them by an added scheme: ${costs.length > 0 ? costs.join(', ') : 'none'}`,
  );
}
withoutBrands(new Set());
