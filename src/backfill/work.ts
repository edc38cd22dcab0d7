// `backfill work`: one worker of a backfill, on any host. It claims the next partition from the shared PostgreSQL
// ledger, checks the file and the profile are the ones planned, sends the partition through the normal chain
// (readRange → prepare → dedupe → batch → sink → recorder, the store claiming each id under this worker's lease),
// reports progress, marks it done, and claims the next. With nothing left to claim while other live workers still
// hold partitions it waits (one of them may die: its partition is claimed again after its lease) and ends when all
// are done. A stop (signal, outage, reject cap) gives the partition back; its unsent claims are released.
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { gatePost } from '../chain/claims.ts';
import { logRunStart } from '../chain/notices.ts';
import type { BatchConfig, DispatchSettings } from '../chain/options.ts';
import type { ChainRunEnd } from '../chain/run.ts';
import { runChainSettled, settlePollMs } from '../chain/settle.ts';
import { SvcIngestError } from '../errors.ts';
import { cliIo } from '../io.ts';
import { leaseWaits } from '../ledger/connection.ts';
import {
  type ClaimedPartition,
  claimPartition,
  completePartition,
  openPartitions,
  plannedPaths,
  releasePartition,
  reopenFailed,
} from '../ledger/postgres/backfill/partitions.ts';
import { openPgSession, type PgSession } from '../ledger/postgres/session.ts';
import { openPgLedgerStore, type PgLedgerStore } from '../ledger/postgres/store.ts';
import type { PgLedgerRef } from '../ledger/ref.ts';
import type { Logger } from '../log.ts';
import { prepareRecords } from '../prepare/prepare.ts';
import { readRange } from '../read/range.ts';
import {
  type Counters,
  newCounters,
  type RunProgress,
  type RunSummary,
  summarize,
} from '../record/counters.ts';
import type { RejectCaps } from '../record/rejecter.ts';
import { nullRejectsWriter, openRejectsWriter, type RejectsWriter } from '../record/rejects.ts';
import { sleep } from '../sleep.ts';
import { checkInput, profiles } from './partition-input.ts';
import { partitionRejects } from './partition-rejects.ts';
import { leaseLapseSaid, PartitionWatch, type PartitionWhere } from './watch.ts';

export interface WorkOptions {
  /** The shared ledger, with its connection settings (the lease among them). */
  ledger: PgLedgerRef;
  /** This worker's name (default host:pid:runId); two live processes must never share one. */
  workerId?: string;
  batching: BatchConfig;
  dispatch: DispatchSettings;
  /** Checks that the service answers, before any partition is claimed. */
  preflight?: () => Promise<void>;
  /** This worker's rejects file (cli/common.ts rejectsFileOf). */
  rejectsFile: string;
  /** The reject caps (a slice of the configuration's send.*). */
  caps: RejectCaps;
  resume: boolean;
  /** First put every done partition that has failed records back to pending (read again, failed ones resent). */
  retryFailed?: boolean;
  /** Where this worker sends, and whether it may be new to the ledger: it claims only partitions planned for it. */
  destination?: string;
  newDestination?: boolean;
  logger: Logger;
  /** Aborted (reason: the signal's name) when the worker must stop. */
  signal?: AbortSignal;
  /** How often a partition's progress is written (default a third of the lease, at most 5 s). */
  progressMs?: number;
  /** How long to wait before looking again while live workers hold every open partition (default: progressMs). */
  pollMs?: number;
}

/** What one worker did: its records over every partition it worked on, and the partitions. */
export interface WorkSummary extends RunSummary {
  workerId: string;
  /** done: completed by this worker; released: given back on a stop; lost: taken by another worker while this
   *  one's lease had run out; takenOver: claimed from a worker whose lease had run out. */
  partitions: { done: number; released: number; lost: number; takenOver: number };
}

export interface WorkHandle {
  progress(): RunProgress;
  done: Promise<WorkSummary>;
}

/** What the progress line reads besides the finished partitions' counters. */
interface Live {
  current: Counters | null;
  inFlight: () => number;
  bytes: number;
  parts: WorkSummary['partitions'];
}

type Outcome = 'done' | 'lost' | 'stopped';

const COUNTER_KEYS = Object.keys(newCounters()) as Array<keyof Counters>;

