// The ledger a support command reads — ledger files, or one PostgreSQL ledger — and the few things it asks of it:
// a reader of it (src/ledger/reader.ts), and the ticket store that goes with it.
import type { Config } from '../config/index.ts';
import { SvcIngestError } from '../errors.ts';
import type { FoundLine } from '../ledger/file/find.ts';
import { isPostgresUrl } from '../ledger/postgres/url.ts';
import {
  type LedgerConnection,
  type LedgerReader,
  type LedgerRef,
  openLedgerReader,
} from '../ledger/reader.ts';
import type { Logger } from '../log.ts';
import type { TicketRecord } from '../tickets/state.ts';
import type { TicketStore } from '../tickets/store.ts';
import { ledgerPaths } from './common.ts';

/** The ledger(s) to read: files, or one PostgreSQL ledger. */
export type LedgerChoice = LedgerRef;

/**
 * `--ledger` (files, or one postgres:// URL on its own), else `--ledger-url` / SVC_LEDGER_URL, else send.ledgerPath.
 */
export async function chooseLedger(given: string[] | undefined, config: Config): Promise<LedgerChoice> {
  const list = given && given.length > 0 ? given : undefined;
  if (list?.some(isPostgresUrl)) {
    if (list.length > 1)
      throw new SvcIngestError(
        'USAGE_INVALID',
        'a PostgreSQL ledger is read on its own: give it as the only --ledger (ledger files can be read together)',
      );
    return { pg: list[0] as string };
  }
  if (!list && config.ledger.url !== undefined) return { pg: config.ledger.url };
  if (!list && isPostgresUrl(config.send.ledgerPath)) return { pg: config.send.ledgerPath };
  return { files: await ledgerPaths(list, config) };
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
