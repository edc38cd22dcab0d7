// The ledger's schema, created and versioned by the tool: numbered migrations applied in order, each in its own
// transaction, recorded in svc_ingest.migrations, under an advisory lock so that workers starting together apply
// each one once. docs/postgres.md describes every table.
import { hostname } from 'node:os';
import type { PgDb } from './db.ts';

/**
 * The default schema: every statement names its tables `svc_ingest.…`, and a ledger with another name (one per
 * feed: `?schema=` or ledger.name) has them rewritten to its own schema (PgDb.sql).
 */
export const SCHEMA = 'svc_ingest';

/** One step of the schema. Never edit a released one: add the next. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'ledger and backfill',
    sql: `
CREATE TABLE svc_ingest.workers (
  worker_no      integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  worker_id      text NOT NULL UNIQUE,
  run_id         text NOT NULL,
  host           text NOT NULL,
  pid            integer NOT NULL,
  started_at     timestamptz NOT NULL DEFAULT now(),
  heartbeat_at   timestamptz NOT NULL DEFAULT now(),
  lease_until    timestamptz NOT NULL,
  stopped_at     timestamptz,
  batches_acked  bigint NOT NULL DEFAULT 0,
  batches_failed bigint NOT NULL DEFAULT 0,
  records_acked  bigint NOT NULL DEFAULT 0,
  records_failed bigint NOT NULL DEFAULT 0
);

CREATE SEQUENCE svc_ingest.batch_seq;
CREATE TABLE svc_ingest.batches (
  seq               bigint PRIMARY KEY DEFAULT nextval('svc_ingest.batch_seq'),
  ts                timestamptz NOT NULL DEFAULT now(),
  batch_id          text NOT NULL,
  run_id            text NOT NULL,
  worker_no         integer NOT NULL,
  status            text NOT NULL CHECK (status IN ('acked', 'failed')),
  request_id        text,
  client_request_id text NOT NULL,
  attempts          integer NOT NULL,
  http_status       integer,
  error             text,
  source            text,
  first_line        bigint,
  last_line         bigint,
  transaction_ids   text[] NOT NULL
);
ALTER SEQUENCE svc_ingest.batch_seq OWNED BY svc_ingest.batches.seq;
CREATE INDEX batches_failed ON svc_ingest.batches (seq) WHERE status = 'failed';
CREATE INDEX batches_run ON svc_ingest.batches (run_id);

CREATE TABLE svc_ingest.transactions (
  transaction_id text PRIMARY KEY,
  acked_seq      bigint,
  claim_worker   integer,
  updated_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX transactions_claims ON svc_ingest.transactions (claim_worker) WHERE claim_worker IS NOT NULL;

CREATE VIEW svc_ingest.transaction_states AS
SELECT t.transaction_id,
       CASE WHEN t.acked_seq IS NOT NULL THEN 'acked'
            WHEN t.claim_worker IS NOT NULL THEN 'claimed'
            ELSE 'failed' END AS state,
       b.batch_id AS acked_batch_id, b.request_id AS acked_request_id, b.ts AS acked_at,
       w.worker_id AS claimed_by, w.lease_until AS claim_lease_until,
       (w.lease_until > now()) AS claim_live,
       t.updated_at
FROM svc_ingest.transactions t
LEFT JOIN svc_ingest.batches b ON b.seq = t.acked_seq
LEFT JOIN svc_ingest.workers w ON w.worker_no = t.claim_worker;

CREATE TABLE svc_ingest.inputs (
  input_no         integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  path             text NOT NULL UNIQUE,
  size             bigint NOT NULL,
  mtime_ms         bigint NOT NULL,
  format           text NOT NULL CHECK (format IN ('csv', 'ndjson')),
  gzip             boolean NOT NULL,
  delimiter        text NOT NULL,
  record_delimiter text,
  columns          text[],
  mapping          text,
  mapping_sha256   text,
  partition_bytes  bigint NOT NULL,
  planned_at       timestamptz NOT NULL DEFAULT now(),
  planned_by       text NOT NULL
);

CREATE TABLE svc_ingest.partitions (
  partition_no   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  input_no       integer NOT NULL REFERENCES svc_ingest.inputs,
  seq            integer NOT NULL,
  start_byte     bigint NOT NULL,
  end_byte       bigint NOT NULL,
  first_line     bigint NOT NULL,
  state          text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'working', 'done')),
  worker_no      integer,
  claims         integer NOT NULL DEFAULT 0,
  started_at     timestamptz,
  claimed_at     timestamptz,
  done_at        timestamptz,
  progress_bytes bigint NOT NULL DEFAULT 0,
  read           bigint NOT NULL DEFAULT 0,
  sent           bigint NOT NULL DEFAULT 0,
  skipped        bigint NOT NULL DEFAULT 0,
  failed         bigint NOT NULL DEFAULT 0,
  rejected       bigint NOT NULL DEFAULT 0,
  UNIQUE (input_no, seq),
  CHECK (start_byte <= end_byte)
);
CREATE INDEX partitions_open ON svc_ingest.partitions (partition_no) WHERE state <> 'done';
`,
  },
  {
    version: 2,
    name: 'backfill takeovers and workers',
    sql: `
ALTER TABLE svc_ingest.partitions ADD COLUMN takeovers integer NOT NULL DEFAULT 0;
ALTER TABLE svc_ingest.workers ADD COLUMN partitions_claimed integer NOT NULL DEFAULT 0;
`,
  },
  {
    // Every outcome and every transaction row names its destination; an id acknowledged by one destination is
    // still to send to another. Destination 1 holds the rows written before (legacy), adopted by the first run.
    version: 3,
    name: 'destinations',
    sql: `
CREATE TABLE svc_ingest.destinations (
  destination_no smallint PRIMARY KEY,
  destination    text UNIQUE,
  legacy         boolean NOT NULL DEFAULT false,
  acked          boolean NOT NULL DEFAULT false,
  added_at       timestamptz NOT NULL DEFAULT now(),
  added_by       text,
  adopted_at     timestamptz
);
INSERT INTO svc_ingest.destinations (destination_no, destination, legacy, acked)
VALUES (1, NULL, EXISTS (SELECT 1 FROM svc_ingest.batches) OR EXISTS (SELECT 1 FROM svc_ingest.transactions),
        EXISTS (SELECT 1 FROM svc_ingest.batches WHERE status = 'acked'));
ALTER TABLE svc_ingest.batches ADD COLUMN destination_no smallint NOT NULL DEFAULT 1;
ALTER TABLE svc_ingest.inputs ADD COLUMN destination_no smallint NOT NULL DEFAULT 1;
ALTER TABLE svc_ingest.transactions ADD COLUMN destination_no smallint NOT NULL DEFAULT 1;
ALTER TABLE svc_ingest.transactions DROP CONSTRAINT transactions_pkey,
  ADD CONSTRAINT transactions_pkey PRIMARY KEY (transaction_id, destination_no);
CREATE OR REPLACE VIEW svc_ingest.transaction_states AS
SELECT t.transaction_id,
       CASE WHEN t.acked_seq IS NOT NULL THEN 'acked'
            WHEN t.claim_worker IS NOT NULL THEN 'claimed'
            ELSE 'failed' END AS state,
       b.batch_id AS acked_batch_id, b.request_id AS acked_request_id, b.ts AS acked_at,
       w.worker_id AS claimed_by, w.lease_until AS claim_lease_until,
       (w.lease_until > now()) AS claim_live,
       t.updated_at,
       d.destination
FROM svc_ingest.transactions t
LEFT JOIN svc_ingest.batches b ON b.seq = t.acked_seq
LEFT JOIN svc_ingest.workers w ON w.worker_no = t.claim_worker
LEFT JOIN svc_ingest.destinations d ON d.destination_no = t.destination_no;
`,
  },
  {
    // Who a worker is, beyond its name: the host's boot and the process's start, so that a worker started with the
    // id of one that died (same host, its process gone) takes its work back at once (identity.ts). And the last
    // line of a partition whose reject its holder has written: one taking it over writes only the later ones.
    version: 4,
    name: 'worker identity, rejects written',
    sql: `
ALTER TABLE svc_ingest.workers ADD COLUMN boot_id text;
ALTER TABLE svc_ingest.workers ADD COLUMN process_start text;
ALTER TABLE svc_ingest.workers ADD COLUMN pid_namespace text;
ALTER TABLE svc_ingest.partitions ADD COLUMN rejects_through bigint NOT NULL DEFAULT 0;
`,
  },
  {
    // Tickets in the feed's own schema (before: one schema svc_ingest_tickets shared by every feed, created on first
    // use). The default ledger takes over the events of that shared table, if any; a named feed starts empty.
    version: 5,
    name: 'tickets per feed',
    sql: `
CREATE TABLE svc_ingest.ticket_events (
  seq              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  source_ticket_id text NOT NULL,
  kind             text NOT NULL,
  update_key       text UNIQUE,
  body             jsonb NOT NULL,
  stored_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ticket_events_ticket ON svc_ingest.ticket_events (source_ticket_id, seq);
DO $$
BEGIN
  -- 'svc_ingest.' below is rewritten to a named feed's schema like every table name: only the default ledger copies.
  IF 'svc_ingest.ticket_events' = 'svc_' || 'ingest.ticket_events'
     AND to_regclass('svc_ingest_tickets.events') IS NOT NULL THEN
    INSERT INTO svc_ingest.ticket_events (source_ticket_id, kind, update_key, body, stored_at)
    SELECT source_ticket_id, kind, update_key, body, stored_at FROM svc_ingest_tickets.events ORDER BY seq;
  END IF;
END $$;
`,
  },
  {
    // A transaction row is inserted at admit (the claim) and updated once at record (acked, claim cleared): that
    // update is made heap-only (HOT: no new index entry, the old version pruned on its page without VACUUM) by room
    // left on each page and by no B-tree on a column it changes. The claims index becomes a BRIN one (a summarising
    // index, which PostgreSQL 16+ lets a HOT update change, summarised as the table grows): freeing the claims of a
    // worker id started again finds them without reading every page. Existing pages keep their fill; new ones are
    // filled to half.
    version: 6,
    name: 'heap-only record updates',
    sql: `
ALTER TABLE svc_ingest.transactions SET (fillfactor = 50);
DROP INDEX svc_ingest.transactions_claims;
CREATE INDEX transactions_claims ON svc_ingest.transactions USING brin (claim_worker)
  WITH (pages_per_range = 16, autosummarize = on);
`,
  },
  {
    // An acknowledgement is the batch outcome's row alone: the record inserts one row per batch and updates no
    // transaction row. A claim row keeps its claim (claim_no, from batch_seq: one per claim statement) and an outcome
    // names the claims its ids were sent under (claim_nos, GIN-indexed), so an id's state is read through its claim
    // (acks.ts; the view spells its definitions out, as a released migration never changes). A worker's claims_from
    // ends the claims of its id's earlier processes (they were cleared row by row before); lapses counts the
    // heartbeats that found its lease run out (its outcomes are then recorded row by row, as before). Existing rows
    // keep acked_seq; new pages of transactions are filled (nothing updates their rows but a claim taken again).
    version: 7,
    name: 'acknowledgements per batch',
    sql: `
ALTER TABLE svc_ingest.transactions ADD COLUMN claim_no bigint;
ALTER TABLE svc_ingest.transactions SET (fillfactor = 100);
ALTER TABLE svc_ingest.batches ADD COLUMN claim_nos bigint[];
CREATE INDEX batches_claims ON svc_ingest.batches USING gin (claim_nos);
ALTER TABLE svc_ingest.workers ADD COLUMN claims_from bigint NOT NULL DEFAULT 0;
ALTER TABLE svc_ingest.workers ADD COLUMN lapses integer NOT NULL DEFAULT 0;
CREATE OR REPLACE VIEW svc_ingest.transaction_states AS
SELECT t.transaction_id,
       CASE WHEN a.seq IS NOT NULL THEN 'acked' WHEN c.open THEN 'claimed' ELSE 'failed' END AS state,
       b.batch_id AS acked_batch_id, b.request_id AS acked_request_id, b.ts AS acked_at,
       CASE WHEN c.open THEN w.worker_id END AS claimed_by,
       CASE WHEN c.open THEN w.lease_until END AS claim_lease_until,
       CASE WHEN c.open THEN w.lease_until > now() END AS claim_live,
       t.updated_at,
       d.destination
FROM svc_ingest.transactions t
LEFT JOIN svc_ingest.workers w ON w.worker_no = t.claim_worker
CROSS JOIN LATERAL (
  SELECT coalesce(t.acked_seq, (SELECT min(r.seq) FROM svc_ingest.batches r
                                WHERE r.claim_nos @> ARRAY[t.claim_no] AND t.transaction_id = ANY(r.transaction_ids)
                                  AND r.status = 'acked')) AS seq) a
CROSS JOIN LATERAL (
  SELECT coalesce(t.claim_worker IS NOT NULL AND coalesce(t.claim_no, 0) >= w.claims_from
                  AND NOT EXISTS (SELECT 1 FROM svc_ingest.batches r
                                  WHERE r.claim_nos @> ARRAY[t.claim_no] AND t.transaction_id = ANY(r.transaction_ids)),
                  false) AS open) c
LEFT JOIN svc_ingest.batches b ON b.seq = a.seq
LEFT JOIN svc_ingest.destinations d ON d.destination_no = t.destination_no;
`,
  },
];

/** The schema version this build of the tool writes. */
export const LATEST_VERSION = MIGRATIONS[MIGRATIONS.length - 1]?.version ?? 0;

