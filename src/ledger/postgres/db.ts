// The connection to the PostgreSQL ledger: a small node-postgres pool whose every query is one counted round trip,
// that waits out a lost connection mid-run (a database restart) and turns driver errors into one clear line.

import pRetry from 'p-retry';
import pg from 'pg';
import pgpass from 'pgpass';
import { type ErrorCode, SvcIngestError } from '../../errors.ts';
import type { Logger } from '../../log.ts';
import { LEDGER_URL_KEY, type PgConnection } from '../connection.ts';
import { isRefusedNotNow, type Refusal, refusalOf, waitingMessage } from './refusal.ts';
import { type PgTarget, scrubSecret } from './url.ts';

/** What a round trip was for (the store's figures count them per purpose). */
export type TripKind = 'admit' | 'record' | 'heartbeat' | 'claim' | 'other';

export interface PgDbOptions {
  logger: Logger;
  /**
   * How the database is reached (the ledger.* settings, ../ref.ts). poolMax: connections in the pool at most
   * (refused for lack of slots, the pool makes do with those it has for a while). The wait: how long a lost
   * connection is waited for before giving up; at start, only a server that refuses for lack of connection slots or
   * because it is starting up is waited for (an unreachable one fails at once). allowPlaintext: a server off
   * loopback may be reached without TLS; else such a URL is refused.
   */
  connection: PgConnection;
  /** Unused mid-run: a stopping run still records what it has in flight (a second signal exits at once). */
  signal?: AbortSignal;
}

/**
 * A connected database.
 * @example const db = await connectPg(target, { logger, connection: ref.connection }); const r = await db.query('other', 'SELECT 1'); await db.close()
 */
export interface PgDb {
  /** The URL without credentials. */
  readonly location: string;
  /** The schema holding this ledger (one per feed; default svc_ingest). */
  readonly schema: string;
  /** `text` with the default schema's name (`svc_ingest.`) replaced by this ledger's: every statement goes through it. */
  sql(text: string): string;
  /** Round trips made so far, by purpose. */
  readonly trips: Readonly<Record<TripKind, number>>;
  /** One statement, one round trip (a named statement is prepared once per connection). */
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(
    kind: TripKind,
    text: string,
    values?: unknown[],
    name?: string,
  ): Promise<pg.QueryResult<R>>;
  /** Run `fn` on one connection of its own (a transaction, an advisory lock); its queries are counted as 'other'. */
  withClient<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T>;
  /** Turn an error of this database into a SvcIngestError with `code`, naming the location, without secrets. */
  fail(code: ErrorCode, doing: string, err: unknown): SvcIngestError;
  close(): Promise<void>;
}

/**
 * The password of ~/.pgpass (PGPASSFILE) for a connection's host, port, database and user, asked for only when the
 * server wants one. None there: refused with one line saying where a password comes from (without one node-postgres
 * would go on and leave the login half done, the process waiting on the server's authentication timeout).
 */
function pgpassLookup(params: Parameters<typeof pgpass>[0]): Promise<string> {
  return new Promise((resolve, reject) =>
    pgpass(params, (pass) =>
      pass === undefined
        ? reject(
            new Error(
              'the server asks for a password and none was given (the URL, the password file ' +
                'SVC_LEDGER_PASSWORD_FILE, PGPASSWORD, or a matching line of ~/.pgpass or PGPASSFILE)',
            ),
          )
        : resolve(pass),
    ),
  );
}

/**
 * node-postgres's client, but when no password was given (URL, file, PGPASSWORD) ~/.pgpass is read here, as the
 * driver would, without its deprecation warning on every run that uses it (pg 8.23 warns when it reads the file
 * itself). A function as the password is what the warning recommends; it cannot go in the pool's options (the
 * connection string's empty password would override it), so it is set on each client.
 */
class PgpassClient extends pg.Client {
  constructor(config?: string | pg.ClientConfig) {
    super(config);
    const self = this as unknown as { password: unknown; connection?: { stream?: { destroy(): void } } };
    if (self.password !== null && self.password !== undefined) return;
    // No password anywhere: the login is given up and the socket closed (else the half-done login keeps the
    // process waiting on the server's authentication timeout, a minute).
    self.password = (params: Parameters<typeof pgpass>[0]) =>
      pgpassLookup(params).catch((err: unknown) => {
        setImmediate(() => self.connection?.stream?.destroy());
        throw err;
      });
  }
}

/** SQLSTATE classes and driver errors after which the same statement may simply be tried again. */
export function isTransient(err: unknown): boolean {
  return refusalOf(err) !== null;
}

