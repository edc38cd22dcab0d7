// The LedgerStore on PostgreSQL, shared by every host of a run. admit() claims a group of transaction ids for this
// worker in one statement (insert, or take over a failed id or one whose claimer's lease ran out; acked ids and
// live claims of others are skipped); record() commits concurrent batch outcomes together, one statement per group.
// Resume is a lookup in the database: nothing is loaded at start, so memory stays flat at any ledger size.
import type { BatchItem } from '../../batch/batcher.ts';
import { SvcIngestError } from '../../errors.ts';
import type { PgLedgerRef } from '../ref.ts';
import type { Admission, LedgerStore, OpenLedgerOptions, RecordedOutcome } from '../store.ts';
import { CoalescedAdmits } from './coalesced-admits.ts';
import type { PgDb } from './db.ts';
import { FIRST_DESTINATION, runDestination } from './destinations.ts';
import { claimsTakenOver, HeldClaims } from './held-claims.ts';
import { OLDER_WORKERS_SQL } from './identity.ts';
import { connectLedgerDb, openPgSession, type PgSession, type PgSessionOptions } from './session.ts';
import {
  ADMIT_SQL,
  CATCH_UP_SQL,
  CLAIM_SQL,
  LOOKUP_SQL,
  RECORD_SQL,
  RELEASE_SQL,
  recordParams,
} from './store-sql.ts';

export { ADMIT_SQL, CLAIM_SQL, RECORD_SQL } from './store-sql.ts';

export interface PgLedgerStoreOptions
  extends OpenLedgerOptions,
    Pick<PgSessionOptions, 'heartbeatMs' | 'onLeaseLapsed'> {
  /** Claim under an existing worker session (backfill work: the worker that holds the partition); else one is opened. */
  session?: PgSession;
}

/** Round trips and work done, for the figures (`bench`) and the tests. */
export interface PgStoreStats {
  admits: number;
  admitTrips: number;
  /** Claims undone by an id another worker inserted meanwhile, and made again through ON CONFLICT. */
  claimRetries: number;
  outcomes: number;
  commits: number;
  recordTrips: number;
  heartbeatTrips: number;
}

export interface PgLedgerStore extends LedgerStore {
  /** Write mode: the claiming worker (undefined in read mode). */
  readonly session: PgSession | undefined;
  stats(): PgStoreStats;
}

/**
 * Batches the chain puts in a group it hands to admit(): one claim statement for the ids of several batches (admits
 * coalesce beyond that while a statement is under way). Claims are taken a few batches before they are sent, which
 * changes no bound: a claim never sent is no duplicate, and a stop records the batches of admitted groups not sent.
 */
const ADMIT_BATCHES = 4;

/** SQLSTATE of a plain INSERT that met a row another transaction inserted. */
const UNIQUE_VIOLATION = '23505';

/** Outcomes committed together at most (a group holds at most this many batches; more wait for the next). */
const MAX_GROUP = 64;

interface Pending {
  outcome: RecordedOutcome;
  resolve: () => void;
  reject: (err: Error) => void;
}

/** What the store's steps share: the database, this worker, and the state of its claims and outcomes. */
interface StoreCtx {
  o: PgLedgerStoreOptions;
  db: PgDb;
  write: boolean;
  session: PgSession | undefined;
  /** The store opened the session (and closes it); backfill work passes its own. */
  ownSession: boolean;
  hasSchema: boolean;
  workerNo: number;
  destinationNo: number;
  /** The server's start when the store opened (write mode): outcomes go row by row once it is another one. */
  serverStart: string | null;
  held: HeldClaims;
  s: { admits: number; outcomes: number; commits: number; claimRetries: number };
  /** A commit under way (a claim check waits for it) and a claim check under way (commits wait for it). */
  committing: Promise<void> | null;
  checking: Promise<void> | null;
  closing: Promise<void> | undefined;
}

/**
 * Open the PostgreSQL ledger store. Write mode registers a worker (or uses `o.session`), migrating the schema on
 * first use; read mode (dry run) only looks up and writes nothing, not even the schema.
 * @example const store = await openPgLedgerStore(ref, { mode: 'write', resume: true, runId, logger })
 */