/** What a migration run did. */
export interface MigrateResult {
  /** Version before. 0 = no schema. */
  from: number;
  to: number;
  applied: Array<{ version: number; name: string }>;
}

/** The ledger's schema version, 0 when the database has none yet. */
export async function schemaVersion(db: PgDb): Promise<number> {
  const t = await db.query<{ t: string | null }>(
    'other',
    `SELECT to_regclass('svc_ingest.migrations')::text AS t`,
  );
  if (!t.rows[0]?.t) return 0;
  const r = await db.query<{ v: number }>(
    'other',
    'SELECT coalesce(max(version), 0) AS v FROM svc_ingest.migrations',
  );
  return Number(r.rows[0]?.v ?? 0);
}

/** A database written by a newer svc-ingest: refuse rather than guess. */
export function newerSchemaMessage(location: string, version: number): string {
  return `the ledger database ${location} has schema version ${version}, newer than this svc-ingest knows (${LATEST_VERSION}); upgrade svc-ingest`;
}

/** The advisory lock that serialises migrators: two int4 keys, 'svci' and 'migr' in ASCII. */
const MIGRATION_LOCK = '1937138537, 1835624306';

/**
 * The schema version once no migrator is at work: each migration commits on its own, so a process starting while
 * another creates or migrates the schema reads a version in between. Waiting for the migrators' advisory lock (it
 * needs no privilege) and reading again gives the version they leave.
 * @example await settledSchemaVersion(db) // 5, where schemaVersion read 2 while a first run created the schema
 */