function describe(err: unknown): string {
  const e = err as { code?: string; message?: string; errors?: unknown[] };
  // An AggregateError (several addresses refused) has an empty message: use its first member's.
  const first =
    Array.isArray(e?.errors) && e.errors.length > 0 ? (e.errors[0] as { message?: string }) : undefined;
  const msg = e?.message || first?.message || String(err);
  return e?.code && !msg.includes(e.code) ? `${msg} (${e.code})` : msg;
}

/** After the last refusal for lack of slots, how long before the pool tries one more connection. */
const REGROW_MS = 5000;

/**
 * Open a pool on the target and make one round trip (so a wrong URL, password or an unreachable server fails here,
 * at once, with LEDGER_READ).
 */
export async function connectPg(target: PgTarget, o: PgDbOptions): Promise<PgDb> {
  // Refused before any packet leaves: ids, errors and the login would cross the network in clear.
  if (target.plainRemote && !o.connection.allowPlaintext)
    throw new SvcIngestError(
      'CONFIG_INVALID',
      `the ledger database ${target.location} is not on loopback and its URL asks for no TLS: add ?sslmode=verify-full ` +
        '(or set ledger.allowPlaintext / SVC_LEDGER_ALLOW_PLAINTEXT=true to accept a plain-text connection)',
      { field: LEDGER_URL_KEY },
    );
  const pool = openPool(target, o);
  const waiter = poolWaiter(pool, target, o);
  const db = dbOn(pool, target, waiter);
  try {
    // Not connected yet: only a server that says "not now" (no slot, starting up) is waited for (mayWaitNow).
    await db.query('other', 'SELECT 1');
  } catch (err) {
    await pool.end().catch(() => {});
    throw db.fail('LEDGER_READ', 'cannot connect to the ledger database', err);
  }
  if (target.plainRemote)
    o.logger.warn(
      { event: 'ledger.pg.plaintext', ledger: target.location },
      'the ledger database is not on loopback and the URL asks for no TLS (ledger.allowPlaintext is set)',
    );
  return db;
}

/** The node-postgres pool of a connection: at most poolMax connections, idle ones closed soon. */
function openPool(target: PgTarget, o: PgDbOptions): pg.Pool {
  const pool = new pg.Pool({
    connectionString: target.connectionString,
    max: o.connection.poolMax,
    // A connection idle for 2 s is closed: the pool holds what the process uses at once (admit and record, mostly),
    // not its peak, so that with too few slots on the server the other processes get theirs.
    idleTimeoutMillis: 2000,
    connectionTimeoutMillis: 10_000,
    keepAlive: true,
    application_name: 'svc-ingest',
    Client: PgpassClient,
  });
  // An idle connection that breaks (server restart) is reported here; the next query reconnects.
  pool.on('error', (err) =>
    o.logger.debug(
      { event: 'ledger.pg.idle_error', error: scrubSecret(describe(err), target.secret) },
      'ledger connection lost',
    ),
  );
  return pool;
}

/** How a connection waits for its database: a statement tried again while the database says "not now". */
interface Waiter {
  /** `fn` tried again within the wait while it fails in a way `mayWait` accepts (then it is given up on for good). */
  retrying<T>(fn: () => Promise<T>, mayWait: (r: Refusal | null) => boolean): Promise<T>;
  /** What may be waited for now: after a first answer, any transient failure; before it, only a server that said
   *  "not now" (no slot, starting up); after giving up once, nothing. */
  mayWaitNow(): (r: Refusal | null) => boolean;
}

/**
 * The waits of one pool (the connection's wait at most, with backoff), one warning per wait and one line when it
 * ends; refused for lack of slots, the pool shrinks to the connections it holds (statements queue for them instead
 * of failing and backing off) and grows back by one a while after the last refusal.
 */
