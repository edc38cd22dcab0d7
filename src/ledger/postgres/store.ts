// The LedgerStore on PostgreSQL, shared by every host of a run. admit() claims a group of transaction ids for this
// worker in one statement (insert, or take over a failed id or one whose claimer's lease ran out; acked ids and
// live claims of others are skipped); record() commits concurrent batch outcomes together, one statement per group.
// Resume is a lookup in the database: nothing is loaded at start, so memory stays flat at any ledger size.
import type { BatchItem } from '../../batch/batcher.ts';
import { SvcIngestError } from '../../errors.ts';
import type { Admission, LedgerStore, OpenLedgerOptions, RecordedOutcome } from '../store.ts';
import { ackedIdsOfClaims, ackedOf, ackSeqOf, liveClaimOf } from './acks.ts';
import { CoalescedAdmits } from './coalesced-admits.ts';
import type { PgDb } from './db.ts';
import { FIRST_DESTINATION, runDestination } from './destinations.ts';
import { claimsTakenOver, HeldClaims } from './held-claims.ts';
import { OLDER_WORKERS_SQL } from './identity.ts';
import { connectLedgerDb, openPgSession, type PgSession, type PgSessionOptions } from './session.ts';

export interface PgLedgerStoreOptions
  extends OpenLedgerOptions,
    Pick<
      PgSessionOptions,
      'leaseMs' | 'heartbeatMs' | 'passwordFile' | 'waitMs' | 'poolMax' | 'allowPlaintext' | 'onLeaseLapsed'
    > {
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

// The claim of an id that has a row: unless acked (resume on) or held by another live claim; RETURNING what it took.
// A claim taken again keeps the acknowledgement of the claim it replaces in the row (acked_seq), as the new claim's
// outcome will be the one read.
const TAKE_ROW = `ON CONFLICT (transaction_id, destination_no) DO UPDATE SET claim_worker = EXCLUDED.claim_worker,
    claim_no = EXCLUDED.claim_no, acked_seq = ${ackSeqOf('t')}, updated_at = now()
  WHERE (NOT $3::boolean OR NOT ${ackedOf('t')})
    AND (t.claim_worker IS NULL OR t.claim_worker = EXCLUDED.claim_worker OR NOT ${liveClaimOf('t')})
  RETURNING t.transaction_id`;

// The ids of a claim, each once, and the claim's number (one per statement, from batch_seq: the outcomes of these ids
// name it). A claim is committed without waiting for its WAL flush (synchronous_commit off for this transaction
// alone): the next recorded outcome's commit flushes it (WAL is written in order), and a claim lost with a crash of
// the server was a claim of ids in flight, the bound a worker's death already has (docs/postgres.md, "Claims without
// a flush").
const CLAIM_INPUT = `WITH input AS (SELECT DISTINCT id FROM unnest($1::text[]) AS u(id),
                 (SELECT set_config('synchronous_commit', 'off', true)) AS no_flush),
claim AS MATERIALIZED (SELECT nextval('svc_ingest.batch_seq') AS no),`;

// The rows answered: each id skipped (acked, or claimed elsewhere), and one row with the claim's number (id null).
const CLAIM_ANSWER = 'UNION ALL SELECT NULL, NULL, claim.no FROM claim';

/**
 * CTEs over a group's ids ($1): `old`, the rows they have for the destination (`dest`, a parameter); `acks`, those of
 * them acknowledged through their claims' outcomes, read at once for the group (ackedIdsOfClaims); and `known`, the
 * rows with whether each is acknowledged (`acked`), by its row or through its claim.
 */
const rowsAndAcks = (dest: string) => `old AS MATERIALIZED (
  SELECT t.transaction_id, t.acked_seq, t.claim_no, t.claim_worker FROM svc_ingest.transactions t
  WHERE t.transaction_id = ANY($1::text[]) AND t.destination_no = ${dest}
),
acks AS MATERIALIZED (${ackedIdsOfClaims('old', dest)}),
known AS MATERIALIZED (
  SELECT old.*, (old.acked_seq IS NOT NULL OR acks.id IS NOT NULL) AS acked
  FROM old LEFT JOIN acks ON acks.id = old.transaction_id
)`;

export const ADMIT_SQL = `
${CLAIM_INPUT}
claimed AS (
  INSERT INTO svc_ingest.transactions AS t (transaction_id, destination_no, claim_worker, claim_no, updated_at)
  SELECT id, $4, $2, claim.no, now() FROM input, claim ORDER BY id
  ${TAKE_ROW}
)
SELECT i.id, (${ackedOf('old')} AND $3::boolean) AS acked, NULL::bigint AS claim
FROM input i
LEFT JOIN claimed c ON c.transaction_id = i.id
LEFT JOIN svc_ingest.transactions old ON old.transaction_id = i.id AND old.destination_no = $4
WHERE c.transaction_id IS NULL
${CLAIM_ANSWER}`;

// The usual claim: ids that have no row yet are inserted by a plain INSERT (no speculative insertion, which costs the
// database about a third more per id: docs/performance.md), ids that have one go through ADMIT_SQL's ON CONFLICT in
// the same statement. Should another worker insert one of the new ids meanwhile, the plain INSERT fails
// (unique_violation, the whole statement undone) and the group is claimed again by ADMIT_SQL. Whether a row is
// acknowledged is read for the group at once (ackedIdsOfClaims); only rows not acknowledged are claimed again.
export const CLAIM_SQL = `
${CLAIM_INPUT}
${rowsAndAcks('$4')},
fresh AS (
  INSERT INTO svc_ingest.transactions (transaction_id, destination_no, claim_worker, claim_no, updated_at)
  SELECT id, $4, $2, claim.no, now() FROM input, claim
  WHERE NOT EXISTS (SELECT 1 FROM known WHERE known.transaction_id = input.id)
  ORDER BY id
),
claimed AS (
  INSERT INTO svc_ingest.transactions AS t (transaction_id, destination_no, claim_worker, claim_no, updated_at)
  SELECT id, $4, $2, claim.no, now() FROM input, claim
  WHERE EXISTS (SELECT 1 FROM known WHERE known.transaction_id = input.id AND NOT (known.acked AND $3::boolean))
  ORDER BY id
  ${TAKE_ROW}
)
SELECT known.transaction_id AS id, (known.acked AND $3::boolean) AS acked, NULL::bigint AS claim
FROM known LEFT JOIN claimed c ON c.transaction_id = known.transaction_id
WHERE c.transaction_id IS NULL
${CLAIM_ANSWER}`;

const LOOKUP_SQL = `
WITH ${rowsAndAcks('$3')}
SELECT known.transaction_id AS id, (known.acked AND $2::boolean) AS acked, ${liveClaimOf('known')} AS live
FROM known`;

// A group of outcomes, one row each in batches (their ids sliced out of $17 by ids_from..ids_to, the claims they were
// sent under out of $18): that row is the acknowledgement of its ids, no transaction row is written. Row by row, as
// before schema 7 (acked_seq set, the claim and its number cleared, a row inserted where there is none), only when
// the rows may not name this worker's claims or a worker may read them otherwise: an id the store holds no claim for
// or holds twice, or a worker of a version before schema 7 that may still be running ($25: it reads acknowledgements
// in rows alone, and takes a row's claim without renumbering it); a server started since the store opened ($26: a
// claim made before may be lost, its commit not flushed); a lease that has run out now or since the worker started
// (another worker may have taken a claim over). A row's acknowledgement through its claim's outcome is kept in
// acked_seq when its claim number is cleared.
export const RECORD_SQL = `
WITH o AS MATERIALIZED (
  SELECT nextval('svc_ingest.batch_seq') AS seq, u.*
  FROM unnest($1::int[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::int[], $8::int[],
              $9::text[], $10::text[], $11::bigint[], $12::bigint[], $13::int[], $14::int[], $15::int[], $16::int[])
    AS u(k, batch_id, run_id, status, request_id, client_request_id, attempts, http_status, error, source,
         first_line, last_line, ids_from, ids_to, claims_from, claims_to)
),
b AS (
  INSERT INTO svc_ingest.batches (seq, batch_id, run_id, worker_no, status, request_id, client_request_id, attempts,
    http_status, error, source, first_line, last_line, transaction_ids, destination_no, claim_nos)
  SELECT o.seq, o.batch_id, o.run_id, $19, o.status, o.request_id, o.client_request_id, o.attempts, o.http_status,
    o.error, o.source, o.first_line, o.last_line, ($17::text[])[o.ids_from:o.ids_to], $24,
    ($18::bigint[])[o.claims_from:o.claims_to]
  FROM o ORDER BY o.k
),
by_row AS MATERIALIZED (
  SELECT $25::boolean OR pg_postmaster_start_time() IS DISTINCT FROM $26::timestamptz
    OR coalesce((SELECT w.lapses > 0 OR w.lease_until <= now() FROM svc_ingest.workers w WHERE w.worker_no = $19),
                true) AS yes
),
ids AS MATERIALIZED (
  SELECT o.seq, o.status, u.id FROM o, by_row, unnest(($17::text[])[o.ids_from:o.ids_to]) AS u(id) WHERE by_row.yes
),
tx AS (
  INSERT INTO svc_ingest.transactions AS t (transaction_id, destination_no, acked_seq, claim_worker, updated_at)
  SELECT ids.id, $24, min(ids.seq) FILTER (WHERE ids.status = 'acked'), NULL, now()
  FROM ids GROUP BY ids.id ORDER BY ids.id
  ON CONFLICT (transaction_id, destination_no) DO UPDATE SET
    acked_seq = coalesce(${ackSeqOf('t')}, EXCLUDED.acked_seq),
    claim_worker = CASE WHEN t.claim_worker = $19 THEN NULL ELSE t.claim_worker END,
    claim_no = CASE WHEN t.claim_worker = $19 THEN NULL ELSE t.claim_no END,
    updated_at = now()
),
counters AS (
  UPDATE svc_ingest.workers SET batches_acked = batches_acked + $20, records_acked = records_acked + $21,
    batches_failed = batches_failed + $22, records_failed = records_failed + $23
  WHERE worker_no = $19
),
-- The destination has acknowledged something: from now on it holds the ledger (a run elsewhere is refused).
dest AS (
  UPDATE svc_ingest.destinations SET acked = true WHERE destination_no = $24 AND NOT acked AND $21::bigint > 0
)
SELECT count(*)::int AS n FROM o`;

// The claims this store holds, through the primary key (its worker's lease ends at close too, so a claim it lost
// track of — a statement whose answer never came — is no longer live either).
const RELEASE_SQL = `
UPDATE svc_ingest.transactions SET claim_worker = NULL, updated_at = now()
WHERE transaction_id = ANY($2::text[]) AND destination_no = $3 AND claim_worker = $1`;

// A worker of the previous version that registered after this one last asked (between its own schema check and the
// migration's commit; identity.ts): it reads acknowledgements in rows alone, and would take, once this worker's lease
// ends, the rows of ids this run acknowledged through a batch row before it was seen. Their acknowledgements go into
// the rows, as a record row by row writes them: this run's acknowledged outcomes, their ids whose row this worker
// still holds.
export const CATCH_UP_SQL = `
UPDATE svc_ingest.transactions t
SET acked_seq = a.seq, claim_worker = NULL, claim_no = NULL, updated_at = now()
FROM (SELECT u.id, min(b.seq) AS seq FROM svc_ingest.batches b, unnest(b.transaction_ids) AS u(id)
      WHERE b.run_id = ANY($2::text[]) AND b.worker_no = $1 AND b.destination_no = $3 AND b.status = 'acked'
      GROUP BY u.id) a
WHERE t.transaction_id = a.id AND t.destination_no = $3 AND t.claim_worker = $1 AND t.acked_seq IS NULL`;

interface Pending {
  outcome: RecordedOutcome;
  resolve: () => void;
  reject: (err: Error) => void;
}

/**
 * The parameters of RECORD_SQL for a group of outcomes, with the claims `held` has for their ids. `olderWorkers`: a
 * worker of a version before schema 7 may still be running (identity.ts, OLDER_WORKER_ROW), so every outcome goes
 * row by row.
 */
function recordParams(
  group: readonly RecordedOutcome[],
  held: HeldClaims,
  workerNo: number,
  destinationNo: number,
  serverStart: string | null,
  olderWorkers: boolean,
): unknown[] {
  const cols: unknown[][] = Array.from({ length: 16 }, () => []);
  const ids: string[] = [];
  const claims: number[] = [];
  let byRow = olderWorkers;
  let batchesAcked = 0;
  let recordsAcked = 0;
  let batchesFailed = 0;
  let recordsFailed = 0;
  group.forEach((o, k) => {
    const first = o.items[0];
    const last = o.items[o.items.length - 1];
    const idsFrom = ids.length + 1;
    for (const it of o.items) ids.push(it.id);
    const claimsFrom = claims.length + 1;
    if (!held.claimsOf(o.items, claims)) byRow = true;
    const row = [
      k,
      o.batchId,
      o.runId,
      o.status,
      o.requestId,
      o.clientRequestId,
      o.attempts,
      o.httpStatus,
      o.error ?? null,
      first?.source ?? null,
      first?.line ?? null,
      last?.line ?? null,
      idsFrom,
      ids.length,
      claimsFrom,
      claims.length,
    ];
    for (let c = 0; c < row.length; c++) cols[c]?.push(row[c]);
    if (o.status === 'acked') {
      batchesAcked++;
      recordsAcked += o.items.length;
    } else {
      batchesFailed++;
      recordsFailed += o.items.length;
    }
  });
  return [
    ...cols,
    ids,
    claims,
    workerNo,
    batchesAcked,
    recordsAcked,
    batchesFailed,
    recordsFailed,
    destinationNo,
    byRow,
    serverStart,
  ];
}

/**
 * Open the PostgreSQL ledger store. Write mode registers a worker (or uses `o.session`), migrating the schema on
 * first use; read mode (dry run) only looks up and writes nothing, not even the schema.
 * @example const store = await openPgLedgerStore('postgres://svc@127.0.0.1/ledger', { mode: 'write', resume: true, runId, logger })
 */
export async function openPgLedgerStore(url: string, o: PgLedgerStoreOptions): Promise<PgLedgerStore> {
  const write = o.mode === 'write';
  let session: PgSession | undefined;
  let db: PgDb;
  let hasSchema = true;
  const ownSession = write && o.session === undefined;
  if (write) {
    session = o.session ?? (await openPgSession(url, o));
    db = session.db;
  } else {
    ({ db, hasSchema } = await connectLedgerDb(url, { ...o, write: false }));
  }
  const workerNo = session?.workerNo ?? 0;
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
  const s = { admits: 0, outcomes: 0, commits: 0, claimRetries: 0 };
  // Nothing is loaded: the store is ready as soon as it is connected (the figures time start-up to this line).
  o.logger.info(
    { event: 'ledger.pg.opened', ledger: db.location, mode: o.mode, workerNo },
    'ledger database connected; resume is a lookup per group of records',
  );
  const queue: Pending[] = [];
  let draining: Promise<void> | null = null;
  let broken: SvcIngestError | undefined;
  let closing: Promise<void> | undefined;
  // After a lapsed lease: the claims held are checked in the database (no commit starts meanwhile: a recorded
  // outcome clears its claims too); any taken over stops the run's sending for good.
  const held = new HeldClaims();
  let committing: Promise<void> | null = null;
  let checking: Promise<void> | null = null;
  let checkedLapses = 0;
  let takenOver = 0;
  const checkClaims = async (by: PgSession, lapses: number): Promise<void> => {
    await committing?.catch(() => {});
    const ids = held.ids();
    takenOver = await claimsTakenOver(db, ids, destinationNo, workerNo);
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

  /** One ADMIT_SQL for the ids of several groups: each id claimed or skipped, as for each group alone. */
  const admitWriteNow = async (ids: string[]): Promise<Map<string, boolean>> => {
    const params = [ids, workerNo, o.resume, destinationNo];
    type Row = { id: string | null; acked: boolean | null; claim: string | null };
    let r: { rows: Row[] };
    try {
      r = await db.query<Row>('admit', CLAIM_SQL, params, 'svc_claim');
    } catch (err) {
      // Another worker inserted one of these ids since the statement began: claim them the other way.
      if ((err as { code?: unknown }).code !== UNIQUE_VIOLATION) throw err;
      s.claimRetries++;
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
  const admitWrite = (items: readonly BatchItem[]): Promise<Map<string, boolean>> => admits.admit(items);
  const admitRead = async (items: readonly BatchItem[]): Promise<Map<string, boolean>> => {
    const skip = new Map<string, boolean>();
    if (!hasSchema) return skip;
    const r = await db.query<{ id: string; acked: boolean; live: boolean }>(
      'admit',
      LOOKUP_SQL,
      [items.map((i) => i.id), o.resume, destinationNo],
      'svc_lookup',
    );
    for (const row of r.rows) if (row.acked || row.live) skip.set(row.id, row.acked);
    return skip;
  };

  // The runs of outcomes recorded through their batch row alone while no older worker was seen (one seen later
  // needs them in rows: CATCH_UP_SQL).
  const perBatch = new Set<string>();
  const catchUp = async (): Promise<void> => {
    const r = await db.query('other', CATCH_UP_SQL, [workerNo, [...perBatch], destinationNo]);
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
    await db.query(
      'record',
      RECORD_SQL,
      recordParams(
        group.map((p) => p.outcome),
        held,
        workerNo,
        destinationNo,
        serverStart,
        older,
      ),
      'svc_record',
    );
    s.commits++;
  };
  const drain = async (): Promise<void> => {
    while (queue.length > 0) {
      while (checking) await checking.catch(() => {});
      const group = queue.splice(0, MAX_GROUP);
      if (broken) {
        for (const p of group) p.reject(broken);
        continue;
      }
      try {
        committing = commit(group).then(() => {
          for (const p of group) held.remove(p.outcome.items.map((i) => i.id));
        });
        await committing;
        s.outcomes += group.length;
        for (const p of group) p.resolve();
      } catch (err) {
        // Fatal for the run: this and every later outcome is refused (the chain stops sending at once).
        broken = db.fail('LEDGER_WRITE', 'cannot record batch outcomes in', err);
        for (const p of group) p.reject(broken);
      }
    }
    draining = null;
  };

  return {
    location: db.location,
    badLines: 0,
    admitBatches: ADMIT_BATCHES,
    session,
    async claimsHeld() {
      if (session === undefined) return true;
      await session.stillHeld();
      if (takenOver === 0 && session.lapses > checkedLapses) {
        const current = session;
        checking ??= checkClaims(current, current.lapses).finally(() => {
          checking = null;
        });
        await checking;
      }
      return takenOver === 0;
    },
    async admit(items) {
      if (closing) throw new SvcIngestError('LEDGER_READ', `the ledger ${db.location} is closed`);
      if (items.length === 0) return { send: [], skipped: [] };
      s.admits++;
      let skip: Map<string, boolean>;
      try {
        skip = write ? await admitWrite(items) : await admitRead(items);
      } catch (err) {
        throw db.fail(write ? 'LEDGER_WRITE' : 'LEDGER_READ', 'cannot claim transactions in', err);
      }
      const out: Admission = { send: [], skipped: [] };
      for (const item of items) {
        const acked = skip.get(item.id);
        if (acked === undefined) out.send.push(item);
        else out.skipped.push({ item, reason: acked ? 'acked' : 'elsewhere' });
      }
      return out;
    },
    record(outcome) {
      if (!write)
        return Promise.reject(new SvcIngestError('LEDGER_WRITE', 'a read-only ledger records nothing'));
      if (closing)
        return Promise.reject(new SvcIngestError('LEDGER_WRITE', `the ledger ${db.location} is closed`));
      if (broken) return Promise.reject(broken);
      return new Promise<void>((resolve, reject) => {
        queue.push({ outcome, resolve, reject });
        draining ??= drain();
      });
    },
    stats: () => ({
      admits: s.admits,
      admitTrips: db.trips.admit,
      claimRetries: s.claimRetries,
      outcomes: s.outcomes,
      commits: s.commits,
      recordTrips: db.trips.record,
      heartbeatTrips: db.trips.heartbeat,
    }),
    close() {
      closing ??= (async () => {
        await draining;
        // Round trips by purpose: admit and record are the ones a batch costs (bench: at most 2 per batch).
        o.logger.info(
          {
            event: 'ledger.pg.closed',
            ledger: db.location,
            trips: { ...db.trips },
            admits: s.admits,
            claimRetries: s.claimRetries,
            outcomes: s.outcomes,
            commits: s.commits,
          },
          'ledger database closed',
        );
        if (!write) {
          await db.close();
          return;
        }
        try {
          // The end of this worker's lease lets an older worker take its rows: asked once more, for one that
          // registered since the last heartbeat.
          if (perBatch.size > 0 && !broken) {
            const r = await db.query<{ older: boolean }>('other', `SELECT ${OLDER_WORKERS_SQL} AS older`);
            if (r.rows[0]?.older !== false) await catchUp();
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
          const ids = held.ids();
          if (ids.length > 0) await db.query('other', RELEASE_SQL, [workerNo, ids, destinationNo]);
        } catch (err) {
          o.logger.warn(
            {
              event: 'ledger.pg.release',
              error: db.fail('LEDGER_WRITE', 'releasing claims in', err).message,
            },
            'could not release this worker’s claims; they expire with its lease',
          );
        }
        if (ownSession) await session?.close();
      })();
      return closing;
    },
  };
}
