// The card-number rule's false-positive corpus at bench size (`--only pan`): 10,000,000 seeded values of each kind
// through the validator (test/helpers/false-positives.ts; the suite runs 1,000,000), and random undeclared
// 13-19-digit numbers, whose refusal rate is the rule's cost to a bank that does not declare its numeric ids.
import { loadavg } from 'node:os';
import { maskCardNumbers } from '../../src/mask/index.ts';
import { digitFuzz, piecesLeft } from '../helpers/digit-fuzz.ts';
import { KINDS, RANDOM_NUMBER, refusals } from '../helpers/false-positives.ts';
import { log, type ScenarioResult } from './scenarios.ts';

export async function panCorpus(perKind: number): Promise<ScenarioResult> {
  const runs: ScenarioResult['runs'] = [];
  let refusedValid = 0;
  let cpuUs = 0;
  const t0 = performance.now();
  for (const kind of [...KINDS, RANDOM_NUMBER]) {
    const cpu0 = process.cpuUsage();
    const r = refusals(kind, perKind);
    const cpu = process.cpuUsage(cpu0);
    cpuUs += cpu.user + cpu.system;
    if (kind !== RANDOM_NUMBER) refusedValid += r.refused;
    runs.push({ kind: kind.name, values: perKind, refused: r.refused, rate: r.refused / perKind });
    log(
      `  ${kind.name}: ${r.refused} of ${perKind} refused${r.examples.length ? ` (e.g. ${r.examples[0]})` : ''}`,
    );
    await new Promise((res) => setImmediate(res));
  }
  // The digit-context fuzz at bench size (the suite runs 100,000): no 12 digits of a card number in a row.
  const fuzzCases = perKind / 10;
  let fuzzLeaks = 0;
  for (const c of digitFuzz(fuzzCases))
    if (piecesLeft(maskCardNumbers(c.text), c.cards).length > 0) fuzzLeaks++;
  runs.push({
    kind: 'digit-context fuzz',
    values: fuzzCases,
    refused: fuzzLeaks,
    rate: fuzzLeaks / fuzzCases,
  });
  log(`  digit-context fuzz: ${fuzzLeaks} of ${fuzzCases} cases left 12 digits of a card number in a row`);
  const wallMs = performance.now() - t0;
  const values = perKind * (KINDS.length + 1);
  const random = runs[runs.length - 2]?.rate as number;
  return {
    name: 'pan',
    group: 'pan',
    rows: values,
    command: 'in process: validateValues over test/helpers/false-positives.ts (seed 19)',
    runs,
    median: {
      load1: Math.round((loadavg()[0] as number) * 10) / 10,
      wallMs,
      rowsPerSec: Math.round(values / (wallMs / 1000)),
      rowsPerCpuSec: Math.round(values / (cpuUs / 1e6)),
    },
    target: `0 of ${KINDS.length} × ${perKind} valid values refused`,
    met: refusedValid === 0 && fuzzLeaks === 0,
    display: {
      extra: `valid refused: ${refusedValid} of ${perKind * KINDS.length}; fuzz leaks: ${fuzzLeaks} of ${fuzzCases}`,
      other: `random 13-19 digits refused: ${(random * 100).toFixed(2)} %`,
    },
  };
}
