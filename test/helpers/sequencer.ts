// Which test files start first. The suite is bound by its CPU (two cores, four workers): three or four files that
// mostly wait at once (for a child process, the simulator's latency, a lease to run out) leave the cores idle, and a
// long file started late runs on at the end alone. So the long files that mostly wait start first, whether vitest has
// timed them or not, two of them beside two others, and then one in every three files taken: the others end sooner,
// so a worker freed takes, twice in three, a file that computes. The others: the long files named below that mostly
// compute, then the rest in vitest's own order (longest last time first; on a fresh clone, largest first). CPU and
// wall time of each file: SVC_TEST_CPU_PROBE (docs/testing.md); a file "waits" below 0.45 s of CPU a second.
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Long files that mostly wait, longest first. */
const WAITING = [
  'faults/cluster',
  'faults/ledger-outage',
  'faults/crash',
  'demo/demo',
  'deploy/backfill-job-run',
  'faults/fault-kinds',
  'backfill/restart-cli',
  'deploy/observability',
  'send/body-reuse',
  'ledger/pg-store',
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
  'faults/lock-race',
  'install/package',
  'mask/false-positives',
  'deploy/systemd-run',
  'docs/sending-examples',
  'backfill/cut',
  'read/split',
  'mask/fp-kinds',
  'send/pool-cli',
  'send/cut-short',
  'send/send-cli',
  'backfill/work-cli',
  'commands/ledger',
  'faults/leak-corpus',
  'faults/drain',
  'faults/resume-load',
];

const named = (list: string[]) => (spec: TestSpecification) =>
  list.findIndex((name) => spec.moduleId.endsWith(`/test/${name}.test.ts`));

/**
 * Two waiting files and two others, then one waiting file in every three: `others` in their order (the working
 * files named, then the rest), each list's order kept.
 */
export function interleave<T>(waiting: T[], others: T[]): T[] {
  const out: T[] = [];
  let w = 0;
  let o = 0;
  for (let i = 0; w < waiting.length || o < others.length; i++) {
    const wantWaiting = i < 4 ? i % 2 === 0 : i % 3 === 0;
    if ((wantWaiting && w < waiting.length) || o >= others.length) out.push(waiting[w++] as T);
    else out.push(others[o++] as T);
  }
  return out;
}

export default class WaitingAndWorking extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const waitingAt = named(WAITING);
    const workingAt = named(WORKING);
    const waiting = sorted.filter((f) => waitingAt(f) !== -1).sort((a, b) => waitingAt(a) - waitingAt(b));
    const working = sorted.filter((f) => workingAt(f) !== -1).sort((a, b) => workingAt(a) - workingAt(b));
    const rest = sorted.filter((f) => waitingAt(f) === -1 && workingAt(f) === -1);
    return interleave(waiting, [...working, ...rest]);
  }
}
