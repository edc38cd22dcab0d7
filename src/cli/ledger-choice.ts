// The ledger a command reads — ledger files, or one PostgreSQL ledger — parsed once from --ledger, ledger.url
// (SVC_LEDGER_URL) and send.ledgerPath into a LedgerRef, with how it is reached (LedgerConnection, the ledger.*
// settings); and the few things asked of it: a reader of it (src/ledger/reader.ts), and the ticket store with it.
import type { Config } from '../config/index.ts';
import { SvcIngestError } from '../errors.ts';
import type { FoundLine } from '../ledger/file/find.ts';
import { isPostgresUrl } from '../ledger/postgres/url.ts';
import {
  connectLedger,
  type LedgerConnection,
  type LedgerReader,
  type LedgerRef,
  openLedgerReader,
} from '../ledger/reader.ts';
import type { Logger } from '../log.ts';
import type { TicketRecord } from '../tickets/state.ts';
import type { TicketStore } from '../tickets/store.ts';
import { ledgerPaths, useLedgerUrl } from './common.ts';

/** The ledger(s) to read: files, or one PostgreSQL ledger. */
export type LedgerChoice = LedgerRef;

/**
 * The ledger named: `--ledger` (files, or one postgres:// URL on its own), else `--ledger-url` / SVC_LEDGER_URL
 * (a ledger.url that is not a PostgreSQL URL is CONFIG_INVALID), else send.ledgerPath. The files are not checked.
 */
export function ledgerRefOf(given: string[] | undefined, config: Config): LedgerChoice {
  const list = given && given.length > 0 ? given : undefined;
  useLedgerUrl(config, list !== undefined);
  const named = list ?? [config.send.ledgerPath];
  if (!named.some(isPostgresUrl)) return { files: named };
  if (named.length > 1)
    throw new SvcIngestError(
      'USAGE_INVALID',
      'a PostgreSQL ledger is read on its own: give it as the only --ledger (ledger files can be read together)',
    );
  return { pg: named[0] as string };
}

/** ledgerRefOf, each ledger file checked: an existing regular file (a mistyped path is an error, not an empty ledger). */
export async function chooseLedger(given: string[] | undefined, config: Config): Promise<LedgerChoice> {
  const ref = ledgerRefOf(given, config);
  return 'pg' in ref ? ref : { files: await ledgerPaths(ref.files, config) };
}

/** How the configuration says a PostgreSQL ledger is reached (the ledger.* settings), with the run's logger. */
export function ledgerConnection(config: Config, logger: Logger): LedgerConnection {
  const l = config.ledger;
  return {
    passwordFile: l.passwordFile,
    waitMs: l.waitMs,
    poolMax: l.poolMax,
    allowPlaintext: l.allowPlaintext,
    logger,
  };
}

/** Connects to the PostgreSQL ledger `url` as the configuration says (`write`: may create or migrate its schema). */
export async function connectPgLedger(url: string, config: Config, write: boolean) {
  const { createLogger } = await import('../log.ts');
  return connectLedger(url, ledgerConnection(config, createLogger(config.log)), write);
}

/** Runs `fn` with a reader of the chosen ledger, closed after. */
export async function withLedgerReader<T>(
  choice: LedgerChoice,
  config: Config,
  logger: Logger,
  fn: (reader: LedgerReader) => Promise<T>,
  warnBadLines = true,
): Promise<T> {
  const reader = await openLedgerReader(choice, { ...ledgerConnection(config, logger), warnBadLines });
  try {
    return await fn(reader);
  } finally {
    await reader.close();
  }
}

export async function findHits(choice: LedgerChoice, ids: Set<string>, config: Config, logger: Logger) {
  const hits: FoundLine[] = [];
  await withLedgerReader(choice, config, logger, (r) => r.find(ids, (h) => hits.push(h)));
  return hits;
}

export async function storedTickets(
  choice: LedgerChoice,
  config: Config,
  logger: Logger,
): Promise<TicketRecord[]> {
  const { openTicketStore, loadTickets } = await import('../tickets/store.ts');
  const store = await openTicketStore('pg' in choice ? choice.pg : (choice.files[0] as string), {
    ...ledgerConnection(config, logger),
    readOnly: true,
  });
  try {
    return [...(await loadTickets(store)).values()];
  } finally {
    await store.close();
  }
}

/** Opens the ticket store of the ledger (created on first use unless `readOnly`). */
export async function openStoreOf(
  choice: LedgerChoice,
  config: Config,
  logger: Logger,
  readOnly = false,
): Promise<TicketStore> {
  const { openTicketStore } = await import('../tickets/store.ts');
  return openTicketStore('pg' in choice ? choice.pg : (choice.files[0] as string), {
    ...ledgerConnection(config, logger),
    readOnly,
  });
}
