// Which test files start first. The suite is bound by its CPU (two cores, four workers): three or four files that
// mostly wait at once (for a child process, the simulator's latency, a lease to run out) leave the cores idle, and a
// long file started late runs on at the end alone. So the order is planned on a model of the run: each worker takes
// the next file when it is free, each file lasts its usual time, and a file that mostly waits is taken only while
// fewer than two others are running; each kind longest first. The long files' times are below, so that a fresh clone,
// which vitest has not timed yet, is planned the same way; the other files last what vitest timed last run (a
// second when it has not). CPU and wall time of each file: SVC_TEST_CPU_PROBE (docs/testing.md); a file "waits"
// below 0.45 s of CPU a second.
import { join, relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { ROOT } from './cli.ts';

/** The long files (under test/, without .test.ts): seconds in a warm run, and whether each mostly waits. */
const LONG: Record<string, { s: number; waits: boolean }> = {
  'faults/cluster': { s: 43, waits: true },
  'faults/ledger-outage': { s: 29, waits: true },
  'demo/demo': { s: 17, waits: true },
  'faults/crash': { s: 16, waits: true },
  'faults/fault-kinds': { s: 11, waits: true },
  'backfill/restart-cli': { s: 10, waits: true },
  'mask/false-positives': { s: 10, waits: false },
  'faults/lock-race': { s: 9, waits: false },
  'mask/fp-kinds': { s: 8, waits: false },
  'docs/sending-examples': { s: 8, waits: false },
  'ledger/pg-store': { s: 8, waits: true },
  'send/body-reuse': { s: 8, waits: true },
  'backfill/work-cli': { s: 6, waits: false },
  'simulator/tickets': { s: 6, waits: true },
  'send/progress': { s: 6, waits: true },
  'faults/leak-corpus': { s: 6, waits: false },
  'faults/drain': { s: 6, waits: false },
  'backfill/cut': { s: 5, waits: false },
  'faults/outage': { s: 5, waits: true },
  'read/split': { s: 5, waits: false },
  'send/cut-short': { s: 5, waits: false },
  'faults/unavailable': { s: 4, waits: true },
  'ledger/upgrade-cli': { s: 4, waits: true },
  'commands/webhook': { s: 4, waits: true },
  'metrics/metrics': { s: 3, waits: true },
};

/** Files that mostly wait running at once, at most, in the model. */
const WAITING_AT_ONCE = 2;

export interface Job<T> {
  item: T;
  /** How long it lasts, in seconds (the model's). */
  s: number;
  waits: boolean;
}

/**
 * The order in which `workers` workers, each taking the next job when it is free, keep at most WAITING_AT_ONCE jobs
 * that wait running together (in the model); the jobs of each kind keep their order.
 * @example schedule([{ item: 'a', s: 40, waits: true }, { item: 'b', s: 5, waits: false }], 4)
 */
export function schedule<T>(jobs: Job<T>[], workers: number): T[] {
  const waiting = jobs.filter((j) => j.waits);
  const others = jobs.filter((j) => !j.waits);
  const freeAt: number[] = new Array(Math.max(1, workers)).fill(0);
  const waitingEnds: number[] = [];
  const order: T[] = [];
  while (waiting.length + others.length > 0) {
    const now = Math.min(...freeAt);
    const running = waitingEnds.filter((end) => end > now).length;
    const takeWaiting = waiting.length > 0 && (running < WAITING_AT_ONCE || others.length === 0);
    const job = (takeWaiting ? waiting.shift() : others.shift()) as Job<T>;
    const worker = freeAt.indexOf(now);
    freeAt[worker] = now + job.s;
    if (job.waits) waitingEnds.push(now + job.s);
    order.push(job.item);
  }
  return order;
}

export default class WaitingAndWorking extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    // vitest's order (longest last time first; on a fresh clone, largest first), which equal times keep.
    const sorted = await super.sort(files);
    const jobs = sorted.map((spec): Job<TestSpecification> => {
      const name = relative(join(ROOT, 'test'), spec.moduleId).replace(/\.test\.ts$/, '');
      const timed = this.ctx.cache.getTestSpecificationResult(spec)?.duration;
      return {
        item: spec,
        s: LONG[name]?.s ?? (timed ? timed / 1000 : 1),
        waits: LONG[name]?.waits ?? false,
      };
    });
    // Array.prototype.sort is stable.
    return schedule(
      jobs.sort((a, b) => b.s - a.s),
      this.ctx.config.maxWorkers,
    );
  }
}
