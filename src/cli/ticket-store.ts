// Where `tickets` keeps its tickets: the store of a ledger (tickets.ndjson next to a ledger file, or its PostgreSQL
// database), named by --ledger / --ledger-url or the configuration.
import type { Command } from 'commander';
import type { ConfigFlags } from '../config/index.ts';
import { resolveLedgers, warnLedgerNotice } from '../ledger/ref.ts';
import { createLogger } from '../log.ts';
import { type CommonOptions, collect, LEDGER_OPTION_HELP, loadCommandConfig } from './common.ts';
import { chooseLedger, type LedgerChoice } from './ledger-choice.ts';
import { addSettingOptions, settingFlags } from './settings.ts';

/** Where the tickets are kept: next to the ledger (--ledger / SVC_LEDGER_PATH), or in its PostgreSQL database. */
export interface StoreOptions extends CommonOptions {
  ledger?: string[];
  ledgerUrl?: string;
}

/**
 * The settings flags of a tickets command: --ledger-url, and tickets create's backoff (--retry-base-ms,
 * --retry-max-ms; the other commands have none).
 */
export function ticketFlags(opts: StoreOptions): ConfigFlags {
  return settingFlags(opts, 'ledgerUrl', 'backoff');
}

/** A tickets command's configuration, its settings flags with it (a bad one is refused here, before anything runs). */
export function storeConfig(opts: StoreOptions) {
  return loadCommandConfig(opts, ticketFlags(opts));
}

/** The ledger whose store keeps the tickets; with `lenient`, a ledger file not made yet is still a place for it. */
export async function ledgerOf(opts: StoreOptions, lenient: boolean): Promise<LedgerChoice> {
  // Lenient: a ledger file not made yet is still a place for tickets; else a mistyped one is an error.
  const config = storeConfig(opts);
  const logger = createLogger(config.log);
  if (!lenient) return chooseLedger(opts.ledger, config, logger);
  const choice = resolveLedgers(config, opts.ledger);
  for (const ref of choice) warnLedgerNotice(logger, ref);
  return choice;
}

/** --ledger / --ledger-url: where the tickets are kept (the ledger's store). */
export function addStoreOptions(cmd: Command): Command {
  cmd.option(
    '--ledger <path|url>',
    'the ledger whose store keeps the tickets: tickets.ndjson next to a ledger file, or its PostgreSQL database ' +
      `(${LEDGER_OPTION_HELP})`,
    collect,
  );
  return addSettingOptions(cmd, 'ledgerUrl');
}
