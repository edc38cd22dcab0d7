// One reader of a ledger for the commands that look things up in it (ledger status|failed|find, trace, tickets,
// reconcile): the ledger files or one PostgreSQL ledger, behind the same interface. Which ledger: LedgerRefs made by
// the one rule (ref.ts resolveLedgers), a PostgreSQL one with its connection settings.
import { SvcIngestError } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { FoundLine } from './file/find.ts';
import type { LedgerReadStats } from './file/read.ts';
import type { LedgerRef, PgLedgerRef } from './ref.ts';
import type { LedgerStatus, OutstandingFailure } from './status.ts';

/** How a reader reports and what it requires. */
export interface ReaderOptions {
  logger: Logger;
  /** Ledger files: a warning for each with unreadable lines (default); false when the caller reports them. */
  warnBadLines?: boolean;
  /** A database without the ledger's schema is LEDGER_READ (ledger status|failed|find); else it reads as empty. */
  requireLedger?: boolean;
}

/** Connects to the PostgreSQL ledger `ref` as its connection settings say (`write`: may create its schema). */
export async function connectLedger(ref: PgLedgerRef, logger: Logger, write: boolean) {
  const { connectLedgerDb } = await import('./postgres/schema-check.ts');
  return connectLedgerDb(ref, { logger, write });
}

/** Which outstanding ids or status: those of one destination (as the ledger records it), or all. */
export interface ForDestination {
  destination?: string | undefined;
}

/**
 * What the look-up commands ask of a ledger.
 * @example const r = await openLedgerReader(resolveLedgers(config, opts.ledger), { logger }); try { await r.find(ids, onHit) } finally { await r.close() }
 */
export interface LedgerReader {
  /** What a report names as the ledgers: the files' paths, or the database's location (no password). */
  readonly locations: string[];
  /** Every outcome naming one of `ids`, in the order recorded; the lines (outcomes) read and unreadable ones skipped. */
  find(ids: Set<string>, onHit: (hit: FoundLine) => void): Promise<{ lines: number; bad: number }>;
  /** The transaction ids of every outcome recorded by one of the runs `runIds`. */
  runTransactions(runIds: Set<string>, onId: (id: string) => void): Promise<void>;
  /** `ledger status`: runs, batches, ids, outstanding failures. */
  status(opts: ForDestination): Promise<LedgerStatus>;
  /** `ledger failed`: every outstanding failed id once, with its last failure, in ledger order. */
  outstandingFailures(opts: ForDestination): AsyncIterable<OutstandingFailure>;
  close(): Promise<void>;
}

/**
 * Opens a reader of the ledgers `refs` name: ledger files (each must exist: a mistyped path is an error, not an empty
 * ledger), or one PostgreSQL ledger (connected read-only, its schema checked).
 */
export async function openLedgerReader(refs: readonly LedgerRef[], o: ReaderOptions): Promise<LedgerReader> {
  const pg = refs.find((r) => r.kind === 'postgres');
  if (pg === undefined) {
    const { checkLedgerPaths } = await import('./file/query.ts');
    const paths = await checkLedgerPaths(refs.filter((r) => r.kind === 'file').map((r) => r.path));
    return fileReader(paths, o.warnBadLines === false ? null : o.logger);
  }
  const [{ db, hasSchema }, q] = await Promise.all([
    connectLedger(pg, o.logger, false),
    import('./postgres/query.ts'),
  ]);
  if (!hasSchema && o.requireLedger) {
    await db.close();
    throw new SvcIngestError(
      'LEDGER_READ',
      `the database ${db.location} holds no ledger (no svc_ingest schema): nothing was ever sent with it`,
    );
  }
  const read = <T>(what: Promise<T>): Promise<T> =>
    what.catch((err: unknown) => {
      throw db.fail('LEDGER_READ', 'cannot read the ledger', err);
    });
  return {
    locations: [db.location],
    async find(ids, onHit) {
      // A database that holds no ledger yet (no schema) has nothing to find.
      if (!hasSchema) return { lines: 0, bad: 0 };
      await read(q.pgFind(db, ids, onHit));
      const r = await read(db.query('other', 'SELECT count(*)::bigint AS n FROM svc_ingest.batches'));
      return { lines: Number(r.rows[0]?.n ?? 0), bad: 0 };
    },
    async runTransactions(runIds, onId) {
      if (!hasSchema) return;
      const r = await read(
        db.query(
          'other',
          'SELECT unnest(transaction_ids) AS id FROM svc_ingest.batches WHERE run_id = ANY($1::text[]) ORDER BY seq',
          [[...runIds]],
        ),
      );
      for (const row of r.rows) onId(String(row.id));
    },
    status: (opts) => read(q.pgLedgerStatus(db, destinationOf(opts))),
    async *outstandingFailures(opts) {
      const it = q.pgOutstandingFailures(db, undefined, destinationOf(opts))[Symbol.asyncIterator]();
      for (;;) {
        const next = await read(it.next());
        if (next.done) return;
        yield next.value;
      }
    },
    close: () => db.close(),
  };
}

/** The destination option as the queries take it (no key when none). */
function destinationOf(opts: ForDestination): { destination?: string } {
  return opts.destination === undefined ? {} : { destination: opts.destination };
}

/** The one warning for a ledger file with unreadable lines (torn or foreign), which are skipped. */
export function warnBadLines(logger: Logger | null, path: string, s: LedgerReadStats): void {
  if (s.bad > 0)
    logger?.warn(
      { event: 'ledger.bad_lines', ledger: path, count: s.bad, lines: s.badLines },
      'ledger has unreadable lines (torn or foreign); they are skipped',
    );
}

function fileReader(paths: string[], logger: Logger | null): LedgerReader {
  return {
    locations: paths,
    async find(ids, onHit) {
      const { findInLedgers } = await import('./file/find.ts');
      const read = await findInLedgers(paths, ids, onHit);
      for (const r of read) warnBadLines(logger, r.path, r.stats);
      return {
        lines: read.reduce((n, r) => n + r.stats.lines, 0),
        bad: read.reduce((n, r) => n + r.stats.bad, 0),
      };
    },
    async runTransactions(runIds, onId) {
      const { readLedger } = await import('./file/read.ts');
      for (const path of paths)
        for await (const line of readLedger(path))
          if (typeof line.runId === 'string' && runIds.has(line.runId))
            for (const id of line.transactionIds as unknown[]) if (typeof id === 'string') onId(id);
    },
    async status(opts) {
      const { ledgerStatus } = await import('./file/query.ts');
      const status = await ledgerStatus(paths, destinationOf(opts));
      for (const l of status.ledgers)
        warnBadLines(logger, l.path, { lines: l.lines, bad: l.badLines, badLines: l.badLineNumbers });
      return status;
    },
    async *outstandingFailures(opts) {
      const { outstandingFailures } = await import('./file/query.ts');
      yield* outstandingFailures(paths, (path, s) => warnBadLines(logger, path, s), destinationOf(opts));
    },
    close: async () => {},
  };
}
