// CI's coverage gate (`make coverage-gate`): reads the summary vitest's json-summary reporter wrote and checks it
// against the floor. One line out; exit 1 under the floor or with no summary. The tests of that run are not judged
// here: `make test` ran and counted them, and a test timed for a run without V8's counters may fail under them.
import { readFileSync } from 'node:fs';
import { COVERAGE_FLOOR } from './coverage-floor.ts';

type Kind = keyof typeof COVERAGE_FLOOR;
const file = process.argv[2] ?? '.out/coverage/coverage-summary.json';
let total: Record<Kind, { pct: number }>;
try {
  total = (JSON.parse(readFileSync(file, 'utf8')) as { total: Record<Kind, { pct: number }> }).total;
} catch (err) {
  console.error(
    `coverage: no summary at ${file} (${(err as Error).message}): the run under coverage did not finish`,
  );
  process.exit(1);
}
const kinds = Object.keys(COVERAGE_FLOOR) as Kind[];
const under = kinds.filter((k) => !(total[k].pct >= COVERAGE_FLOOR[k]));
const figures = kinds.map((k) => `${k} ${total[k].pct} % (floor ${COVERAGE_FLOOR[k]})`).join(', ');
console.log(`coverage: ${figures}: ${under.length > 0 ? `UNDER THE FLOOR: ${under.join(', ')}` : 'ok'}`);
process.exit(under.length > 0 ? 1 : 0);