export async function openPgLedgerStore(ref: PgLedgerRef, o: PgLedgerStoreOptions): Promise<PgLedgerStore> {
  const c = await connectStore(ref, o);
  const { db, session } = c;
  // Nothing is loaded: the store is ready as soon as it is connected (the figures time start-up to this line).
  o.logger.info(
    { event: 'ledger.pg.opened', ledger: db.location, mode: o.mode, workerNo: c.workerNo },
    'ledger database connected; resume is a lookup per group of records',
  );
  const admit = admitter(c);
  const rec = recorder(c);
  return {
    location: db.location,
    badLines: 0,
    admitBatches: ADMIT_BATCHES,
    session,
    claimsHeld: claimsHeldOf(c),
    admit,
    record: rec.record,
    stats: () => ({
      admits: c.s.admits,
      admitTrips: db.trips.admit,
      claimRetries: c.s.claimRetries,
      outcomes: c.s.outcomes,
      commits: c.s.commits,
      recordTrips: db.trips.record,
      heartbeatTrips: db.trips.heartbeat,
    }),
    close() {
      c.closing ??= closeStore(c, rec);
      return c.closing;
    },
  };
}

/** Connects (write: as a registered worker), finds the run's destination and the server's start. */
async function connectStore(ref: PgLedgerRef, o: PgLedgerStoreOptions): Promise<StoreCtx> {
  const write = o.mode === 'write';
  let session: PgSession | undefined;
  let db: PgDb;
  let hasSchema = true;
  const ownSession = write && o.session === undefined;
  if (write) {
    session = o.session ?? (await openPgSession(ref, o));
    db = session.db;
  } else {
    ({ db, hasSchema } = await connectLedgerDb(ref, { logger: o.logger, signal: o.signal, write: false }));
  }
  // A dry run looks its destination up (refused when new, unless asked for; nothing written).
  let destinationNo = session?.destinationNo ?? FIRST_DESTINATION;
  if (!write && hasSchema) destinationNo = await runDestination(db, o, false);
  // The server's start: a claim commits without a flush, so a claim made before the server restarted (or failed
  // over) may be gone while its batch was sent; outcomes are recorded row by row once the server is another one.
  let serverStart: string | null = null;
  if (write) {
    try {
      const r = await db.query<{ t: string }>('other', 'SELECT pg_postmaster_start_time()::text AS t');
      serverStart = r.rows[0]?.t ?? null;
    } catch (err) {
      if (ownSession) await session?.close().catch(() => {});
      throw db.fail('LEDGER_WRITE', 'cannot read the server start of', err);
    }
  }
  return {
    o,
    db,
    write,
    session,
    ownSession,
    hasSchema,
    workerNo: session?.workerNo ?? 0,
    destinationNo,
    serverStart,
    held: new HeldClaims(),
    s: { admits: 0, outcomes: 0, commits: 0, claimRetries: 0 },
    committing: null,
    checking: null,
    closing: undefined,
  };
}

/**
 * Whether this worker's claims are still its own. After a lapsed lease the claims held are checked in the database
 * (no commit starts meanwhile: a recorded outcome clears its claims too); any taken over stops the run's sending.
 */
function claimsHeldOf(c: StoreCtx): () => Promise<boolean> {
  const { db, o, held } = c;
  let checkedLapses = 0;
  let takenOver = 0;
  const checkClaims = async (by: PgSession, lapses: number): Promise<void> => {
    await c.committing?.catch(() => {});
    const ids = held.ids();
    takenOver = await claimsTakenOver(db, ids, c.destinationNo, c.workerNo);
    checkedLapses = lapses;
    if (takenOver > 0)
      o.logger.warn(
        { event: 'ledger.claims.takenOver', workerId: by.workerId, claims: ids.length, takenOver },
        `${takenOver} of this worker’s ${ids.length} claims were taken over by another worker while its lease had run out`,
      );
    else
      o.logger.info(
        { event: 'ledger.claims.kept', workerId: by.workerId, claims: ids.length },
        'no other worker took this worker’s claims while its lease had run out; going on',
      );
  };
  return async () => {
    const session = c.session;
    if (session === undefined) return true;
    await session.stillHeld();
    if (takenOver === 0 && session.lapses > checkedLapses) {
      c.checking ??= checkClaims(session, session.lapses).finally(() => {
        c.checking = null;
      });
      await c.checking;
    }
    return takenOver === 0;
  };
}