function addInto(total: Counters, c: Counters): void {
  for (const k of COUNTER_KEYS) total[k] += c[k];
}

/**
 * Start a worker.
 * @example const w = startWork({ ledger: ref, batching: { batchSize: 50 }, dispatch, rejectsFile, resume: true, logger }); await w.done
 */
export function startWork(o: WorkOptions): WorkHandle {
  const totals = newCounters();
  const parts = { done: 0, released: 0, lost: 0, takenOver: 0 };
  const live: Live = { current: null, inFlight: () => 0, bytes: 0, parts };
  const done = runWork(o, totals, live);
  const progress = (): RunProgress => {
    const sum = { ...totals };
    if (live.current) addInto(sum, live.current);
    return {
      ...sum,
      inFlight: live.inFlight(),
      bytesRead: live.bytes,
      bytesTotal: null,
      partitions: { ...parts },
    };
  };
  return { progress, done };
}

/** How long a backfill statement may take: past the connection's wait a database error stops the worker with one
 *  LEDGER_WRITE line naming the ledger, as the store's do (not an "unexpected error"). */
type Coordinate = <T>(doing: string, op: Promise<T>) => Promise<T>;

/**
 * One worker's run, top to bottom: open the session, check the backfill and open the rejects file (`open`), claim
 * and work partitions until none is left or a stop (`claimUntilDone`), close, sum up.
 */
async function runWork(o: WorkOptions, totals: Counters, live: Live): Promise<WorkSummary> {
  const started = performance.now();
  const runId = randomBytes(4).toString('hex');
  let run: WorkRun | undefined;
  const session = await openPgSession(o.ledger, {
    runId,
    workerId: o.workerId,
    destination: o.destination,
    newDestination: o.newDestination,
    logger: o.logger,
    onLeaseLapsed: () => run?.leaseLapsed(),
  });
  run = new WorkRun(o, runId, session, totals, live);
  try {
    await run.open();
    await run.claimUntilDone();
  } finally {
    await run.close();
  }
  return run.summary(performance.now() - started);
}

/** One worker's state over its run: the session, store and rejects file, and what its partitions came to. */
class WorkRun {
  private readonly o: WorkOptions;
  private readonly runId: string;
  private readonly session: PgSession;
  private readonly totals: Counters;
  private readonly live: Live;
  private readonly log: Logger;
  private readonly progressMs: number;
  private readonly profileFor = profiles();
  private readonly coordinate: Coordinate;
  /** The dispatch, each batch first asking the partition being worked (see PartitionWatch.mayPost). */
  private readonly gated: DispatchSettings;
  /** The partition being worked (its watch), for the lease-lapse callback and the dispatch gate. */
  private watch: PartitionWatch | null = null;
  private store: PgLedgerStore | undefined;
  private rejects: RejectsWriter = nullRejectsWriter();
  /** The rejects file, resolved. */
  private readonly rejectsFile: string;
  private readonly parts: Live['parts'];
  private end: Omit<ChainRunEnd, 'interrupted'> & { interrupted: string | null } = {
    interrupted: null,
    outage: false,
    tooManyRejects: null,
  };

  constructor(o: WorkOptions, runId: string, session: PgSession, totals: Counters, live: Live) {
    this.o = o;
    this.runId = runId;
    this.session = session;
    this.totals = totals;
    this.live = live;
    this.parts = live.parts;
    this.log = o.logger;
    this.progressMs = o.progressMs ?? leaseWaits(o.ledger.connection).progressMs;
    this.rejectsFile = resolve(o.rejectsFile);
    this.coordinate = (doing, op) =>
      op.catch((err: unknown) => {
        throw err instanceof SvcIngestError ? err : session.db.fail('LEDGER_WRITE', doing, err);
      });
    // No batch leaves on claims this worker may no longer hold (it was paused past its lease): the bound on records
    // sent twice stays the requests that were already on the wire, at most concurrency x batch size.
    this.gated = gatePost(
      o.dispatch,
      () => this.watch?.mayPost() ?? Promise.resolve(true),
      () => new DOMException('the partition was taken over; not sent', 'AbortError'),
    );
  }

