// `svc-ingest trace ID...`: one verdict per transaction — never read, rejected, failed, or acknowledged and then
// its reward (paid, pending, none yet) or a ticket about it — from the ledgers and the rejects file, asking the
// service only for the customer's redemptions and the tickets that name the ids.

import type { Command } from 'commander';
import { EXIT, exitWith, SvcIngestError } from '../errors.ts';
import { refuseTypedCardNumbers } from '../mask/typed.ts';
import type { TicketRecord } from '../tickets/state.ts';
import type { CustomerRedemptions, TransactionTrace } from '../trace/trace.ts';
import {
  addConnectionOptions,
  addExamples,
  addLedgerOption,
  type CommandContext,
  type CommonOptions,
  loadCommandConfig,
  printJson,
  printText,
  rejectsFileOf,
  setUp,
} from './common.ts';
import { chooseLedger, findHits, storedTickets } from './ledger-choice.ts';
import { addSettingOptions, settingFlags } from './settings.ts';

interface TraceOptions extends CommonOptions {
  customer?: string;
  ledger?: string[];
  ledgerUrl?: string;
  rejects?: string;
  json?: boolean;
}

/** Asks the service: each customer's redemptions, and each ticket naming an id read back (404: as stored). */
async function askService(
  ctx: CommandContext,
  customers: string[],
  tickets: TicketRecord[],
): Promise<{ redemptions: Map<string, CustomerRedemptions>; unavailable?: SvcIngestError }> {
  const [{ fetchRedemptions }, { customerRedemptionsOf }] = await Promise.all([
    import('../reconcile/reconcile.ts'),
    import('../trace/trace.ts'),
  ]);
  const redemptions = new Map<string, CustomerRedemptions>();
  const { fetched, unavailable } = await fetchRedemptions(ctx.client, customers, { concurrency: 4 });
  for (const f of fetched) {
    redemptions.set(f.sourceCustomerId, customerRedemptionsOf(f));
  }
  if (unavailable) return { redemptions, unavailable };
  const { applyEvent, fetchedEvent } = await import('../tickets/state.ts');
  for (const t of tickets) {
    if (t.phase === 'error' || t.phase === 'closed') continue;
    try {
      const ticket = await ctx.client.getTicket(t.sourceTicketId);
      applyEvent(t, fetchedEvent(ticket));
    } catch (err) {
      ctx.logger.info(
        { event: 'trace.ticket_unread', sourceTicketId: t.sourceTicketId, error: (err as Error).message },
        'ticket not read back; its stored state is shown',
      );
    }
  }
  return { redemptions };
}

