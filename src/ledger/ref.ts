// The one rule that names the ledger of every command: `--ledger` (a file path or a postgres:// URL), else
// ledger.url (SVC_LEDGER_URL), else send.ledgerPath (SVC_LEDGER_PATH). It yields one LedgerRef: a file with its
// path, or PostgreSQL with its URL and how it is reached (the ledger.* settings, one PgConnection). Everything that
// opens a ledger (send, ledger *, backfill, trace, reconcile, tickets, the ticket store) takes that value.
import type { Config } from '../config/index.ts';
import { SvcIngestError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { LEDGER_URL_KEY, type PgConnection } from './connection.ts';
import { isPostgresUrl, redactPgUrl } from './postgres/url.ts';

export type { PgConnection } from './connection.ts';

/** Which setting named the ledger in force (said in refusals and in the run's first log line). */
/** The setting that names a ledger file when neither --ledger nor ledger.url does (env SVC_LEDGER_PATH). */
const LEDGER_PATH_KEY = 'send.ledgerPath';

export type LedgerFrom = '--ledger' | typeof LEDGER_URL_KEY | typeof LEDGER_PATH_KEY;

/**
 * A ledger: a file, or a PostgreSQL database (its URL carries the ledger's schema as `?schema=`).
 * @example { kind: 'postgres', url: 'postgres://svc@db/ledger', connection: { waitMs: 60000, … }, from: 'ledger.url' }
 */
export type LedgerRef =
  | {
      kind: 'file';
      path: string;
      from: LedgerFrom;
      /** A ledger.url that is set and not used (a --ledger file wins): said, never silent (ledgerNotice). */
      unused?: string;
    }
  | { kind: 'postgres'; url: string; connection: PgConnection; from: LedgerFrom };

export type PgLedgerRef = Extract<LedgerRef, { kind: 'postgres' }>;
export type FileLedgerRef = Extract<LedgerRef, { kind: 'file' }>;

/** The environment variable and key of each source, for messages. */
const SHOWN: Record<LedgerFrom, string> = {
  '--ledger': '--ledger',
  [LEDGER_URL_KEY]: `${LEDGER_URL_KEY} (env SVC_LEDGER_URL)`,
  [LEDGER_PATH_KEY]: `${LEDGER_PATH_KEY} (env SVC_LEDGER_PATH)`,
};

/** The connection settings of the configuration: every ledger.* setting but where the ledger is. */
export function connectionOf(config: Config): PgConnection {
  const { url: _url, name: _name, ...connection } = config.ledger;
  return connection;
}

/**
 * The ledger a command uses, by the one rule: `given` (its --ledger, trimmed), else ledger.url, else
 * send.ledgerPath. A postgres:// or postgresql:// location is PostgreSQL (ledger.name added as `?schema=` unless the
 * URL names one), anything else a file. A --ledger file while ledger.url names a database: the file is used (the
 * explicit choice), and the ref says which URL is not (`unused`): the command says so (ledgerNotice).
 * @example resolveLedger(config, opts.ledger) // { kind: 'file', path: 'ledger/transactions.ndjson', from: 'send.ledgerPath' }
 */
export function resolveLedger(config: Config, given?: string): LedgerRef {
  const flag = given?.trim();
  const url = config.ledger.url?.trim();
  if (url !== undefined && !isPostgresUrl(url))
    throw new SvcIngestError(
      'CONFIG_INVALID',
      'config key ledger.url: expected a postgres:// or postgresql:// URL (a ledger file goes in send.ledgerPath)',
      { field: LEDGER_URL_KEY },
    );
  const [location, from]: [string, LedgerFrom] = flag
    ? [flag, '--ledger']
    : url !== undefined
      ? [url, LEDGER_URL_KEY]
      : [config.send.ledgerPath.trim(), LEDGER_PATH_KEY];
  if (!isPostgresUrl(location)) {
    const unused = from === '--ledger' && url !== undefined ? redactPgUrl(url) : undefined;
    return { kind: 'file', path: location, from, ...(unused ? { unused } : {}) };
  }
  return {
    kind: 'postgres',
    url: withLedgerName(location, config.ledger.name),
    connection: connectionOf(config),
    from,
  };
}

/**
 * resolveLedger for the read-only commands, which may read several ledger files together (`--ledger` repeated);
 * a PostgreSQL ledger is read on its own.
 */
export function resolveLedgers(config: Config, given: readonly string[] | undefined): LedgerRef[] {
  if (given === undefined || given.length <= 1) return [resolveLedger(config, given?.[0])];
  const refs = given.map((g) => resolveLedger(config, g));
  if (refs.some((r) => r.kind === 'postgres'))
    throw new SvcIngestError(
      'USAGE_INVALID',
      'a PostgreSQL ledger is read on its own: give it as the only --ledger (ledger files can be read together)',
    );
  return refs;
}

/**
 * The PostgreSQL ledger a command that needs one uses; a file is refused in one line.
 * @example requirePostgres(resolveLedger(config, opts.ledger), 'backfill plan')
 */
export function requirePostgres(ref: LedgerRef, command: string): PgLedgerRef {
  if (ref.kind === 'postgres') return ref;
  if (ref.from === LEDGER_PATH_KEY)
    throw new SvcIngestError(
      'USAGE_INVALID',
      `${command} needs the shared PostgreSQL ledger: --ledger postgres://USER@HOST/DATABASE or env SVC_LEDGER_URL ` +
        `(the ledger in force is the file ${ref.path}, from ${SHOWN[ref.from]})`,
    );
  throw new SvcIngestError(
    'USAGE_INVALID',
    `${command} needs a PostgreSQL ledger (postgres://…), not ${ref.path.replace(/\/\/([^/@:]*):[^/@]*@/, '//$1@')}`,
  );
}

/**
 * The line a command says when --ledger names a file while ledger.url (SVC_LEDGER_URL) names a database: which one
 * it uses and which it does not; null when only one ledger is named.
 * @example ledgerNotice(ref) // '--ledger /var/lib/svc-ingest/transactions.ndjson is used; ledger.url (env SVC_LEDGER_URL) postgres://svc@db/ledger is set and not used'
 */
export function ledgerNotice(ref: LedgerRef): string | null {
  if (ref.kind !== 'file' || ref.unused === undefined) return null;
  return `--ledger ${ref.path} is used; ${SHOWN[LEDGER_URL_KEY]} ${ref.unused} is set and not used (drop --ledger to use it)`;
}

/** Says ledgerNotice as the command's warning (its first log line), when there is one. */
export function warnLedgerNotice(logger: Logger, ref: LedgerRef): void {
  const notice = ledgerNotice(ref);
  if (notice && ref.kind === 'file')
    logger.warn({ event: 'ledger.named_twice', ledger: ref.path, unused: ref.unused }, notice);
}

/**
 * A postgres:// URL with the ledger name `name` added as `?schema=`, unless it names one already.
 * @example withLedgerName('postgres://svc@db/ledger', 'feed_a') // 'postgres://svc@db/ledger?schema=feed_a'
 */
export function withLedgerName(url: string, name: string | undefined): string {
  if (name === undefined) return url;
  try {
    const u = new URL(url);
    if (u.searchParams.has('schema')) return url;
    u.searchParams.set('schema', name);
    return u.toString();
  } catch {
    return url;
  }
}