  /** The store, a backfill planned in it, the service answering, failed partitions reopened, the rejects file. */
  async open(): Promise<void> {
    const { o, session, log, coordinate } = this;
    const store = await openPgLedgerStore(o.ledger, {
      mode: 'write',
      resume: o.resume,
      runId: this.runId,
      logger: log,
      session,
    });
    this.store = store;
    logRunStart(log, this.runId, store.location, this.rejectsFile, false, o.ledger.from);
    if ((await coordinate('cannot read the backfill in', openPartitions(session.db))).total === 0)
      throw new SvcIngestError(
        'USAGE_INVALID',
        `no backfill planned in ${store.location}: run svc-ingest backfill plan first`,
      );
    await o.preflight?.();
    // The service answered and the worker's modules are loaded: from here its heap is held (src/runtime/heap-growth.ts).
    cliIo().holdHeap?.();
    if (o.retryFailed) {
      const n = await coordinate('cannot reopen partitions in', reopenFailed(session.db));
      log.info(
        { event: 'backfill.reopened', partitions: n },
        `${n} done partition(s) with failed records are pending again`,
      );
    }
    this.rejects = await openRejectsWriter(o.rejectsFile, {
      caps: o.caps,
      sources: await coordinate('cannot read the backfill in', plannedPaths(session.db)),
    });
  }

  /** Claim and work partitions until none is open, or a stop. While live workers hold every open partition, wait
   *  (one of them may die: its partition is claimed again after its lease). */
  async claimUntilDone(): Promise<void> {
    const { o, session, coordinate } = this;
    const pollMs = o.pollMs ?? this.progressMs;
    let waiting = false;
    while (!o.signal?.aborted) {
      const p = await coordinate('cannot claim a partition in', claimPartition(session));
      if (!p) {
        const open = await coordinate(
          'cannot read the backfill in',
          openPartitions(session.db, session.destinationNo),
        );
        if (open.open === 0) break;
        if (!waiting)
          this.log.info(
            { event: 'backfill.waiting' },
            'every open partition is held by a live worker; waiting (one whose worker dies is claimed again after its lease)',
          );
        waiting = true;
        // Not send/retried.ts: nothing failed; a poll at a fixed pace until a partition is free or a signal stops it.
        await sleep(pollMs, o.signal);
        continue;
      }
      waiting = false;
      if (p.takeover) this.parts.takenOver++;
      if ((await this.countedPartition(p)) === 'stopped') break;
    }
    // A signal between partitions or while waiting is an interruption too (exit 130/143), as during one.
    if (o.signal?.aborted && !this.end.interrupted)
      this.end = { ...this.end, interrupted: String(o.signal.reason ?? 'SIGTERM') };
  }

  /** The session's lease lapsed: the partition being worked is checked again before any batch leaves. */
  leaseLapsed(): void {
    this.watch?.lapsed();
  }

  async close(): Promise<void> {
    await this.rejects.close().catch((err: Error) => this.log.error({ event: 'rejects.close' }, err.message));
    await this.store?.close();
    await this.session.close();
  }

  summary(durationMs: number): WorkSummary {
    return {
      ...summarize(this.totals, {
        ...this.end,
        durationMs: Math.round(durationMs),
        dryRun: false,
        runId: this.runId,
        ledger: this.session.db.location,
        rejects: this.rejectsFile,
        ledgerBadLines: 0,
        emptyInputs: [],
      }),
      workerId: this.session.workerId,
      partitions: this.parts,
    };
  }

  /** One partition, its counters live in the progress line while it is worked and added to the totals after. */
  private async countedPartition(p: ClaimedPartition): Promise<Outcome> {
    const c = newCounters();
    this.live.current = c;
    try {
      return await this.workPartition(p, c);
    } finally {
      addInto(this.totals, c);
      this.live.current = null;
    }
  }