export async function settledSchemaVersion(db: PgDb): Promise<number> {
  await db.withClient(async (c) => {
    await c.query(`SELECT pg_advisory_lock(${MIGRATION_LOCK})`);
    await c.query(`SELECT pg_advisory_unlock(${MIGRATION_LOCK})`);
  });
  return schemaVersion(db);
}

/**
 * Bring the schema up to LATEST_VERSION. Safe to run by several processes at once (advisory lock) and again
 * (a no-op at the latest version). Throws a plain Error when the database is newer than this tool.
 * @example const { from, to, applied } = await migrate(db)
 */
export async function migrate(
  db: PgDb,
  migrations: readonly Migration[] = MIGRATIONS,
): Promise<MigrateResult> {
  return db.withClient(async (c) => {
    // A fixed key (two int4: the text 'svci' and 'migr'); held for this session only.
    await c.query(`SELECT pg_advisory_lock(${MIGRATION_LOCK})`);
    try {
      // Created only when missing: PostgreSQL checks CREATE on the database before IF NOT EXISTS, and the owner
      // of a schema an administrator made (docs/postgres.md) has no such privilege, nor needs it.
      const has = await c.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [db.schema]);
      if (has.rowCount === 0) await c.query(`CREATE SCHEMA IF NOT EXISTS ${db.schema}`);
      await c.query(`CREATE TABLE IF NOT EXISTS ${SCHEMA}.migrations (
        version    integer PRIMARY KEY,
        name       text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now(),
        applied_by text NOT NULL)`);
      const r = await c.query<{ v: number }>(
        `SELECT coalesce(max(version), 0) AS v FROM ${SCHEMA}.migrations`,
      );
      const from = Number(r.rows[0]?.v ?? 0);
      const last = migrations[migrations.length - 1]?.version ?? 0;
      if (from > last) throw new Error(newerSchemaMessage(db.location, from));
      const applied: MigrateResult['applied'] = [];
      for (const m of migrations) {
        if (m.version <= from) continue;
        await c.query('BEGIN');
        try {
          await c.query(m.sql);
          await c.query(`INSERT INTO ${SCHEMA}.migrations (version, name, applied_by) VALUES ($1, $2, $3)`, [
            m.version,
            m.name,
            `${hostname()}:${process.pid}`,
          ]);
          await c.query('COMMIT');
        } catch (err) {
          await c.query('ROLLBACK').catch(() => {});
          throw err;
        }
        applied.push({ version: m.version, name: m.name });
      }
      return { from, to: Math.max(from, last), applied };
    } finally {
      await c.query(`SELECT pg_advisory_unlock(${MIGRATION_LOCK})`).catch(() => {});
    }
  });
}
