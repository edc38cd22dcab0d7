// Where the PostgreSQL ledger is and how to log in: the URL as given, the password from the URL, a password
// file or the environment, and the URL as it may be shown (never with a password).

import { systemdCredential } from '../../config/secret.ts';
import { FILE_CAPS, readSmallFile, SmallFileError } from '../../config/small-file.ts';
import { SvcIngestError } from '../../errors.ts';
import { cliIo } from '../../io.ts';
import type { PgConnection } from '../connection.ts';

/** The setting naming the password file, for messages. */
const PASSWORD_FILE_KEY = 'ledger.passwordFile';
/** The systemd credential read as the ledger's password when ledger.passwordFile is not set. */
export const LEDGER_PASSWORD_CREDENTIAL = 'ledger-password';

/**
 * A PostgreSQL ledger to connect to.
 * @example { location: 'postgres://svc@db.bank.internal:5432/ledger', connectionString: 'postgres://svc:…@db…', secret: '…' }
 */
export interface PgTarget {
  /** The URL without any password: for messages, logs and the summary. */
  location: string;
  /** What node-postgres connects with (may hold the password). Never print it. */
  connectionString: string;
  /** The password in use, if known here (so that messages can be scrubbed of it). */
  secret?: string;
  /** The server is not on loopback and the URL asks for no TLS (a warning is logged). */
  plainRemote: boolean;
  /** The PostgreSQL schema holding this ledger (`?schema=` in the URL, or ledger.name): one per feed. */
  schema: string;
}

/** The ledger's schema when none is named (one ledger per database, as before ledger names). */
export const DEFAULT_SCHEMA = 'svc_ingest';

/** A ledger name is a plain lower-case PostgreSQL identifier (it names the schema; never quoted). */
const LEDGER_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** Does this ledger location name a PostgreSQL database (postgres:// or postgresql://)? */
export function isPostgresUrl(location: string): boolean {
  return /^postgres(ql)?:\/\//i.test(location.trim());
}

/** Query parameters that carry secrets: never shown. */
const SECRET_PARAMS = /^(password|sslpassword|passfile)$/i;

/**
 * The URL as it may be shown: user, host, port, database and the harmless parameters; no password.
 * @example redactPgUrl('postgres://svc:s3cret@db:5432/ledger?sslmode=require') // 'postgres://svc@db:5432/ledger?sslmode=require'
 */
export function redactPgUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url.trim());
  } catch {
    return 'postgres://(unparsable URL)';
  }
  const user = u.username ? `${u.username}@` : '';
  const params = [...u.searchParams.entries()].filter(([k]) => !SECRET_PARAMS.test(k));
  const query =
    params.length > 0
      ? `?${params.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&')}`
      : '';
  return `${u.protocol}//${user}${u.host}${u.pathname}${query}`;
}

/** Replace every occurrence of the secret in a message (a server or driver may echo what it was given). */
export function scrubSecret(text: string, secret: string | undefined): string {
  return secret && secret.length >= 3 ? text.split(secret).join('[redacted]') : text;
}

function readPasswordFile(file: string): string {
  let text: string;
  try {
    text = readSmallFile(file, FILE_CAPS.secret).replace(/\r?\n$/, '');
  } catch (err) {
    const why = err instanceof SmallFileError ? ` (${err.reason})` : '';
    throw new SvcIngestError('CONFIG_INVALID', `config key ${PASSWORD_FILE_KEY}: cannot read ${file}${why}`, {
      field: PASSWORD_FILE_KEY,
      cause: (err as NodeJS.ErrnoException).code ?? String(err),
    });
  }
  if (text === '') {
    throw new SvcIngestError('CONFIG_INVALID', `config key ${PASSWORD_FILE_KEY}: ${file} is empty`, {
      field: PASSWORD_FILE_KEY,
    });
  }
  return text;
}

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\]|::1)$/i;

/**
 * A Unix socket (`postgres://u@%2Fvar%2Frun%2Fpostgresql/db`, or `?host=/var/run/postgresql`): local to this host,
 * like loopback, so never refused for want of TLS.
 */
function isSocketHost(host: string): boolean {
  try {
    return decodeURIComponent(host).startsWith('/');
  } catch {
    return false;
  }
}

/**
 * Resolve a postgres:// URL into a target. The password is, first found: the URL's; the file named by
 * the connection's password file (env SVC_LEDGER_PASSWORD_FILE; its whole content less one final newline);
 * env PGPASSWORD; the user's ~/.pgpass (or PGPASSFILE), both read by node-postgres itself.
 * A URL that does not parse is USAGE_INVALID, shown without its password.
 * @example resolvePgTarget('postgres://svc@127.0.0.1:5432/ledger', { connection: ref.connection })
 */
export function resolvePgTarget(
  url: string,
  o: { connection?: Partial<PgConnection>; env?: NodeJS.ProcessEnv } = {},
): PgTarget {
  const env = o.env ?? cliIo().env;
  let u: URL;
  try {
    u = new URL(url.trim());
  } catch {
    throw new SvcIngestError('USAGE_INVALID', `not a valid PostgreSQL URL: ${redactPgUrl(url)}`);
  }
  if (!isPostgresUrl(url) || u.pathname.length <= 1) {
    throw new SvcIngestError(
      'USAGE_INVALID',
      `expected a PostgreSQL URL postgres://USER@HOST[:PORT]/DATABASE, got ${redactPgUrl(url)}`,
    );
  }
  let secret = u.password ? decodeURIComponent(u.password) : (u.searchParams.get('password') ?? undefined);
  // The configured file, else systemd's credential `ledger-password` (a unit's LoadCredential=, as for the token).
  const configured = o.connection?.passwordFile;
  const file = configured ? configured : systemdCredential(LEDGER_PASSWORD_CREDENTIAL, env);
  if (secret === undefined && file) {
    secret = readPasswordFile(file);
    u.password = encodeURIComponent(secret);
  }
  if (secret === undefined && env.PGPASSWORD) secret = env.PGPASSWORD;
  const schema = u.searchParams.get('schema') ?? DEFAULT_SCHEMA;
  if (!LEDGER_NAME.test(schema))
    throw new SvcIngestError(
      'USAGE_INVALID',
      `the ledger name (schema) must be a lower-case identifier (letters, digits, _; at most 63), got "${schema.slice(0, 70)}"`,
      { field: 'ledger.name' },
    );
  const location = redactPgUrl(url);
  // node-postgres would pass an unknown parameter on as a server setting: the schema is ours, not the server's.
  u.searchParams.delete('schema');
  const sslmode = (u.searchParams.get('sslmode') ?? env.PGSSLMODE ?? '').toLowerCase();
  // node-postgres connects to ?host= when given, else the URL's host.
  const host = u.searchParams.get('host') ?? u.hostname;
  const plainRemote =
    host !== '' && !LOOPBACK.test(host) && !isSocketHost(host) && (sslmode === '' || sslmode === 'disable');
  return { location, connectionString: u.toString(), secret, plainRemote, schema };
}
