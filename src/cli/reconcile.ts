// `svc-ingest reconcile`: matches each customer's redemptions against the transactions our ledger shows as acked.
import type { Command } from 'commander';
import type { ConfigFlags } from '../config/index.ts';
import { EXIT, ExitError } from '../errors.ts';
import type { LedgerReadStats } from '../ledger/read.ts';
import { readLedger } from '../ledger/read.ts';
import {
  addConnectionOptions,
  addExamples,
  type CommonOptions,
  parseIntOption,
  printJson,
  printText,
  withContext,
} from './common.ts';

interface ReconcileOptions extends CommonOptions {
  customer: string[];
  ledger?: string;
  lookbackDays?: string;
  json?: boolean;
}

/**
 * The reconciliation of one customer.
 * @example { sourceCustomerId: 'c-1', redemptions: 3, matched: ['t-1', 't-2'], unmatched: ['t-9'], requestId: '…' }
 */
export interface CustomerReconciliation {
  sourceCustomerId: string;
  redemptions: number;
  /** Redemption transactionIds found in an acked ledger line. */
  matched: string[];
  /** Redemption transactionIds no acked ledger line knows. */
  unmatched: string[];
  requestId: string;
}

/**
 * What `reconcile --json` prints.
 * @example { ledger: 'ledger/transactions.ndjson', ledgerLines: 10, ledgerBadLines: 0, customers: [...], totals: { redemptions: 3, matched: 2, unmatched: 1 } }
 */
export interface ReconcileReport {
  ledger: string;
  ledgerLines: number;
  ledgerBadLines: number;
  customers: CustomerReconciliation[];
  totals: { customers: number; redemptions: number; matched: number; unmatched: number };
}

/** Which of `wanted` appear in an acked line of the ledger (one streaming pass). */
export async function findAcked(
  ledgerPath: string,
  wanted: Set<string>,
  stats: LedgerReadStats,
): Promise<Set<string>> {
  const found = new Set<string>();
  if (wanted.size === 0) return found;
  for await (const line of readLedger(ledgerPath, stats)) {
    if (line.status !== 'acked') continue;
    for (const id of line.transactionIds) if (wanted.has(id)) found.add(id);
  }
  return found;
}

export function formatReport(r: ReconcileReport): string[] {
  const lines: string[] = [];
  for (const c of r.customers) {
    lines.push(
      `customer ${c.sourceCustomerId}: ${c.redemptions} redemption(s), ${c.matched.length} matched, ${c.unmatched.length} unknown to the ledger`,
    );
    for (const id of c.unmatched) lines.push(`  unmatched transaction ${id}`);
  }
  const t = r.totals;
  lines.push(
    `total: ${t.redemptions} redemption(s), ${t.matched} matched, ${t.unmatched} unmatched (ledger ${r.ledger})`,
  );
  if (r.ledgerBadLines > 0) lines.push(`note: ${r.ledgerBadLines} unreadable ledger line(s) skipped`);
  return lines;
}

export async function runReconcile(opts: ReconcileOptions): Promise<void> {
  const lookback =
    opts.lookbackDays === undefined ? undefined : parseIntOption(opts.lookbackDays, '--lookback-days');
  const extra: ConfigFlags =
    opts.ledger === undefined ? {} : { 'send.ledgerPath': { value: opts.ledger, flag: '--ledger' } };
  const report = await withContext(
    opts,
    async ({ client, config, logger }) => {
      const fetched: Array<{ id: string; requestId: string; txIds: string[] }> = [];
      for (const id of opts.customer) {
        const res = await client.getRedemptions(
          id,
          lookback === undefined ? {} : { lookbackWindowInDays: lookback },
        );
        fetched.push({
          id,
          requestId: res.requestId,
          txIds: res.redemptions.map((r) => String(r.transactionId)),
        });
      }
      const stats: LedgerReadStats = { lines: 0, bad: 0, badLines: [] };
      const wanted = new Set(fetched.flatMap((f) => f.txIds));
      const acked = await findAcked(config.send.ledgerPath, wanted, stats);
      if (stats.bad > 0) logger.warn({ bad: stats.bad, lines: stats.badLines }, 'ledger.bad_lines');
      const customers = fetched.map((f) => ({
        sourceCustomerId: f.id,
        redemptions: f.txIds.length,
        matched: f.txIds.filter((t) => acked.has(t)),
        unmatched: f.txIds.filter((t) => !acked.has(t)),
        requestId: f.requestId,
      }));
      const sum = (pick: (c: CustomerReconciliation) => number) => customers.reduce((n, c) => n + pick(c), 0);
      return {
        ledger: config.send.ledgerPath,
        ledgerLines: stats.lines,
        ledgerBadLines: stats.bad,
        customers,
        totals: {
          customers: customers.length,
          redemptions: sum((c) => c.redemptions),
          matched: sum((c) => c.matched.length),
          unmatched: sum((c) => c.unmatched.length),
        },
      } satisfies ReconcileReport;
    },
    extra,
  );
  if (opts.json) printJson(report);
  else printText(formatReport(report));
  if (report.totals.unmatched > 0) throw new ExitError(EXIT.REJECTED, 'unmatched redemptions');
}

export function define(program: Command): void {
  const cmd = addConnectionOptions(
    program
      .command('reconcile')
      .description(
        "match customers' redemptions against the acked transactions of the ledger (exit 2 if any is unmatched)",
      )
      .requiredOption('--customer <id...>', 'sourceCustomerId(s)')
      .option('--ledger <path>', 'ledger to read (default: send.ledgerPath, env SVC_LEDGER_PATH)')
      .option('--lookback-days <n>', 'lookbackWindowInDays, 0..396 (service default 120)')
      .option('--json', 'print the report as JSON on stdout'),
  );
  addExamples(cmd, [
    ['svc-ingest reconcile --customer cust-0001 --customer cust-0002', 'two customers, default ledger'],
    [
      'svc-ingest reconcile --customer cust-0001 --ledger /var/lib/svc-ingest/transactions.ndjson --json',
      'a named ledger, report as JSON',
    ],
  ]).action(async (opts: ReconcileOptions) => runReconcile(opts));
}