/** admit(): write mode claims the ids (coalesced, one statement per group of batches); read mode looks them up. */
function admitter(c: StoreCtx): LedgerStore['admit'] {
  const { db, o, held } = c;
  /** One claim statement for the ids of several groups: each id claimed or skipped, as for each group alone. */
  const admitWriteNow = async (ids: string[]): Promise<Map<string, boolean>> => {
    const params = [ids, c.workerNo, o.resume, c.destinationNo];
    type Row = { id: string | null; acked: boolean | null; claim: string | null };
    let r: { rows: Row[] };
    try {
      r = await db.query<Row>('admit', CLAIM_SQL, params, 'svc_claim');
    } catch (err) {
      // Another worker inserted one of these ids since the statement began: claim them the other way.
      if ((err as { code?: unknown }).code !== UNIQUE_VIOLATION) throw err;
      c.s.claimRetries++;
      r = await db.query<Row>('admit', ADMIT_SQL, params, 'svc_admit');
    }
    const skip = new Map<string, boolean>();
    let claim = 0;
    for (const row of r.rows) {
      if (row.id === null) claim = Number(row.claim);
      else skip.set(row.id, row.acked === true);
    }
    held.add(
      ids.filter((id) => !skip.has(id)),
      claim,
    );
    return skip;
  };
  // Admits that arrive while one is under way (the chain admits up to LOOKAHEAD groups ahead) wait and go
  // together in the next statement: one round trip per group of batches.
  const admits = new CoalescedAdmits(admitWriteNow);
  const admitRead = async (items: readonly BatchItem[]): Promise<Map<string, boolean>> => {
    const skip = new Map<string, boolean>();
    if (!c.hasSchema) return skip;
    const r = await db.query<{ id: string; acked: boolean; live: boolean }>(
      'admit',
      LOOKUP_SQL,
      [items.map((i) => i.id), o.resume, c.destinationNo],
      'svc_lookup',
    );
    for (const row of r.rows) if (row.acked || row.live) skip.set(row.id, row.acked);
    return skip;
  };
  return async (items) => {
    if (c.closing) throw new SvcIngestError('LEDGER_READ', `the ledger ${db.location} is closed`);
    if (items.length === 0) return { send: [], skipped: [] };
    c.s.admits++;
    let skip: Map<string, boolean>;
    try {
      skip = c.write ? await admits.admit(items) : await admitRead(items);
    } catch (err) {
      throw db.fail(c.write ? 'LEDGER_WRITE' : 'LEDGER_READ', 'cannot claim transactions in', err);
    }
    const out: Admission = { send: [], skipped: [] };
    for (const item of items) {
      const acked = skip.get(item.id);
      if (acked === undefined) out.send.push(item);
      else out.skipped.push({ item, reason: acked ? 'acked' : 'elsewhere' });
    }
    return out;
  };
}

/** What the recorder gives the store: record(), and for close() what is still to settle. */
interface Recorder {
  record: LedgerStore['record'];
  /** Settles once every outcome queued is committed or refused. */
  drained(): Promise<void>;
  /** A commit failed: every later outcome is refused. */
  broken(): boolean;
  /** Acknowledgements recorded per batch row alone (a worker of an earlier version needs them in rows). */
  perBatch: Set<string>;
  catchUp(): Promise<void>;
}

