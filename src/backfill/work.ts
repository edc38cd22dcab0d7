// `backfill work`: one worker of a backfill, on any host. It claims the next partition from the shared PostgreSQL
// ledger, checks the file and the profile are the ones planned, sends the partition through the normal chain
// (readRange → prepare → dedupe → batch → sink → recorder, the store claiming each id under this worker's lease),
// reports progress, marks it done, and claims the next. With nothing left to claim while other live workers still
// hold partitions it waits (one of them may die: its partition is claimed again after its lease) and ends when all
// are done. A stop (signal, outage, reject cap) gives the partition back; its unsent claims are released.
import { randomBytes } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { gatePost } from '../chain/claims.ts';
import { logRunStart } from '../chain/notices.ts';
import type { DispatchSettings } from '../chain/options.ts';
import type { ChainRunEnd } from '../chain/run.ts';
import { runChainSettled, settlePollMs, sleep } from '../chain/settle.ts';
import { SvcIngestError } from '../errors.ts';
import {
  type ClaimedPartition,
  changedInput,
  claimPartition,
  completePartition,
  openPartitions,
  plannedPaths,
  releasePartition,
  reopenFailed,
  reportProgress,
} from '../ledger/postgres/partitions.ts';
import { openPgSession, type PgSession } from '../ledger/postgres/session.ts';
import { openPgLedgerStore, type PgLedgerStore } from '../ledger/postgres/store.ts';
import type { Logger } from '../log.ts';
import { loadProfile } from '../map/profile.ts';
import type { CompiledProfile } from '../map/types.ts';
import { prepareRecords } from '../prepare/prepare.ts';
import { unreadable } from '../read/open.ts';
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
import { mappingOf } from './plan.ts';

export interface WorkOptions extends RejectCaps {
  /** postgres://… */
  url: string;
  passwordFile?: string;
  leaseMs: number;
  waitMs?: number;
  allowPlaintext?: boolean;
  /** This worker's name (default host:pid:runId); two live processes must never share one. */
  workerId?: string;
  batchSize: number;
  dispatch: DispatchSettings;
  /** Checks that the service answers, before any partition is claimed. */
  preflight?: () => Promise<void>;
  /** This worker's rejects file. */
  rejectsPath: string;
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
}

type Outcome = 'done' | 'lost' | 'stopped';

const COUNTER_KEYS = Object.keys(newCounters()) as Array<keyof Counters>;

function addInto(total: Counters, c: Counters): void {
  for (const k of COUNTER_KEYS) total[k] += c[k];
}

/**
 * Start a worker.
 * @example const w = startWork({ url, leaseMs: 30000, batchSize: 50, dispatch, rejectsPath, resume: true, logger }); await w.done
 */
export function startWork(o: WorkOptions): WorkHandle {
  const totals = newCounters();
  const live: Live = { current: null, inFlight: () => 0, bytes: 0 };
  const done = runWork(o, totals, live);
  const progress = (): RunProgress => {
    const sum = { ...totals };
    if (live.current) addInto(sum, live.current);
    return { ...sum, inFlight: live.inFlight(), bytesRead: live.bytes, bytesTotal: null };
  };
  return { progress, done };
}

/** The file must be the one planned (same size and mtime), readable here at the same path. */
async function checkInput(p: ClaimedPartition): Promise<void> {
  let st: Awaited<ReturnType<typeof stat>>;
  try {
    st = await stat(p.path);
  } catch (err) {
    throw unreadable(p.path, err);
  }
  const now = { size: st.size, mtimeMs: Math.floor(st.mtimeMs) };
  if (now.size !== p.size || now.mtimeMs !== p.mtimeMs) throw changedInput(p.path, p, now);
}

/** Profiles by mapping, each loaded once and checked against the digest the planner recorded. */
function profiles(): (p: ClaimedPartition) => Promise<CompiledProfile> {
  const cache = new Map<string, Promise<CompiledProfile>>();
  const load = async (p: ClaimedPartition): Promise<CompiledProfile> => {
    if (p.mappingSha256 !== undefined) {
      const here = await mappingOf(p.mapping);
      if (here.sha256 !== p.mappingSha256)
        throw new SvcIngestError(
          'MAPPING_INVALID',
          `mapping ${p.mapping ?? 'canonical'} differs on this host from the one planned for ${p.path} ` +
            '(every worker must map alike: the same profile file)',
          { source: p.path },
        );
    }
    return loadProfile(p.mapping);
  };
  return (p) => {
    const key = `${p.mapping ?? ''}\n${p.mappingSha256 ?? ''}`;
    let got = cache.get(key);
    if (!got) {
      got = load(p);
      cache.set(key, got);
    }
    return got;
  };
}

