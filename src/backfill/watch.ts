// One claimed partition's watch: its progress written every progressMs, which is how a worker finds out that
// another one has taken the partition over (this worker's lease had run out); and the gate each batch passes.
import type { ClaimedPartition } from '../ledger/postgres/backfill/partitions.ts';
import { reportProgress } from '../ledger/postgres/backfill/partitions.ts';
import type { PgSession } from '../ledger/postgres/session.ts';
import type { Logger } from '../log.ts';
import type { Counters } from '../record/counters.ts';

/** Where a partition's log lines say they are. */
export interface PartitionWhere {
  partitionNo: number;
  source: string;
  start: number;
  end: number;
}

/**
 * Watches one partition while it is worked: `stop` aborts on the worker's signal or when the partition is lost;
 * `mayPost` answers before each batch (no batch leaves on claims this worker may no longer hold: after a lapsed
 * lease, not until the partition is known to be still this worker's). `close()` when the partition is finished.
 * @example const w = new PartitionWatch({ session, partition: p, counters: c, where, logger, progressMs: 5000 }); … w.close()
 */
export class PartitionWatch {
  /** Aborted (reason: the signal's, or 'partition lost') when the partition's chain must stop. */
  readonly stop = new AbortController();
  /** Another worker holds the partition now. */
  lost = false;
  /** Bytes of the partition read so far (the progress written). */
  bytes = 0;
  private readonly o: WatchOptions;
  private checking: Promise<void> | null = null;
  /** Closed: a write still under way says nothing more (the run may have logged its last line, its pool ended). */
  private closed = false;
  private lapseCheck: Promise<void> | null = null;
  private readonly timer: ReturnType<typeof setInterval>;
  private readonly onSignal = () => this.stop.abort(this.o.signal?.reason);

  constructor(o: WatchOptions) {
    this.o = o;
    o.signal?.addEventListener('abort', this.onSignal, { once: true });
    if (o.signal?.aborted) this.onSignal();
    this.timer = setInterval(() => void this.check(), o.progressMs);
  }

  /** The worker's lease lapsed: a fresh check, after any already under way (it may have been asked before another
   *  worker took over). */
  lapsed(): void {
    this.lapseCheck = (this.checking ?? Promise.resolve()).then(() =>
      this.lost ? undefined : this.checkNow(),
    );
  }

  /** Before each batch: whether it may leave (the session's lease still held, the partition still this worker's). */
  async mayPost(): Promise<boolean> {
    await this.o.session.stillHeld();
    if (this.lapseCheck) await this.lapseCheck;
    return !this.lost;
  }

  close(): void {
    this.closed = true;
    clearInterval(this.timer);
    this.o.signal?.removeEventListener('abort', this.onSignal);
  }

  /** Write the progress now, unless a write is under way (then that one's answer is this one's). */
  private check(): Promise<void> {
    if (this.lost) return Promise.resolve();
    this.checking ??= this.checkNow().finally(() => {
      this.checking = null;
    });
    return this.checking;
  }

  private async checkNow(): Promise<void> {
    const { session: s, partition: p, counters: c, logger: log } = this.o;
    const held = await reportProgress(s, p.partitionNo, this.bytes, c, this.o.rejectsThrough?.()).catch(
      (err: unknown) => {
        if (this.closed) return true;
        log.warn(
          { event: 'backfill.progress.failed', error: s.db.fail('LEDGER_WRITE', 'progress', err).message },
          'could not report progress',
        );
        return true;
      },
    );
    if (!held && !this.lost && !this.closed) {
      await leaseLapseSaid(s);
      if (this.lost || this.closed) return;
      this.lost = true;
      log.warn(
        { event: 'backfill.partition.lost', ...this.o.where },
        'another worker took this partition (this worker’s lease had run out); stopping it here',
      );
      this.stop.abort('partition lost');
    }
  }
}

/**
 * A partition taken over means this worker's lease ran out. The session's own check (`stillHeld`: a heartbeat when
 * the last renewal is older than the lease) says so (`ledger.lease.lapsed`, once per lapse) and renews the lease for
 * the partitions still to claim, before the loss is logged: the heartbeat's timer may not have fired yet when the
 * loss is found (both are due when a paused worker wakes). A failure is the timer's to report.
 */
export async function leaseLapseSaid(s: PgSession): Promise<void> {
  await s.stillHeld().catch(() => false);
}

export interface WatchOptions {
  session: PgSession;
  partition: ClaimedPartition;
  /** The partition's counters (written with the progress). */
  counters: Counters;
  where: PartitionWhere;
  logger: Logger;
  progressMs: number;
  /** The worker's stop signal. */
  signal?: AbortSignal;
  /** The last line of the partition whose reject is in a rejects file (written with the progress). */
  rejectsThrough?: () => number;
}
