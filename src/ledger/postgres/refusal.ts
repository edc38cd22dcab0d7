// Why a statement could not reach the ledger database, in the words an operator acts on: the server refused for
// lack of connection slots (it is up), it is starting up or shutting down, or it could not be reached at all.

/** How the database failed a statement that may simply be tried again; null: not a failure to wait out. */
export type Refusal = 'slots' | 'starting' | 'unreachable' | 'conflict';

/**
 * SQLSTATE 53300 too_many_connections (max_connections, or a role's or database's CONNECTION LIMIT) and 53400
 * configuration_limit_exceeded: the server is up but has no connection for us now.
 */
const SLOTS = new Set(['53300', '53400']);
/** 57P03 cannot_connect_now: starting up, shutting down, in recovery. 57P01/57P02: a connection ended by shutdown. */
const STARTING = new Set(['57P03']);
const UNREACHABLE = new Set(['57P01', '57P02']);
/** serialization_failure, deadlock_detected: the statement is simply run again. */
const CONFLICT = new Set(['40001', '40P01']);
const NETWORK = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH']);

/**
 * What kind of transient failure `err` is, or null when trying again would not help.
 * @example refusalOf({ code: '53300' }) // 'slots'
 */
export function refusalOf(err: unknown): Refusal | null {
  const e = err as { code?: string; message?: string };
  const code = typeof e?.code === 'string' ? e.code : '';
  if (SLOTS.has(code)) return 'slots';
  if (STARTING.has(code)) return 'starting';
  if (CONFLICT.has(code)) return 'conflict';
  if (UNREACHABLE.has(code) || /^08/.test(code) || NETWORK.has(code)) return 'unreachable';
  return /Connection terminated|connection timeout|Client has encountered a connection error/i.test(
    e?.message ?? '',
  )
    ? 'unreachable'
    : null;
}

/** The server is up and said "not now" (no slot, starting up): waited for at start too, not only mid-run. */
export function isRefusedNotNow(r: Refusal | null): boolean {
  return r === 'slots' || r === 'starting';
}

/** The warning's text for a wait of this kind. */
export function waitingMessage(r: Refusal): string {
  switch (r) {
    case 'slots':
      return 'the ledger database refused a connection: no free connection slots (its max_connections, or a role or database CONNECTION LIMIT); waiting for one (ledger.poolMax bounds this process’s connections)';
    case 'starting':
      return 'the ledger database is starting up or shutting down and accepts no connection yet; waiting for it';
    case 'conflict':
      return 'a ledger statement met a concurrent one (serialization failure or deadlock); running it again';
    default:
      return 'ledger database unreachable; waiting for it';
  }
}
