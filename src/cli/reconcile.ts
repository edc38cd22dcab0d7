// `svc-ingest reconcile`: matches customers' redemptions against the transactions our ledgers show as acked.

import { type Command, Option } from 'commander';
import { EXIT, exitWith, SvcIngestError } from '../errors.ts';
import type { FoundLine } from '../ledger/file/find.ts';
import type { LedgerReader } from '../ledger/reader.ts';
import { createLogger, type Logger, stderrLine } from '../log.ts';
import { refuseTypedCardNumbers } from '../mask/typed.ts';
import type { ExportTransaction } from '../reconcile/customers.ts';
import type { CustomerReconciliation, FetchedCustomer, ReconcileReport } from '../reconcile/reconcile.ts';
import type { TicketRecord } from '../tickets/state.ts';
import type { CustomerRedemptions } from '../trace/trace.ts';
import {
  addConnectionOptions,
  addExamples,
  addLedgerOption,
  type CommonOptions,
  collect,
  loadCommandConfig,
  parseIntOption,
  printJson,
  printText,
  rejectsFileOf,
  withContext,
} from './common.ts';
import { chooseLedger, storedTickets, withLedgerReader } from './ledger-choice.ts';

interface ReconcileOptions extends CommonOptions {
  customer?: string[];
  customersFrom?: string[];
  column?: string;
  fromExport?: string[];
  mapping?: string;
  format?: 'csv' | 'ndjson';
  delimiter?: string;
  ledger?: string[];
  lookbackDays?: string;
  concurrency?: string;
  currency: string;
  json?: boolean;
  ndjson?: boolean;
  transaction?: string[];
  transactionsFrom?: string[];
  fromRun?: string[];
  byTransaction?: boolean;
  rejects?: string;
}

const MAX_CONCURRENCY = 64;