function poolWaiter(pool: pg.Pool, target: PgTarget, o: PgDbOptions): Waiter {
  const conn = o.connection;
  let connected = false;
  // Set when a statement waited the whole wait for the database in vain: later ones (releasing claims, ending the
  // lease on the way out) are tried once, so a run that gives up on its database exits without waiting again.
  let gaveUp = false;
  let waiting: { kind: Refusal; since: number } | null = null;
  let lastRefusal = 0;
  const noteFailure = (err: unknown, attempt: number): void => {
    const kind = refusalOf(err);
    if (kind === null) return;
    if (kind === 'slots') {
      lastRefusal = performance.now();
      const live = pool.totalCount;
      if (live >= 1 && live < pool.options.max) pool.options.max = live;
    }
    const fields = { attempt, error: scrubSecret(describe(err), target.secret), poolMax: pool.options.max };
    if (kind === 'conflict') o.logger.debug({ event: 'ledger.pg.retry', ...fields }, waitingMessage(kind));
    else if (waiting?.kind !== kind) {
      o.logger.warn({ event: 'ledger.pg.retry', cause: kind, ...fields }, waitingMessage(kind));
      waiting = { kind, since: waiting?.since ?? performance.now() };
    }
  };
  const noteSuccess = (): void => {
    connected = true;
    gaveUp = false;
    if (waiting) {
      o.logger.info(
        {
          event: 'ledger.pg.recovered',
          cause: waiting.kind,
          waitedMs: Math.round(performance.now() - waiting.since),
        },
        'the ledger database answers again',
      );
      waiting = null;
    }
    if (pool.options.max < conn.poolMax && performance.now() - lastRefusal > REGROW_MS) {
      pool.options.max++;
      lastRefusal = performance.now();
    }
  };
  const retrying = <T>(fn: () => Promise<T>, mayWait: (r: Refusal | null) => boolean): Promise<T> =>
    // Not send/retried.ts: ledger/ is below send/ (test/architecture/layers.test.ts), so p-retry itself, no jitter.
    pRetry(fn, {
      retries: Number.POSITIVE_INFINITY,
      minTimeout: 100,
      maxTimeout: 2000,
      maxRetryTime: conn.waitMs,
      // No stop signal here: a run that is stopping still records the outcomes in flight, so it waits as long.
      shouldRetry: ({ error }) => mayWait(refusalOf(error)),
      // Called for every failure, retried or not: only one that will be waited for is said to be.
      onFailedAttempt: ({ error, attemptNumber }) => {
        if (mayWait(refusalOf(error))) noteFailure(error, attemptNumber);
      },
    }).then(
      (r) => {
        noteSuccess();
        return r;
      },
      (err: unknown) => {
        if (refusalOf(err) !== null && connected) gaveUp = true;
        throw err;
      },
    );
  return {
    retrying,
    mayWaitNow: () => (gaveUp ? () => false : connected ? (r) => r !== null : isRefusedNotNow),
  };
}

/** The PgDb on a pool: every statement one counted round trip, in the ledger's schema, waited for as `w` says. */
function dbOn(pool: pg.Pool, target: PgTarget, w: Waiter): PgDb {
  const trips: Record<TripKind, number> = { admit: 0, record: 0, heartbeat: 0, claim: 0, other: 0 };
  const schema = target.schema;
  const sql = (text: string): string =>
    schema === 'svc_ingest' ? text : text.replace(/\bsvc_ingest\./g, `${schema}.`);
  return {
    location: target.location,
    schema,
    sql,
    trips,
    async query<R extends pg.QueryResultRow>(
      kind: TripKind,
      text: string,
      values?: unknown[],
      name?: string,
    ): Promise<pg.QueryResult<R>> {
      const t = sql(text);
      return w.retrying(() => {
        trips[kind]++;
        return pool.query<R>(name ? { name, text: t, values } : { text: t, values });
      }, w.mayWaitNow());
    },
    async withClient(fn) {
      trips.other++;
      const client = await w.retrying(() => pool.connect(), w.mayWaitNow());
      let broken: unknown;
      try {
        return await fn(schema === 'svc_ingest' ? client : inSchema(client, sql));
      } catch (err) {
        broken = err;
        throw err;
      } finally {
        // A client whose connection failed is dropped instead of going back to the pool.
        client.release(broken !== undefined && isTransient(broken) ? (broken as Error) : undefined);
      }
    },
    fail(code: ErrorCode, doing: string, err: unknown): SvcIngestError {
      if (err instanceof SvcIngestError) return err;
      const text = scrubSecret(describe(err), target.secret);
      return new SvcIngestError(code, `${doing} ${target.location}: ${text}`, { source: target.location });
    },
    async close() {
      await pool.end();
    },
  };
}

/** A client whose query texts go through `sql` (another ledger name than the default schema). */
function inSchema(client: pg.PoolClient, sql: (text: string) => string): pg.PoolClient {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  const wrapped = Object.create(client) as pg.PoolClient;
  (wrapped as unknown as { query: (...args: unknown[]) => unknown }).query = (
    text: unknown,
    ...rest: unknown[]
  ) =>
    query(
      typeof text === 'string'
        ? sql(text)
        : text && typeof text === 'object' && 'text' in text
          ? { ...(text as object), text: sql(String((text as { text: string }).text)) }
          : text,
      ...rest,
    );
  return wrapped;
}
