// Which test files start first. vitest starts the files that took longest last time first; on a fresh clone it has
// no times yet and starts the largest files first, and some long files are small (the demo run end to end, the
// false-positive corpus, the crash and lock-race scenarios): started last, they ran on at the end with the other
// cores idle (a fresh clone's run: 180 s, the last 14 s with one or two files left). When vitest has no time for
// some file, the files named here (the longest, by a fresh clone's run) start first, in this order; otherwise its own
// order stands. The list: the 30 longest files of a fresh clone's run (4 workers), longest first.
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const LONGEST_FIRST = [
  'faults/cluster',
  'faults/ledger-outage',
  'faults/crash',
  'demo/demo',
  'faults/lock-race',
  'mask/false-positives',
  'faults/fault-kinds',
  'install/package',
  'backfill/restart-cli',
  'mask/fp-kinds',
  'faults/leak-corpus',
  'deploy/backfill-job-run',
  'send/body-reuse',
  'ledger/pg-store',
  'read/split',
  'simulator/tickets',
  'backfill/work-cli',
  'faults/outage',
  'send/progress',
  'faults/drain',
  'send/send-cli',
  'backfill/cut',
  'deploy/observability',
  'deploy/systemd-run',
  'backfill/feeds-cli',
  'commands/ledger',
  'commands/webhook',
  'send/pool-cli',
  'faults/unavailable',
  'faults/ledger-failure',
];

function rank(spec: TestSpecification): number {
  const i = LONGEST_FIRST.findIndex((name) => spec.moduleId.endsWith(`/test/${name}.test.ts`));
  return i === -1 ? LONGEST_FIRST.length : i;
}

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const timed = files.every((spec) => this.ctx.cache.getTestSpecificationResult(spec) !== undefined);
    // Array.prototype.sort is stable: files not named keep vitest's order, after the named ones.
    return timed ? sorted : [...sorted].sort((a, b) => rank(a) - rank(b));
  }
}