export async function runTrace(ids: string[], opts: TraceOptions): Promise<number> {
  refuseTypedCardNumbers([['--customer', opts.customer]]);
  const extra = settingFlags(opts, 'ledgerUrl');
  const config = loadCommandConfig(opts, extra);
  const wanted = new Set(ids.map((id) => id.trim()).filter((id) => id !== ''));
  if (wanted.size === 0) throw new SvcIngestError('USAGE_INVALID', 'no transaction id given');
  const ctx = await setUp(opts, extra);
  try {
    const choice = await chooseLedger(opts.ledger, config, ctx.logger);
    const hits = await findHits(choice, wanted, ctx.logger);
    const { findRejects } = await import('../trace/rejects.ts');
    const rejectsFile = rejectsFileOf(config, opts.rejects);
    const rejects = await findRejects(rejectsFile, wanted);
    if (!rejects.exists && opts.rejects !== undefined)
      throw new SvcIngestError('LEDGER_READ', `rejects file ${rejectsFile}: no such file`, {
        source: rejectsFile,
      });
    const tickets = (await storedTickets(choice, ctx.logger)).filter((t) =>
      t.transactions.some((x) => wanted.has(x)),
    );
    const customerOf = (id: string): string | null =>
      opts.customer ??
      tickets.find((t) => t.transactions.includes(id) && t.sourceCustomerId)?.sourceCustomerId ??
      rejects.hits.find((r) => r.transactionId === id && r.sourceCustomerId)?.sourceCustomerId ??
      null;
    const customers = [...new Set([...wanted].map(customerOf).filter((c): c is string => c !== null))];
    const asked =
      customers.length > 0 || tickets.length > 0
        ? await askService(ctx, customers, tickets)
        : { redemptions: new Map<string, CustomerRedemptions>() };
    const { traceTransactions, traceExit, formatTraces } = await import('../trace/trace.ts');
    const traces: TransactionTrace[] = traceTransactions([...wanted], {
      hits,
      rejects: rejects.hits,
      customerOf,
      redemptions: asked.redemptions,
      tickets,
      now: Date.now(),
    });
    const status = asked.unavailable ? EXIT.UNAVAILABLE : traceExit(traces);
    if (opts.json)
      printJson({
        transactions: traces,
        exitStatus: status,
        ...(asked.unavailable
          ? { error: { code: asked.unavailable.code, message: asked.unavailable.message } }
          : {}),
      });
    else printText(formatTraces(traces));
    if (asked.unavailable)
      ctx.logger.error(
        { event: 'trace.unavailable', code: asked.unavailable.code },
        `${asked.unavailable.message} (rewards and tickets not checked)`,
      );
    return status;
  } finally {
    await ctx.close();
  }
}

export const TRACE_EXIT_HELP =
  '\nExit status (several ids: the first class present in this order wins — 4, 2, 3, 9, 8, 7, 6, 0):\n' +
  '  0 acknowledged and its reward paid (the settlement run date has come)\n' +
  '  1 could not run (usage, an unreadable ledger or rejects file, an authentication refusal)\n' +
  '  2 rejected (file, line and reasons shown; fix the record and send it again)\n' +
  '  3 failed after all retries (the next send resends it)\n' +
  '  4 not read: no ledger or rejects file given holds it\n' +
  '  5 service unavailable: the ledger verdicts are shown, rewards and tickets not checked\n' +
  '  6 acknowledged, reward pending (approved, its settlement run still ahead)\n' +
  '  7 acknowledged, no reward (yet): no redemption of the customer names it\n' +
  '  8 disputed: a ticket names it (its state and resolution shown)\n' +
  '  9 acknowledged, reward not checked: no --customer (and none known from a ticket), or the\n' +
  "    customer's redemptions could not be read (the reason shown)";

export function define(program: Command): void {
  const cmd = program
    .command('trace')
    .description(
      'what became of each transaction: never read, rejected, failed, or acknowledged (when, batch, requestId, file ' +
        'and lines) and then its reward (paid, pending, none yet) or the ticket that disputes it',
    )
    .argument('<id...>', 'transactionId(s) as sent')
    .option('--customer <id>', 'the customer whose redemptions are asked for (sourceCustomerId)')
    .option('--rejects <path>', 'rejects file to search (default: send.rejectsPath, env SVC_REJECTS_PATH)')
    .option('--json', 'print {transactions: [...], exitStatus} as one JSON object on stdout');
  addSettingOptions(addLedgerOption(cmd), 'ledgerUrl');
  addConnectionOptions(cmd).addHelpText('after', TRACE_EXIT_HELP);
  addExamples(cmd, [
    [
      'svc-ingest trace can-csv-0001 --customer cust-1000',
      'did customer cust-1000 get the reward for can-csv-0001?',
    ],
    ['svc-ingest trace NW20251011 NW20251099 --customer C70000 --json', 'two ids, as JSON'],
    [
      'svc-ingest trace tx-1 --ledger-url postgres://svc@db.internal/ledger',
      'on the shared PostgreSQL ledger',
    ],
  ]);
  cmd.action(async (ids: string[], opts: TraceOptions) => {
    exitWith(await runTrace(ids, opts));
  });
}