async function runWork(o: WorkOptions, totals: Counters, live: Live): Promise<WorkSummary> {
  const started = performance.now();
  const runId = randomBytes(4).toString('hex');
  const log = o.logger;
  const stopRequested = () => (o.signal?.aborted ? String(o.signal.reason) : null);
  const progressMs = o.progressMs ?? Math.min(5000, Math.floor(o.leaseMs / 3));
  const pollMs = o.pollMs ?? progressMs;
  let onLapse: () => void = () => {};
  const profileFor = profiles();
  const session = await openPgSession(o.url, {
    runId,
    workerId: o.workerId,
    leaseMs: o.leaseMs,
    passwordFile: o.passwordFile,
    waitMs: o.waitMs,
    allowPlaintext: o.allowPlaintext,
    destination: o.destination,
    newDestination: o.newDestination,
    logger: log,
    onLeaseLapsed: () => onLapse(),
  });
  // No batch leaves on claims this worker may no longer hold (it was paused past its lease): the bound on records
  // sent twice stays the requests that were already on the wire, at most concurrency x batch size.
  let beforePost: () => Promise<boolean> = async () => true;
  const gated = gatePost(
    o.dispatch,
    () => beforePost(),
    () => new DOMException('the partition was taken over; not sent', 'AbortError'),
  );
  // The backfill's own statements (claims, partition states): past ledger.waitMs a database error stops the worker
  // with one LEDGER_WRITE line naming the ledger, as the store's do (not an "unexpected error").
  const coordinate = <T>(doing: string, op: Promise<T>): Promise<T> =>
    op.catch((err: unknown) => {
      throw err instanceof SvcIngestError ? err : session.db.fail('LEDGER_WRITE', doing, err);
    });
  let store: PgLedgerStore | undefined;
  let rejects: RejectsWriter = nullRejectsWriter();
  const parts = { done: 0, released: 0, lost: 0, takenOver: 0 };
  let end: Omit<ChainRunEnd, 'interrupted'> & { interrupted: string | null } = {
    interrupted: null,
    outage: false,
    tooManyRejects: null,
  };
  const rejectsPath = resolve(o.rejectsPath);
  try {
    store = await openPgLedgerStore(o.url, { mode: 'write', resume: o.resume, runId, logger: log, session });
    logRunStart(log, runId, store.location, rejectsPath, false);
    if ((await coordinate('cannot read the backfill in', openPartitions(session.db))).total === 0)
      throw new SvcIngestError(
        'USAGE_INVALID',
        `no backfill planned in ${store.location}: run svc-ingest backfill plan first`,
      );
    await o.preflight?.();
    if (o.retryFailed) {
      const n = await coordinate('cannot reopen partitions in', reopenFailed(session.db));
      log.info(
        { event: 'backfill.reopened', partitions: n },
        `${n} done partition(s) with failed records are pending again`,
      );
    }
    rejects = await openRejectsWriter(o.rejectsPath, {
      maxLines: o.maxRejects,
      maxBytes: o.maxRejectBytes,
      sources: await coordinate('cannot read the backfill in', plannedPaths(session.db)),
    });
    let waiting = false;
    while (!stopRequested()) {
      const p = await coordinate('cannot claim a partition in', claimPartition(session));
      if (!p) {
        const open = await coordinate(
          'cannot read the backfill in',
          openPartitions(session.db, session.destinationNo),
        );
        if (open.open === 0) break;
        if (!waiting)
          log.info(
            { event: 'backfill.waiting' },
            'every open partition is held by a live worker; waiting (one whose worker dies is claimed again after its lease)',
          );
        waiting = true;
        await sleep(pollMs, o.signal);
        continue;
      }
      waiting = false;
      if (p.takeover) parts.takenOver++;
      const c = newCounters();
      live.current = c;
      let outcome: Outcome;
      try {
        outcome = await workPartition(p, c);
      } finally {
        addInto(totals, c);
        live.current = null;
      }
      if (outcome === 'stopped') break;
    }
  } finally {
    await rejects.close().catch((err: Error) => log.error({ event: 'rejects.close' }, err.message));
    await store?.close();
    await session.close();
  }
  return {
    ...summarize(totals, {
      ...end,
      durationMs: Math.round(performance.now() - started),
      dryRun: false,
      runId,
      ledger: session.db.location,
      rejects: rejectsPath,
      ledgerBadLines: 0,
      emptyInputs: [],
    }),
    workerId: session.workerId,
    partitions: parts,
  };

  /**
   * A partition lost to another worker is that worker's to finish: it reads it again from its start and sends
   * whatever was not acknowledged, so the records not acknowledged here (interrupted, or failed) are not this
   * worker's failures (they would make its exit status 3 for work another worker completes). They leave this
   * worker's counts as records handed over; what it acknowledged stays counted.
   */
  function handOver(c: Counters, where: Record<string, unknown>): void {
    const handed = c.failed;
    if (handed === 0) return;
    c.failed = 0;
    c.failedBatches = 0;
    c.read -= handed;
    log.info(
      { event: 'backfill.partition.handedOver', ...where, records: handed },
      `${handed} records not acknowledged here are left to the worker that took the partition`,
    );
  }

  /** One claimed partition through the chain: done, lost to another worker, or given back on a stop. */
  async function workPartition(p: ClaimedPartition, c: Counters): Promise<Outcome> {
    const s = session as PgSession;
    const where = { partitionNo: p.partitionNo, source: p.path, start: p.start, end: p.end };
    log.info(
      { event: 'backfill.partition.claimed', ...where, claims: p.claims, takeover: p.takeover },
      p.takeover
        ? 'partition taken over from a worker whose lease ran out; read again from its start'
        : 'partition claimed',
    );
    // Stopped by the worker's signal, or when another worker has taken the partition (this one's lease had run out).
    const stop = new AbortController();
    const onSignal = () => stop.abort(o.signal?.reason);
    o.signal?.addEventListener('abort', onSignal, { once: true });
    if (o.signal?.aborted) onSignal();
    let lost = false;
    let bytes = 0;
    let checking: Promise<void> | null = null;
    const check = (): Promise<void> => {
      if (lost) return Promise.resolve();
      checking ??= checkNow().finally(() => {
        checking = null;
      });
      return checking;
    };
    const checkNow = async (): Promise<void> => {
      const held = await reportProgress(s, p.partitionNo, bytes, c).catch((err: unknown) => {
        log.warn(
          { event: 'backfill.progress.failed', error: s.db.fail('LEDGER_WRITE', 'progress', err).message },
          'could not report progress',
        );
        return true;
      });
      if (!held && !lost) {
        lost = true;
        log.warn(
          { event: 'backfill.partition.lost', ...where },
          'another worker took this partition (this worker’s lease had run out); stopping it here',
        );
        stop.abort('partition lost');
      }
    };
    const timer = setInterval(() => void check(), progressMs);
    // A lapsed lease: until the partition is known to be still this worker's, no batch leaves (see `gated`).
    let lapseCheck: Promise<void> | null = null;
    onLapse = () => {
      // A fresh check, after any already under way (it may have been asked before another worker took over).
      lapseCheck = (checking ?? Promise.resolve()).then(() => (lost ? undefined : checkNow()));
    };
    beforePost = async () => {
      await session.stillHeld();
      if (lapseCheck) await lapseCheck;
      return !lost;
    };
    try {
      await checkInput(p);
      const profile = await profileFor(p);
      const chunks = prepareRecords(
        readRange(p, {
          onBytes: (n) => {
            bytes += n;
            live.bytes += n;
          },
        }),
        profile,
      );
      const r = await runChainSettled(
        {
          chunks,
          store: store as PgLedgerStore,
          runId,
          batchPrefix: `${runId}-p${p.partitionNo}`,
          counters: c,
          rejects,
          caps: o,
          batchSize: o.batchSize,
          dispatch: gated,
          profileName: profile.name,
          ownIds: profile.ownIds,
          logger: log,
          signal: stop.signal,
          onSink: (sink) => {
            live.inFlight = () => sink.inFlight;
          },
        },
        { pollMs: settlePollMs(o.leaseMs) },
      );
      if (lost) {
        parts.lost++;
        handOver(c, where);
        return 'lost';
      }
      if (r.interrupted || r.outage || r.tooManyRejects) {
        end = { ...end, ...r };
        if (await coordinate('cannot give a partition back in', releasePartition(s, p.partitionNo)))
          parts.released++;
        log.info({ event: 'backfill.partition.released', ...where }, 'partition given back unfinished');
        return 'stopped';
      }
      if (!(await coordinate('cannot mark a partition done in', completePartition(s, p.partitionNo, c)))) {
        parts.lost++;
        handOver(c, where);
        log.warn(
          { event: 'backfill.partition.lost', ...where },
          'another worker took this partition before it was done here (this worker’s lease had run out)',
        );
        return 'lost';
      }
      parts.done++;
      log.info(
        {
          event: 'backfill.partition.done',
          ...where,
          read: c.read,
          sent: c.sent,
          skipped: c.skipped,
          failed: c.failed,
          rejected: c.rejected,
        },
        'partition done',
      );
      return 'done';
    } catch (err) {
      // The worker stops with this error; the partition is pending again for the others (when the database lets).
      await releasePartition(s, p.partitionNo).catch(() => {});
      throw err;
    } finally {
      clearInterval(timer);
      onLapse = () => {};
      beforePost = async () => true;
      o.signal?.removeEventListener('abort', onSignal);
      live.inFlight = () => 0;
    }
  }
}
