// Where `tickets` keeps its tickets: the store of a ledger (tickets.ndjson next to a ledger file, or its PostgreSQL
// database), named by --ledger / --ledger-url or the configuration.
import type { Command } from 'commander';
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

export function storeConfig(opts: StoreOptions) {
  return loadCommandConfig(opts, settingFlags(opts, 'ledgerUrl'));
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
