// Shared by the commands that need the PostgreSQL ledger (ledger migrate|grant, backfill): --ledger / ledger.url /
// SVC_LEDGER_URL, and how it is reached (one LedgerConnection: the ledger.* settings, the logger); a file path there
// is refused with one line.
import type { Command } from 'commander';
import type { Config, ConfigFlags } from '../config/index.ts';
import { SvcIngestError } from '../errors.ts';
import { isPostgresUrl } from '../ledger/postgres/url.ts';
import { connectLedger, type LedgerConnection } from '../ledger/reader.ts';
import { createLogger, type Logger } from '../log.ts';
import { addConfigAndLogOptions, type CommonOptions, loadCommandConfig } from './common.ts';
import { ledgerConnection } from './ledger-choice.ts';

/** The options every PostgreSQL-ledger command takes. */
export interface PgLedgerOptions extends CommonOptions {
  ledger?: string;
  json?: boolean;
}

/** Adds --ledger, --config, --log-level and --json. */
export function addPgLedgerOptions(cmd: Command): Command {
  return addConfigAndLogOptions(
    cmd.option(
      '--ledger <url>',
      'the shared ledger, postgres://USER@HOST[:PORT]/DATABASE (env SVC_LEDGER_URL; one of the two is required). ' +
        'The password: env SVC_LEDGER_PASSWORD_FILE (a file holding it), PGPASSWORD or ~/.pgpass; never shown',
    ),
  ).option('--json', 'print the result as one JSON line on stdout');
}

/**
 * What a PostgreSQL-ledger command runs with.
 * @example const { url, conn } = pgLedgerContext(opts, 'backfill plan'); planBackfill({ url, ...conn, files })
 */
export interface PgLedgerContext {
  url: string;
  /** How the database is reached (ledger.passwordFile, waitMs, poolMax, allowPlaintext) and the run's logger. */
  conn: LedgerConnection;
  config: Config;
  logger: Logger;
}

/**
 * Resolve the ledger URL (flag > config/env) and set up logging; no URL or a file path is USAGE_INVALID. `extra`:
 * the command's own flags that are configuration keys.
 */
export function pgLedgerContext(
  opts: PgLedgerOptions,
  command: string,
  extra: ConfigFlags = {},
): PgLedgerContext {
  const config = loadCommandConfig(opts, {
    ...extra,
    ...(opts.ledger === undefined ? {} : { 'ledger.url': { value: opts.ledger, flag: '--ledger' } }),
  });
  const url = config.ledger.url;
  if (url === undefined) {
    throw new SvcIngestError(
      'USAGE_INVALID',
      `${command} needs the shared PostgreSQL ledger: --ledger postgres://USER@HOST/DATABASE or env SVC_LEDGER_URL`,
    );
  }
  if (!isPostgresUrl(url)) {
    throw new SvcIngestError(
      'USAGE_INVALID',
      `${command} needs a PostgreSQL ledger (postgres://…), not ${url.replace(/\/\/([^/@:]*):[^/@]*@/, '//$1@')}`,
    );
  }
  const logger = createLogger(config.log);
  return { url, conn: ledgerConnection(config, logger), config, logger };
}

/** Connect to the context's ledger without writing (its schema checked: a newer or older one refused). */
export function connectReadOnly(ctx: PgLedgerContext) {
  return connectLedger(ctx.url, ctx.conn, false);
}