/** Column widths of a text table: each the longest cell of its column. */
function table(rows: string[][], rightAligned: Set<number>): string[] {
  const widths: number[] = [];
  for (const r of rows) {
    for (let i = 0; i < r.length; i++) widths[i] = Math.max(widths[i] ?? 0, (r[i] as string).length);
  }
  return rows.map((r) =>
    r
      .map((c, i) => (rightAligned.has(i) ? c.padStart(widths[i] ?? 0) : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
}

const rewardsText = (rewards: CustomerReconciliation['rewards'], pick: 'total' | 'unmatched' = 'total') =>
  Object.entries(rewards)
    .map(([c, t]) => `${c} ${t[pick]}`)
    .join(', ') || '-';

/** The readable form: a table of customers, then each redemption and what the ledgers say of it. */
export function formatReport(r: ReconcileReport): string[] {
  const rows = [['customer', 'redemptions', 'matched', 'unmatched', 'rewards', 'requestId']];
  for (const c of r.customers) {
    rows.push(
      c.error
        ? [
            c.sourceCustomerId,
            '-',
            '-',
            '-',
            '-',
            `could not be checked: ${c.error.code}: ${c.error.message}`,
          ]
        : [
            c.sourceCustomerId,
            String(c.redemptions),
            String(c.matched),
            String(c.unmatched),
            rewardsText(c.rewards),
            c.requestId ?? '-',
          ],
    );
  }
  const lines = table(rows, new Set([1, 2, 3]));
  const details: string[] = [];
  for (const c of r.customers) {
    for (const i of c.items) {
      const reward =
        i.reward === 'paid'
          ? `reward paid (settlement run ${i.rewardSettlementRunDate ?? '?'})`
          : `reward PENDING (approved; settlement run ${i.rewardSettlementRunDate ?? 'not set'})`;
      const tickets = i.tickets
        .map(
          (k) =>
            `; ticket ${k.sourceTicketId} ${k.phase}${k.resolutionType ? `: ${k.resolutionType}` : ''}${k.errorMessage ? `: ${k.errorMessage}` : ''}`,
        )
        .join('');
      const what = i.acked
        ? `matched: batch ${i.acked.batchId ?? '?'}, requestId ${i.acked.requestId ?? '?'}, acked ${i.acked.ts ?? '?'}`
        : i.failed
          ? `UNMATCHED: no acked ledger line; last failed ${i.failed.ts ?? '?'} in batch ${i.failed.batchId ?? '?'}: ${i.failed.error ?? '?'}`
          : 'UNMATCHED: unknown to the ledger';
      details.push(
        `  ${c.sourceCustomerId}  ${i.redemptionId}  transaction ${i.transactionId}  ${i.currency} ${i.amount}  ${i.merchantName ?? `ad ${i.adId}`}  ${i.redemptionDate}  ${reward}  ${what}${tickets}`,
      );
    }
  }
  if (details.length > 0) lines.push('', 'redemptions:', ...details);
  const t = r.totals;
  lines.push(
    '',
    `total: ${t.customers} customer(s), ${t.redemptions} redemption(s), ${t.matched} matched, ${t.unmatched} unmatched, ` +
      `${t.paid} paid, ${t.pending} pending; ` +
      `rewards ${rewardsText(t.rewards)} (unmatched ${rewardsText(t.rewards, 'unmatched')})` +
      (t.customersFailed > 0 ? `; ${t.customersFailed} customer(s) could not be checked` : ''),
    `ledgers: ${r.ledgers.join(', ')} (${r.ledgerLines} lines${r.ledgerBadLines > 0 ? `, ${r.ledgerBadLines} unreadable skipped` : ''})`,
  );
  return lines;
}

/** Exit status of a finished reconciliation: 3 if a customer could not be checked, 2 if a redemption is unmatched. */
export function reconcileExit(r: ReconcileReport): number {
  if (r.totals.customersFailed > 0) return EXIT.FAILED;
  if (r.totals.unmatched > 0) return EXIT.REJECTED;
  return EXIT.OK;
}

function usage(message: string): SvcIngestError {
  return new SvcIngestError('USAGE_INVALID', message);
}

export async function runReconcile(opts: ReconcileOptions): Promise<number> {
  if (opts.json && opts.ndjson) throw usage('--json and --ndjson: choose one');
  const lookback =
    opts.lookbackDays === undefined ? undefined : parseIntOption(opts.lookbackDays, '--lookback-days');
  const concurrency = opts.concurrency === undefined ? 4 : parseIntOption(opts.concurrency, '--concurrency');
  if (concurrency < 1 || concurrency > MAX_CONCURRENCY) {
    throw usage(`--concurrency: expected an integer 1..${MAX_CONCURRENCY}, got ${concurrency}`);
  }
  const { isCurrencyCode } = await import('../model/codes.ts');
  const currency = opts.currency.trim().toUpperCase();
  if (!isCurrencyCode(currency)) {
    throw usage(`--currency: expected an ISO 4217 code such as USD, got ${JSON.stringify(opts.currency)}`);
  }
  const byTransaction =
    opts.byTransaction === true ||
    (opts.transaction ?? []).length + (opts.transactionsFrom ?? []).length + (opts.fromRun ?? []).length > 0;
  const sources =
    (opts.customer ?? []).length + (opts.customersFrom ?? []).length + (opts.fromExport ?? []).length;
  if (sources === 0) throw usage('no customers: give --customer, --customers-from or --from-export');
  refuseTypedCardNumbers((opts.customer ?? []).map((c) => ['--customer', c] as const));
  if (byTransaction && opts.ndjson) throw usage('--ndjson: reconcile by transaction prints --json or text');
  // The ledger is checked before anything is read or asked of the service: files, or one PostgreSQL ledger.
  const config = loadCommandConfig(opts);
  const choice = await chooseLedger(opts.ledger, config, createLogger(config.log));
  const [{ collectCustomers }, { fetchRedemptions, matchRedemptions }] = await Promise.all([
    import('../reconcile/customers.ts'),
    import('../reconcile/reconcile.ts'),
  ]);
  const { customers, exports, transactions } = await collectCustomers({
    keepTransactions: byTransaction,
    ...(opts.customer ? { customers: opts.customer } : {}),
    ...(opts.customersFrom ? { lists: opts.customersFrom } : {}),
    ...(opts.column !== undefined ? { column: opts.column } : {}),
    ...(opts.fromExport ? { exports: opts.fromExport } : {}),
    ...(opts.mapping !== undefined ? { mapping: opts.mapping } : {}),
    ...(opts.format !== undefined ? { format: opts.format } : {}),
    ...(opts.delimiter !== undefined ? { delimiter: opts.delimiter } : {}),
  });
  if (customers.length === 0) {
    stderrLine(
      'warn',
      'reconcile.empty',
      'svc-ingest: no customers: the customer sources given hold none (exit 4)',
      {
        exitStatus: EXIT.EMPTY,
      },
    );
    return EXIT.EMPTY;
  }
  return withContext(opts, async ({ client, logger }) => {
    for (const e of exports) {
      logger[e.rejected > 0 ? 'warn' : 'info'](
        { event: 'reconcile.export', ...e },
        `${e.source}: ${e.customers} customer(s) from ${e.valid} valid record(s); ${e.rejected} rejected record(s) ignored`,
      );
    }
    const { fetched, unavailable } = await fetchRedemptions(client, customers, {
      concurrency,
      ...(lookback === undefined ? {} : { lookbackDays: lookback }),
    });
    // SEND_UNAVAILABLE: exit 5, one line (and with --json / --ndjson the error object on stdout) from main.ts.
    if (unavailable) throw unavailable;
    const tickets = await storedTickets(choice, logger);
    return withLedgerReader(
      choice,
      logger,
      async (ledger) => {
        if (byTransaction) {
          const ids = await transactionIds(opts, transactions, ledger);
          return byTransactions({
            opts,
            ledger,
            ids,
            customers,
            exportPairs: transactions,
            fetched,
            tickets,
          });
        }
        return reportRedemptions(
          await matchRedemptions(fetched, ledger, currency, { tickets }),
          opts,
          logger,
        );
      },
      false,
    );
  });
}

/** Prints the report of reconcile by customer; returns the exit status. */
function reportRedemptions(report: ReconcileReport, opts: ReconcileOptions, logger: Logger): number {
  if (report.ledgerBadLines > 0) {
    logger.warn(
      { event: 'ledger.bad_lines', count: report.ledgerBadLines },
      'unreadable ledger lines skipped',
    );
  }
  if (opts.json) printJson(report);
  else if (opts.ndjson) for (const c of report.customers) printJson(c);
  else printText(formatReport(report));
  return reconcileExit(report);
}

/** The transactions to reconcile: --transaction, --transactions-from files, and the exports' valid records. */
async function transactionIds(
  opts: ReconcileOptions,
  pairs: ExportTransaction[],
  ledger: LedgerReader,
): Promise<string[]> {
  const { readIdLines } = await import('../reconcile/customers.ts');
  const ids = new Set<string>();
  if ((opts.fromRun ?? []).length > 0) {
    // A run's transactions: the ids of every ledger line it wrote (acknowledged or failed).
    await ledger.runTransactions(new Set(opts.fromRun), (id) => ids.add(id));
  }
  for (const t of opts.transaction ?? []) if (t.trim() !== '') ids.add(t.trim());
  for (const f of opts.transactionsFrom ?? []) await readIdLines(f, undefined, (v) => ids.add(String(v)));
  for (const p of pairs) ids.add(p.transactionId);
  if (ids.size === 0)
    throw usage(
      'no transactions: give --transaction, --transactions-from, --from-run (a run the ledgers hold) or --from-export',
    );
  return [...ids];
}

/**
 * Reconcile from transactions: each one's verdict as `trace` gives it (earned and paid, pending, none yet,
 * disputed; or never acknowledged), from the same facts.
 */
async function byTransactions(a: {
  opts: ReconcileOptions;
  ledger: LedgerReader;
  ids: string[];
  customers: string[];
  exportPairs: ExportTransaction[];
  fetched: FetchedCustomer[];
  tickets: TicketRecord[];
}): Promise<number> {
  const [{ findRejects }, { traceTransactions, traceExit, formatTraces, customerRedemptionsOf }] =
    await Promise.all([import('../trace/rejects.ts'), import('../trace/trace.ts')]);
  const wanted = new Set(a.ids);
  const hits: FoundLine[] = [];
  await a.ledger.find(wanted, (h) => hits.push(h));
  const config = loadCommandConfig(a.opts);
  const rejects = await findRejects(rejectsFileOf(config, a.opts.rejects), wanted);
  const redemptions = new Map<string, CustomerRedemptions>();
  const owner = new Map<string, string>();
  for (const p of a.exportPairs) owner.set(p.transactionId, p.sourceCustomerId);
  for (const f of a.fetched) {
    redemptions.set(f.sourceCustomerId, customerRedemptionsOf(f));
    for (const r of f.redemptions)
      if (!owner.has(String(r.transactionId))) owner.set(String(r.transactionId), f.sourceCustomerId);
  }
  const only = a.customers.length === 1 ? (a.customers[0] as string) : null;
  const traces = traceTransactions(a.ids, {
    hits,
    rejects: rejects.hits,
    customerOf: (id) => owner.get(id) ?? only,
    redemptions,
    tickets: a.tickets,
    now: Date.now(),
  });
  const verdicts: Record<string, number> = {};
  for (const t of traces) verdicts[t.verdict] = (verdicts[t.verdict] ?? 0) + 1;
  const status = traceExit(traces);
  if (a.opts.json)
    printJson({
      ledgers: a.ledger.locations,
      transactions: traces,
      totals: { transactions: traces.length, verdicts },
      exitStatus: status,
    });
  else
    printText([
      ...formatTraces(traces),
      '',
      `total: ${traces.length} transaction(s): ${Object.entries(verdicts)
        .map(([v, n]) => `${n} ${v}`)
        .join(', ')}`,
    ]);
  return status;
}

export function define(program: Command): void {
  const cmd = program
    .command('reconcile')
    .description(
      "match customers' redemptions against the transactions the ledger shows as acknowledged (each with the batch " +
        'and service requestId that carried it), with reward totals by currency',
    )
    .option('--customer <id...>', 'sourceCustomerId(s); repeatable', collect)
    .option(
      '--customers-from <file>',
      "customer ids: a .csv/.ndjson/.jsonl file (or '-' with --format) is read as a table, the ids in --column;\n" +
        "any other file (or '-') holds one id a line, '#' comments skipped; repeatable",
      collect,
    )
    .option(
      '--column <name>',
      'column (CSV header) or key (NDJSON) of --customers-from tables (default sourceCustomerId)',
    )
    .option(
      '--from-export <file>',
      'every sourceCustomerId of the valid records of an export, read through --mapping; repeatable',
      collect,
    )
    .option('--mapping <file|name>', 'mapping profile of --from-export (default canonical)')
    .addOption(
      new Option('--format <format>', 'format of --from-export / --customers-from files').choices([
        'csv',
        'ndjson',
      ]),
    )
    .option('--delimiter <char>', 'CSV delimiter of those files (default: the profile\'s, else ",")')
    .option(
      '--transaction <id...>',
      'reconcile by transaction: these ids (their customer: --customer, or the one whose redemptions name them); repeatable',
      collect,
    )
    .option('--transactions-from <file>', 'reconcile by transaction: ids one a line; repeatable', collect)
    .option(
      '--from-run <runId>',
      "reconcile by transaction: every id of a send run's ledger lines (ledger status lists the runs); repeatable",
      collect,
    )
    .option('--by-transaction', 'reconcile the transactions of --from-export (each with its own customer)')
    .option('--rejects <path>', 'by transaction: the rejects file searched (default send.rejectsPath)');
  addLedgerOption(cmd);
  addConnectionOptions(
    cmd
      .option('--lookback-days <n>', 'lookbackWindowInDays, 0..396 (service default 120)')
      .option('--concurrency <n>', `redemption calls at once, 1..${MAX_CONCURRENCY}`, '4')
      .option('--currency <code>', "the rewards' currency (the service's redemptions carry none)", 'USD')
      .option('--json', 'print the whole report as one JSON object on stdout')
      .option('--ndjson', 'print one JSON line per customer on stdout'),
  ).addHelpText(
    'after',
    '\nExit status: 0 every redemption matched; 1 could not run; 2 some redemptions unmatched;\n' +
      '3 some customers could not be checked (their error is in the report); 4 no customers in the sources;\n' +
      '5 service unavailable (nothing reported).\n' +
      "By transaction (--transaction, --transactions-from, --from-run, --by-transaction), the exit status is trace's:\n" +
      '0 all rewards paid; 2 rejected; 3 failed; 4 not read; 6 pending; 7 no reward (yet); 8 disputed; 9 not checked.',
  );
  addExamples(cmd, [
    ['svc-ingest reconcile --customer cust-0001 --customer cust-0002', 'two customers, default ledger'],
    [
      'svc-ingest reconcile --customers-from customers.txt --ledger /var/lib/svc-ingest/2026.ndjson --ledger /var/lib/svc-ingest/2025.ndjson',
      'customers one a line, two ledgers (both are read)',
    ],
    [
      'svc-ingest reconcile --customers-from enrolled.csv --column CUST_NO --ndjson',
      'customers from a CSV column, one JSON line per customer',
    ],
    [
      'svc-ingest reconcile --from-export exports/2026-11-20.csv --mapping northwind-csv --json',
      "every customer of last night's export, report as JSON",
    ],
  ]);
  cmd.action(async (opts: ReconcileOptions) => {
    exitWith(await runReconcile(opts));
  });
}
