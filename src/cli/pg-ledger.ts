// Shared by the commands that need the PostgreSQL ledger (ledger migrate|grant, backfill): the ledger named by the
// one rule (src/ledger/ref.ts: --ledger, else ledger.url / SVC_LEDGER_URL, else send.ledgerPath), which must be a
// database; a file is refused with one line.
import type { Command } from 'commander';
import type { Config, ConfigFlags } from '../config/index.ts';
import { connectLedger } from '../ledger/reader.ts';
import { type PgLedgerRef, requirePostgres, resolveLedger } from '../ledger/ref.ts';
import { createLogger, type Logger } from '../log.ts';
import { addConfigAndLogOptions, type CommonOptions, loadCommandConfig } from './common.ts';

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
      'the shared ledger, postgres://USER@HOST[:PORT]/DATABASE (env SVC_LEDGER_URL; one of the two is required; ' +
        'a ledger file, from here or send.ledgerPath, is refused). ' +
        'The password: env SVC_LEDGER_PASSWORD_FILE (a file holding it), PGPASSWORD or ~/.pgpass; never shown',
    ),
  ).option('--json', 'print the result as one JSON line on stdout');
}

/**
 * What a PostgreSQL-ledger command runs with.
 * @example const { ledger } = pgLedgerContext(opts, 'backfill plan'); planBackfill({ ledger, files, logger })
 */
export interface PgLedgerContext {
  /** The database, with its connection settings. */
  ledger: PgLedgerRef;
  config: Config;
  logger: Logger;
}

/**
 * The command's ledger by the one rule, which must be PostgreSQL (a file is USAGE_INVALID), and its logger. `extra`:
 * the command's own flags that are configuration keys.
 */
export function pgLedgerContext(
  opts: PgLedgerOptions,
  command: string,
  extra: ConfigFlags = {},
): PgLedgerContext {
  const config = loadCommandConfig(opts, extra);
  const ledger = requirePostgres(resolveLedger(config, opts.ledger), command);
  return { ledger, config, logger: createLogger(config.log) };
}

/** Connect to the context's ledger without writing (its schema checked: a newer or older one refused). */
export function connectReadOnly(ctx: PgLedgerContext) {
  return connectLedger(ctx.ledger, ctx.logger, false);
}
