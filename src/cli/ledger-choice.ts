// The ledger a support command reads — ledger files, or one PostgreSQL ledger — and the few things it asks of it:
// the lines naming some ids, and the ticket store that goes with it.
import type { Config } from '../config/index.ts';
import { SvcIngestError } from '../errors.ts';
import type { FoundLine } from '../ledger/file/find.ts';
import { isPostgresUrl } from '../ledger/postgres/url.ts';
import type { Logger } from '../log.ts';
import type { TicketRecord } from '../tickets/state.ts';
import type { TicketStore } from '../tickets/store.ts';
import { ledgerPaths } from './common.ts';

/** The ledger(s) to read: files, or one PostgreSQL ledger. */
export type LedgerChoice = { pg: string } | { files: string[] };

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

export async function findHits(choice: LedgerChoice, ids: Set<string>, config: Config, logger: Logger) {
  const hits: FoundLine[] = [];
  if ('files' in choice) {
    const { findInLedgers } = await import('../ledger/file/find.ts');
    const read = await findInLedgers(choice.files, ids, (h) => hits.push(h));
    for (const r of read)
      if (r.stats.bad > 0)
        logger.warn(
          { event: 'ledger.bad_lines', ledger: r.path, count: r.stats.bad },
          'unreadable ledger lines skipped',
        );
    return hits;
  }
  const [{ connectLedgerDb }, { pgFind }] = await Promise.all([
    import('../ledger/postgres/session.ts'),
    import('../ledger/postgres/query.ts'),
  ]);
  const { db, hasSchema } = await connectLedgerDb(choice.pg, {
    passwordFile: config.ledger.passwordFile,
    waitMs: config.ledger.waitMs,
    poolMax: config.ledger.poolMax,
    allowPlaintext: config.ledger.allowPlaintext,
    logger,
    write: false,
  });
  try {
    if (hasSchema)
      await pgFind(db, ids, (h) => hits.push(h)).catch((err: unknown) => {
        throw db.fail('LEDGER_READ', 'cannot read the ledger', err);
      });
  } finally {
    await db.close();
  }
  return hits;
}

export async function storedTickets(
  choice: LedgerChoice,
  config: Config,
  logger: Logger,
): Promise<TicketRecord[]> {
  const { openTicketStore, loadTickets } = await import('../tickets/store.ts');
  const store = await openTicketStore('pg' in choice ? choice.pg : (choice.files[0] as string), {
    logger,
    readOnly: true,
    passwordFile: config.ledger.passwordFile,
    waitMs: config.ledger.waitMs,
    poolMax: config.ledger.poolMax,
    allowPlaintext: config.ledger.allowPlaintext,
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
    logger,
    readOnly,
    passwordFile: config.ledger.passwordFile,
    waitMs: config.ledger.waitMs,
    poolMax: config.ledger.poolMax,
    allowPlaintext: config.ledger.allowPlaintext,
  });
}
