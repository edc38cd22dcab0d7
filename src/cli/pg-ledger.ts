// Shared by the commands that need the PostgreSQL ledger (ledger migrate, backfill): --ledger / ledger.url /
// SVC_LEDGER_URL, the password file, the logger; a file path there is refused with one line.
import type { Command } from 'commander';
import type { Config, ConfigFlags } from '../config/index.ts';
import { SvcIngestError } from '../errors.ts';
import { isPostgresUrl } from '../ledger/postgres/url.ts';
import { createLogger, type Logger } from '../log.ts';
import { type CommonOptions, loadCommandConfig } from './common.ts';

/** The options every PostgreSQL-ledger command takes. */
export interface PgLedgerOptions extends CommonOptions {
  ledger?: string;
  json?: boolean;
}

/** Adds --ledger, --config, --log-level and --json. */
export function addPgLedgerOptions(cmd: Command): Command {
  return cmd
    .option(
      '--ledger <url>',
      'the shared ledger, postgres://USER@HOST[:PORT]/DATABASE (env SVC_LEDGER_URL; one of the two is required). ' +
        'The password: env SVC_LEDGER_PASSWORD_FILE (a file holding it), PGPASSWORD or ~/.pgpass; never shown',
    )
    .option('--config <file>', 'JSON config file merged over config/default.json (env SVC_CONFIG)')
    .option('--log-level <level>', 'trace, debug, info, warn, error, fatal or silent (env SVC_LOG_LEVEL)')
    .option('--json', 'print the result as one JSON line on stdout');
}

/**
 * What a PostgreSQL-ledger command runs with.
 * @example const { url, passwordFile, logger } = pgLedgerContext(opts, 'backfill plan')
 */
export interface PgLedgerContext {
  url: string;
  passwordFile?: string;
  /** ledger.waitMs, ledger.allowPlaintext: how the connection behaves (connectLedgerDb / openPgSession options). */
  waitMs: number;
  /** ledger.poolMax: connections to the database at most. */
  poolMax: number;
  allowPlaintext: boolean;
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
  return {
    url,
    passwordFile: config.ledger.passwordFile,
    waitMs: config.ledger.waitMs,
    poolMax: config.ledger.poolMax,
    allowPlaintext: config.ledger.allowPlaintext,
    config,
    logger: createLogger({ level: config.log.level }),
  };
}

/** Connect to the context's ledger without writing (its schema checked: a newer or older one refused). */
export async function connectReadOnly(ctx: PgLedgerContext) {
  const { connectLedgerDb } = await import('../ledger/postgres/schema-check.ts');
  return connectLedgerDb(ctx.url, {
    passwordFile: ctx.passwordFile,
    waitMs: ctx.waitMs,
    poolMax: ctx.poolMax,
    allowPlaintext: ctx.allowPlaintext,
    logger: ctx.logger,
    write: false,
  });
}
