// The privileges each use of the PostgreSQL ledger needs, for the schema version this build writes: made here, by
// the code that knows the tables (`svc-ingest ledger grant`), never copied from a document that ages. A migration that
// adds a table adds it here in the same change (a test checks that every table of the schema is covered).
import { LATEST_VERSION } from './migrations.ts';

/** What a role is for: one feed's nightly `send`, its backfill, its tickets, reading (status, find, trace), pruning. */
export const GRANT_PURPOSES = ['send', 'backfill', 'tickets', 'read', 'prune'] as const;
export type GrantPurpose = (typeof GRANT_PURPOSES)[number];

/** Every table and view of the schema at LATEST_VERSION. */
export const LEDGER_RELATIONS = [
  'migrations',
  'workers',
  'batches',
  'transactions',
  'transaction_states',
  'destinations',
  'inputs',
  'partitions',
  'ticket_events',
] as const;
type Relation = (typeof LEDGER_RELATIONS)[number];

/** One purpose's privileges: table privileges by table, and the sequences it uses. */
interface Needs {
  tables: Array<[privileges: string, relations: Relation[]]>;
  sequences: string[];
}

/** A run that claims and records (`send`, and each `backfill work`). */
const WRITER: Needs['tables'] = [
  ['SELECT', ['migrations']],
  ['SELECT, INSERT, UPDATE', ['workers', 'transactions', 'batches', 'destinations']],
];

const NEEDS: Record<GrantPurpose, Needs> = {
  send: { tables: WRITER, sequences: ['batch_seq'] },
  // plan (inputs, partitions; destinations), work (partitions), status (reads them all).
  backfill: {
    tables: [...WRITER, ['SELECT, INSERT, UPDATE', ['inputs', 'partitions']]],
    sequences: ['batch_seq'],
  },
  // create checks the ids in the ledger (unless --force); create, listen and get store events.
  tickets: {
    tables: [
      ['SELECT', ['migrations', 'transactions', 'batches', 'destinations']],
      ['SELECT, INSERT', ['ticket_events']],
    ],
    sequences: [],
  },
  read: { tables: [['SELECT', [...LEDGER_RELATIONS]]], sequences: [] },
  prune: {
    tables: [
      // workers: whether a failed id is still held by a live claim (v7).
      ['SELECT', ['migrations', 'destinations', 'workers']],
      ['SELECT, DELETE', ['batches', 'transactions']],
    ],
    sequences: [],
  },
};

/** A role name as SQL: bare when PostgreSQL would keep it as written, else double-quoted. */
export function roleSql(role: string): string {
  return /^[a-z_][a-z0-9_]{0,62}$/.test(role) ? role : `"${role.replace(/"/g, '""')}"`;
}

/**
 * The GRANT statements that let `role` do `purposes` on the ledger in `schema`, at LATEST_VERSION.
 * @example grantStatements('feed_a', 'feed_a_sender', ['send'])[0] // 'GRANT USAGE ON SCHEMA feed_a TO feed_a_sender'
 */
export function grantStatements(schema: string, role: string, purposes: readonly GrantPurpose[]): string[] {
  const who = roleSql(role);
  const byPrivileges = new Map<string, Set<Relation>>();
  const sequences = new Set<string>();
  for (const p of purposes) {
    for (const [privileges, relations] of NEEDS[p].tables) {
      const set = byPrivileges.get(privileges) ?? new Set<Relation>();
      for (const r of relations) set.add(r);
      byPrivileges.set(privileges, set);
    }
    for (const s of NEEDS[p].sequences) sequences.add(s);
  }
  const out = [`GRANT USAGE ON SCHEMA ${schema} TO ${who}`];
  for (const [privileges, relations] of byPrivileges)
    out.push(`GRANT ${privileges} ON ${[...relations].map((r) => `${schema}.${r}`).join(', ')} TO ${who}`);
  for (const s of sequences) out.push(`GRANT USAGE ON SEQUENCE ${schema}.${s} TO ${who}`);
  return out;
}

/** The script `ledger grant` prints: a comment naming what it is for, then one statement a line. */
export function grantScript(schema: string, role: string, purposes: readonly GrantPurpose[]): string {
  return [
    `-- svc-ingest ledger grant: role ${role}, for ${purposes.join(', ')}, ledger schema ${schema} at version ${LATEST_VERSION}`,
    ...grantStatements(schema, role, purposes).map((s) => `${s};`),
  ].join('\n');
}
