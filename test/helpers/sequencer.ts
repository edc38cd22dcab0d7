// Which test files start first. vitest starts the files that took longest last time first; on a fresh clone it has
// no times yet and starts the largest files first, and some long files are small (the demo run end to end, the
// false-positive corpus, the crash and lock-race scenarios): started last, they ran on at the end with the other
// cores idle (a fresh clone's run: 180 s, the last 14 s with one or two files left). When vitest has no time for
// some file, the files named here (the longest, by a fresh clone's run) start first, in this order; otherwise its own
// order stands. The list: the 20 longest files of a warm run (4 workers), longest first.
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const LONGEST_FIRST = [
  'faults/cluster',
  'faults/ledger-outage',
  'faults/crash',
  'demo/demo',
  'faults/lock-race',
  'mask/fp-kinds',
  'mask/false-positives',
  'install/package',
  'deploy/backfill-job-run',
  'faults/fault-kinds',
  'backfill/restart-cli',
  'deploy/systemd-run',
  'send/body-reuse',
  'send/cut-short',
  'send/progress',
  'simulator/tickets',
  'ledger/pg-store',
  'docs/sending-examples',
  'faults/resume-load',
  'faults/outage',
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
