// One reader of a ledger for the commands that look things up in it (trace, tickets, reconcile): the ledger files or
// one PostgreSQL ledger, behind the same interface. Which ledger: a LedgerRef (src/cli/ledger-choice.ts makes it
// from --ledger, SVC_LEDGER_URL / ledger.url and send.ledgerPath).
import type { Logger } from '../log.ts';
import type { FoundLine } from './file/find.ts';

/** The ledger(s) to read: files (read together), or one PostgreSQL ledger by its URL. */
export type LedgerRef = { pg: string } | { files: string[] };

/** How a PostgreSQL ledger is reached (the ledger.* settings). */
export interface LedgerConnection {
  passwordFile?: string | undefined;
  waitMs: number;
  poolMax: number;
  allowPlaintext: boolean;
  logger: Logger;
  /** Ledger files: a warning for each with unreadable lines (default); false when the caller reports them. */
  warnBadLines?: boolean;
}

/**
 * What the look-up commands ask of a ledger.
 * @example const r = await openLedgerReader({ files: ['l.ndjson'] }, conn); try { await r.find(ids, onHit) } finally { await r.close() }
 */
export interface LedgerReader {
  /** What a report names as the ledgers: the files' paths, or the database's location (no password). */
  readonly locations: string[];
  /** Every outcome naming one of `ids`, in the order recorded; the lines (outcomes) read and unreadable ones skipped. */
  find(ids: Set<string>, onHit: (hit: FoundLine) => void): Promise<{ lines: number; bad: number }>;
  /** The transaction ids of every outcome recorded by one of the runs `runIds`. */
  runTransactions(runIds: Set<string>, onId: (id: string) => void): Promise<void>;
  close(): Promise<void>;
}

/** Opens a reader of the ledger `ref` names (a PostgreSQL ledger: connected read-only, its schema checked). */
export async function openLedgerReader(ref: LedgerRef, conn: LedgerConnection): Promise<LedgerReader> {
  if ('files' in ref) return fileReader(ref.files, conn.warnBadLines === false ? null : conn.logger);
  const [{ connectLedgerDb }, { pgFind }] = await Promise.all([
    import('./postgres/schema-check.ts'),
    import('./postgres/query.ts'),
  ]);
  const { warnBadLines: _, ...pg } = conn;
  const { db, hasSchema } = await connectLedgerDb(ref.pg, { ...pg, write: false });
  const read = <T>(what: Promise<T>): Promise<T> =>
    what.catch((err: unknown) => {
      throw db.fail('LEDGER_READ', 'cannot read the ledger', err);
    });
  return {
    locations: [db.location],
    async find(ids, onHit) {
      // A database that holds no ledger yet (no schema) has nothing to find.
      if (!hasSchema) return { lines: 0, bad: 0 };
      await read(pgFind(db, ids, onHit));
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
    close: () => db.close(),
  };
}

function fileReader(paths: string[], logger: Logger | null): LedgerReader {
  return {
    locations: paths,
    async find(ids, onHit) {
      const { findInLedgers } = await import('./file/find.ts');
      const read = await findInLedgers(paths, ids, onHit);
      for (const r of read)
        if (r.stats.bad > 0)
          logger?.warn(
            { event: 'ledger.bad_lines', ledger: r.path, count: r.stats.bad },
            'unreadable ledger lines skipped',
          );
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
    close: async () => {},
  };
}