  /** One claimed partition through the chain: done, lost to another worker, or given back on a stop. */
  private async workPartition(p: ClaimedPartition, c: Counters): Promise<Outcome> {
    const where = { partitionNo: p.partitionNo, source: p.path, start: p.start, end: p.end };
    this.log.info(
      { event: 'backfill.partition.claimed', ...where, claims: p.claims, takeover: p.takeover },
      p.takeover
        ? 'partition taken over from a worker whose lease ran out; read again from its start'
        : 'partition claimed',
    );
    const rejects = partitionRejects(this.rejects, p.path, p.rejectsThrough);
    const watch = new PartitionWatch({
      session: this.session,
      partition: p,
      counters: c,
      where,
      logger: this.log,
      progressMs: this.progressMs,
      signal: this.o.signal,
      rejectsThrough: () => rejects.through(),
    });
    this.watch = watch;
    try {
      const r = await this.sendPartition(p, c, watch, rejects.writer);
      return await this.finishPartition(p, c, where, watch.lost ? 'lost' : r, rejects.through());
    } catch (err) {
      // The worker stops with this error; the partition is pending again for the others (when the database lets).
      await releasePartition(this.session, p.partitionNo).catch(() => {});
      throw err;
    } finally {
      watch.close();
      this.watch = null;
      this.live.inFlight = () => 0;
    }
  }

  /** The partition's bytes (the file checked, the profile loaded) through the send chain. */
  private async sendPartition(
    p: ClaimedPartition,
    c: Counters,
    watch: PartitionWatch,
    rejects: RejectsWriter,
  ): Promise<ChainRunEnd> {
    await checkInput(p);
    const profile = await this.profileFor(p);
    const onBytes = (n: number) => {
      watch.bytes += n;
      this.live.bytes += n;
    };
    const chunks = prepareRecords(readRange(p, { onBytes }), profile);
    return runChainSettled(
      {
        chunks,
        store: this.store as PgLedgerStore,
        runId: this.runId,
        batchPrefix: `${this.runId}-p${p.partitionNo}`,
        counters: c,
        rejects,
        caps: this.o.caps,
        batching: this.o.batching,
        dispatch: this.gated,
        profileName: profile.name,
        ownIds: profile.ownIds,
        logger: this.log,
        signal: watch.stop.signal,
        onSink: (sink) => {
          this.live.inFlight = () => sink.inFlight;
        },
      },
      { pollMs: settlePollMs(this.o.ledger) },
    );
  }

  /** After the chain: lost (another worker took it), given back (a stop), or marked done. */
  private async finishPartition(
    p: ClaimedPartition,
    c: Counters,
    where: PartitionWhere,
    r: ChainRunEnd | 'lost',
    rejectsThrough: number,
  ): Promise<Outcome> {
    const { session: s, coordinate, log } = this;
    if (r === 'lost') return this.lostPartition(c, where, null);
    if (r.interrupted || r.outage || r.tooManyRejects) {
      this.end = { ...this.end, ...r };
      if (await coordinate('cannot give a partition back in', releasePartition(s, p.partitionNo)))
        this.parts.released++;
      log.info({ event: 'backfill.partition.released', ...where }, 'partition given back unfinished');
      return 'stopped';
    }
    if (
      !(await coordinate(
        'cannot mark a partition done in',
        completePartition(s, p.partitionNo, c, rejectsThrough),
      ))
    ) {
      await leaseLapseSaid(s);
      return this.lostPartition(
        c,
        where,
        'another worker took this partition before it was done here (this worker’s lease had run out)',
      );
    }
    this.parts.done++;
    const { read, sent, skipped, failed, rejected } = c;
    log.info(
      { event: 'backfill.partition.done', ...where, read, sent, skipped, failed, rejected },
      'partition done',
    );
    return 'done';
  }

  /**
   * A partition lost to another worker is that worker's to finish: it reads it again from its start and sends
   * whatever was not acknowledged, so the records not acknowledged here (interrupted, or failed) are not this
   * worker's failures (they would make its exit status 3 for work another worker completes). They leave this
   * worker's counts as records handed over; what it acknowledged stays counted.
   */
  private lostPartition(c: Counters, where: PartitionWhere, warning: string | null): Outcome {
    this.parts.lost++;
    const handed = c.failed;
    if (handed > 0) {
      c.failed = 0;
      c.failedBatches = 0;
      c.read -= handed;
      this.log.info(
        { event: 'backfill.partition.handedOver', ...where, records: handed },
        `${handed} records not acknowledged here are left to the worker that took the partition`,
      );
    }
    if (warning) this.log.warn({ event: 'backfill.partition.lost', ...where }, warning);
    return 'lost';
  }
}