/** record(): outcomes queued and committed together, one statement per group of at most MAX_GROUP. */
function recorder(c: StoreCtx): Recorder {
  const { db, o, held, session } = c;
  const queue: Pending[] = [];
  let draining: Promise<void> | null = null;
  let broken: SvcIngestError | undefined;
  // The runs of outcomes recorded through their batch row alone while no older worker was seen (one seen later
  // needs them in rows: CATCH_UP_SQL).
  const perBatch = new Set<string>();
  const catchUp = async (): Promise<void> => {
    const r = await db.query('other', CATCH_UP_SQL, [c.workerNo, [...perBatch], c.destinationNo]);
    perBatch.clear();
    o.logger.info(
      { event: 'ledger.pg.olderWorkers.caughtUp', rows: r.rowCount ?? 0 },
      'a worker of an earlier svc-ingest registered after this run started: the acknowledgements this run recorded per batch are now in their rows too',
    );
  };
  const commit = async (group: Pending[]): Promise<void> => {
    const older = session?.olderWorkers ?? false;
    if (older && perBatch.size > 0) await catchUp();
    else if (!older) for (const p of group) perBatch.add(p.outcome.runId);
    const outcomes = group.map((p) => p.outcome);
    const params = recordParams(outcomes, held, c.workerNo, c.destinationNo, c.serverStart, older);
    await db.query('record', RECORD_SQL, params, 'svc_record');
    c.s.commits++;
  };
  const drain = async (): Promise<void> => {
    while (queue.length > 0) {
      while (c.checking) await c.checking.catch(() => {});
      const group = queue.splice(0, MAX_GROUP);
      if (broken) {
        for (const p of group) p.reject(broken);
        continue;
      }
      try {
        c.committing = commit(group).then(() => {
          for (const p of group) held.remove(p.outcome.items.map((i) => i.id));
        });
        await c.committing;
        c.s.outcomes += group.length;
        for (const p of group) p.resolve();
      } catch (err) {
        // Fatal for the run: this and every later outcome is refused (the chain stops sending at once).
        broken = db.fail('LEDGER_WRITE', 'cannot record batch outcomes in', err);
        for (const p of group) p.reject(broken);
      }
    }
    draining = null;
  };
  const record = (outcome: RecordedOutcome): Promise<void> => {
    if (!c.write)
      return Promise.reject(new SvcIngestError('LEDGER_WRITE', 'a read-only ledger records nothing'));
    if (c.closing)
      return Promise.reject(new SvcIngestError('LEDGER_WRITE', `the ledger ${db.location} is closed`));
    if (broken) return Promise.reject(broken);
    return new Promise<void>((resolve, reject) => {
      queue.push({ outcome, resolve, reject });
      draining ??= drain();
    });
  };
  return {
    record,
    drained: async () => draining ?? undefined,
    broken: () => broken !== undefined,
    perBatch,
    catchUp,
  };
}

/** Waits for the outcomes in flight, then (write mode) catches up for older workers, releases claims, ends the lease. */
async function closeStore(c: StoreCtx, rec: Recorder): Promise<void> {
  const { db, o } = c;
  await rec.drained();
  // Round trips by purpose: admit and record are the ones a batch costs (bench: at most 2 per batch).
  o.logger.info(
    {
      event: 'ledger.pg.closed',
      ledger: db.location,
      trips: { ...db.trips },
      admits: c.s.admits,
      claimRetries: c.s.claimRetries,
      outcomes: c.s.outcomes,
      commits: c.s.commits,
    },
    'ledger database closed',
  );
  if (!c.write) {
    await db.close();
    return;
  }
  try {
    // The end of this worker's lease lets an older worker take its rows: asked once more, for one that
    // registered since the last heartbeat.
    if (rec.perBatch.size > 0 && !rec.broken()) {
      const r = await db.query<{ older: boolean }>('other', `SELECT ${OLDER_WORKERS_SQL} AS older`);
      if (r.rows[0]?.older !== false) await rec.catchUp();
    }
  } catch (err) {
    o.logger.warn(
      {
        event: 'ledger.pg.catchUp',
        error: db.fail('LEDGER_WRITE', 'recording acknowledgements in', err).message,
      },
      'could not write this run’s acknowledgements into their rows for a worker of an earlier svc-ingest',
    );
  }
  try {
    // Claims not recorded (read but never sent: interrupted, or the run stopped) are free again at once.
    const ids = c.held.ids();
    if (ids.length > 0) await db.query('other', RELEASE_SQL, [c.workerNo, ids, c.destinationNo]);
  } catch (err) {
    o.logger.warn(
      { event: 'ledger.pg.release', error: db.fail('LEDGER_WRITE', 'releasing claims in', err).message },
      'could not release this worker’s claims; they expire with its lease',
    );
  }
  if (c.ownSession) await c.session?.close();
}
