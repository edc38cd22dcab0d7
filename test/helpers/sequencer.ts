// Which test files start first. The suite is bound by its CPU (two cores, four workers): four files that mostly wait
// at once (for a child process, the simulator's latency, a lease to run out) leave the cores idle, and a long file
// started late runs on at the end alone. So the files named here start first, whether vitest has timed them or not:
// the longest files, taking in turn one that mostly waits and one that mostly computes, each list longest first;
// the others follow in vitest's own order (longest last time first; on a fresh clone, largest first). CPU and wall
// time of each file: SVC_TEST_CPU_PROBE (docs/testing.md); a file "waits" below 0.4 s of CPU a second.
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Long files that mostly wait, longest first. */
const WAITING = [
  'faults/cluster',
  'faults/ledger-outage',
  'demo/demo',
  'deploy/backfill-job-run',
  'faults/fault-kinds',
  'backfill/restart-cli',
  'ledger/pg-store',
  'send/body-reuse',
  'backfill/feeds-cli',
  'send/progress',
  'simulator/tickets',
  'faults/outage',
  'ledger/upgrade-cli',
  'commands/webhook',
  'faults/unavailable',
];

/** Long files that mostly compute (in-process, or their child processes), longest first. */
const WORKING = [
  'faults/crash',
  'faults/lock-race',
  'install/package',
  'mask/false-positives',
  'deploy/systemd-run',
  'backfill/cut',
  'read/split',
  'mask/fp-kinds',
  'send/send-cli',
  'docs/sending-examples',
  'backfill/work-cli',
  'commands/ledger',
  'faults/leak-corpus',
  'send/cut-short',
  'faults/drain',
  'faults/resume-load',
  'deploy/observability',
  'send/pool-cli',
];

const FIRST = Array.from({ length: Math.max(WAITING.length, WORKING.length) }, (_, i) => [
  WAITING[i],
  WORKING[i],
])
  .flat()
  .filter((name): name is string => name !== undefined);

function rank(spec: TestSpecification): number {
  const i = FIRST.findIndex((name) => spec.moduleId.endsWith(`/test/${name}.test.ts`));
  return i === -1 ? FIRST.length : i;
}

export default class WaitingAndWorking extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    // Array.prototype.sort is stable: files not named keep vitest's order, after the named ones.
    return [...sorted].sort((a, b) => rank(a) - rank(b));
  }
}
