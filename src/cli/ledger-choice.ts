// What the look-up commands (trace, reconcile, tickets) ask of the ledger they name: a reader of it
// (src/ledger/reader.ts) and the ticket store that goes with it. Which ledger is decided by the one rule
// (src/ledger/ref.ts resolveLedgers), not here.
import type { Config } from '../config/index.ts';
import type { FoundLine } from '../ledger/file/find.ts';
import { type LedgerReader, openLedgerReader } from '../ledger/reader.ts';
import { type LedgerRef, resolveLedgers, warnLedgerNotice } from '../ledger/ref.ts';
import type { Logger } from '../log.ts';
import type { TicketRecord } from '../tickets/state.ts';
import type { TicketStore } from '../tickets/store.ts';

/** The ledger(s) a look-up reads: files read together, or one PostgreSQL ledger. */
export type LedgerChoice = readonly LedgerRef[];

/**
 * The command's ledger(s) by the one rule: --ledger (repeatable for files), else ledger.url, else send.ledgerPath;
 * each ledger file must exist (a mistyped path is an error before anything else is done, not an empty ledger). A
 * --ledger file while SVC_LEDGER_URL is set is used, and said (warnLedgerNotice).
 */
export async function chooseLedger(
  given: string[] | undefined,
  config: Config,
  logger: Logger,
): Promise<LedgerChoice> {
  const choice = resolveLedgers(config, given);
  for (const ref of choice) warnLedgerNotice(logger, ref);
  const { checkLedgerPaths } = await import('../ledger/file/query.ts');
  await checkLedgerPaths(choice.flatMap((r) => (r.kind === 'file' ? [r.path] : [])));
  return choice;
}

/** Runs `fn` with a reader of the chosen ledger, closed after. */
export async function withLedgerReader<T>(
  choice: LedgerChoice,
  logger: Logger,
  fn: (reader: LedgerReader) => Promise<T>,
  warnBadLines = true,
): Promise<T> {
  const reader = await openLedgerReader(choice, { logger, warnBadLines });
  try {
    return await fn(reader);
  } finally {
    await reader.close();
  }
}

export async function findHits(choice: LedgerChoice, ids: Set<string>, logger: Logger) {
  const hits: FoundLine[] = [];
  await withLedgerReader(choice, logger, (r) => r.find(ids, (h) => hits.push(h)));
  return hits;
}

export async function storedTickets(choice: LedgerChoice, logger: Logger): Promise<TicketRecord[]> {
  const { loadTickets } = await import('../tickets/store.ts');
  const store = await openStoreOf(choice, logger, true);
  try {
    return [...(await loadTickets(store)).values()];
  } finally {
    await store.close();
  }
}

/** Opens the ticket store of the (first) ledger (created on first use unless `readOnly`). */
export async function openStoreOf(
  choice: LedgerChoice,
  logger: Logger,
  readOnly = false,
): Promise<TicketStore> {
  const { openTicketStore } = await import('../tickets/store.ts');
  return openTicketStore(choice[0] as LedgerRef, { logger, readOnly });
}
