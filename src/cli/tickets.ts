// `svc-ingest tickets create|get|listen|status`: open a customer-issue ticket (stored, resubmitted until acknowledged),
// read it back, receive its webhook updates (each stored before it is answered), and list where the tickets stand.

import type { Command } from 'commander';
import { checkTicket } from '../client/checks.ts';
import { SvcNetworkError, unavailableError } from '../client/errors.ts';
import type { CreateTicketRequest, Ticket } from '../client/models.ts';
import { EXIT, SvcIngestError } from '../errors.ts';
import { createLogger } from '../log.ts';
import { refuseTypedCardNumbers } from '../mask/typed.ts';
import { classifyFailure } from '../send/classify.ts';
import { retryTimingOf } from '../send/retry-policy.ts';
import { fetchedEvent } from '../tickets/state.ts';
import type { TicketStore } from '../tickets/store.ts';
import {
  addConnectionOptions,
  addExamples,
  type CommandContext,
  parseIntOption,
  printJson,
  printText,
  withContext,
} from './common.ts';
import { findHits, type LedgerChoice, openStoreOf } from './ledger-choice.ts';
import { addSettingOptions } from './settings.ts';
import { addStoreOptions, ledgerOf, type StoreOptions, storeConfig, ticketFlags } from './ticket-store.ts';
import type { ListenOptions } from './tickets-listen.ts';

interface CreateOptions extends StoreOptions {
  ticketId: string;
  customer: string;
  offer: string;
  transaction: string[];
  description: string;
  author?: string;
  force?: boolean;
  maxAttempts: string;
  json?: boolean;
}

interface GetOptions extends StoreOptions {
  json?: boolean;
}

interface StatusOptions extends StoreOptions {
  staleAfterMs: string;
  refresh?: boolean;
  json?: boolean;
}

/** Refuses ids the ledger never shows acknowledged: the service would answer the ticket with an Error update. */
async function checkAcknowledged(ids: string[], choice: LedgerChoice, opts: CreateOptions): Promise<void> {
  const config = storeConfig(opts);
  const hits = await findHits(choice, new Set(ids), createLogger(config.log));
  const acked = new Set(hits.filter((h) => h.status === 'acked').map((h) => h.transactionId));
  const never = ids.filter((id) => !acked.has(id));
  if (never.length === 0) return;
  const where = choice.map((r) => (r.kind === 'postgres' ? 'the PostgreSQL ledger' : r.path)).join(', ');
  throw new SvcIngestError(
    'USAGE_INVALID',
    `transaction ${never.join(', ')}: never acknowledged by the service according to ${where}; a ticket about it ` +
      `would come back as an Error update (check it with svc-ingest trace ${never[0]}, or give --force to send it anyway)`,
    { field: '--transaction' },
  );
}

/** What `tickets create` prints once the ticket is acknowledged. */
function printAccepted(
  req: CreateTicketRequest,
  out: { httpStatus: number; requestId: string | null; attempts: number },
  store: string,
  json: boolean,
): void {
  if (json) {
    const { httpStatus, requestId, attempts } = out;
    printJson({
      sourceTicketId: req.sourceTicketId,
      requestId,
      httpStatus,
      attempts,
      transactionIds: req.transactionIds,
      store,
    });
    return;
  }
  printText([
    `ticket ${req.sourceTicketId} accepted (HTTP ${out.httpStatus}${out.attempts > 1 ? `, after ${out.attempts} attempts` : ''}) ` +
      `[requestId ${out.requestId ?? '-'}]; stored in ${store}; whether it was created arrives on the webhook ` +
      '(svc-ingest tickets listen; svc-ingest tickets status)',
  ]);
}

export async function runCreate(opts: CreateOptions): Promise<void> {
  const { ticketNumbers } = await import('../tickets/ids.ts');
  const ids = opts.transaction.map((t) => t.trim());
  // A card number typed into any field (a support agent pasting the customer's card) is refused before anything
  // is stored or sent. A transaction id is checked here with --force; without it, it must be one the ledger shows
  // acknowledged (sent, so it passed the rule or is a declared own id).
  refuseTypedCardNumbers([
    ['--ticket-id', opts.ticketId],
    ['--customer', opts.customer],
    ['--offer', opts.offer],
    ['--description', opts.description],
    ['--author', opts.author],
    ...(opts.force ? ids.map((id) => ['--transaction', id] as const) : []),
  ]);
  const req: CreateTicketRequest = {
    sourceTicketId: opts.ticketId,
    sourceCustomerId: opts.customer,
    offerId: parseIntOption(opts.offer, '--offer'),
    transactionIds: ticketNumbers(ids),
    description: opts.description,
    ...(opts.author ? { authorEmailAddress: opts.author } : {}),
  };
  // The interface's limits first (at most 10 ids, …): a create the service would refuse is refused before anything else.
  checkTicket(req);
  const maxAttempts = parseIntOption(opts.maxAttempts, '--max-attempts');
  if (maxAttempts < 1 || maxAttempts > 1000)
    throw new SvcIngestError('USAGE_INVALID', `--max-attempts: expected 1..1000, got ${maxAttempts}`);
  const choice = await ledgerOf(opts, opts.force === true);
  if (!opts.force) await checkAcknowledged(ids, choice, opts);
  const [{ submitTicket }, { loadTickets }] = await Promise.all([
    import('../tickets/create.ts'),
    import('../tickets/store.ts'),
  ]);
  // The ticket stored and sent, with the configuration that carries the command's settings flags (its backoff).
  const submit = async ({ client, config, logger }: CommandContext): Promise<void> => {
    const store = await openStoreOf(choice, logger);
    try {
      const known = (await loadTickets(store)).get(req.sourceTicketId);
      if (known && known.phase !== 'submitted' && known.phase !== 'error') {
        throw new SvcIngestError(
          'USAGE_INVALID',
          `ticket ${req.sourceTicketId} was already acknowledged (${known.phase}); a resubmission is for a ticket that got no ` +
            'answer or came back Error; a new issue needs a new --ticket-id',
        );
      }
      const out = await submitTicket(client, store, req, ids, {
        maxAttempts,
        ...retryTimingOf(config.send),
        logger,
      });
      if (!out.accepted) {
        throw new SvcIngestError(
          out.error.code,
          `ticket ${req.sourceTicketId} not acknowledged after ${out.attempts} attempt(s): ${out.error.message}; ` +
            'run the same command again to resubmit it (same --ticket-id)',
          { exitStatus: EXIT.FAILED },
        );
      }
      printAccepted(req, out, store.location, opts.json === true);
    } finally {
      await store.close();
    }
  };
  await withContext(opts, submit, ticketFlags(opts));
}

/** Text form of a ticket. */
export function formatTicket(t: Ticket): string[] {
  const lines = [
    `ticket ${t.sourceTicketId} (svc ${t.svcTicketId}): ${t.status}`,
    `  customer ${t.sourceCustomerId}, offer ${t.offerId}, transactions ${(t.transactionIds ?? []).join(', ')}`,
    `  created ${t.ticketCreatedDate}${t.ticketSolvedDate ? `, solved ${t.ticketSolvedDate}` : ''}`,
    `  description: ${t.description}`,
  ];
  if (t.resolutionType) lines.push(`  resolution: ${t.resolutionType}`);
  if (t.svcResponse) lines.push(`  response: ${t.svcResponse}`);
  return lines;
}

export async function runGet(id: string, opts: GetOptions): Promise<void> {
  // A card number typed as the ticket id is refused before it is put in the request's URL, as `tickets create` does.
  refuseTypedCardNumbers([['<id>', id]]);
  const choice = await ledgerOf(opts, true);
  await withContext(opts, async ({ client, logger }) => {
    const ticket = await client.getTicket(id);
    await keepFetched(choice, logger, [ticket]);
    if (opts.json) printJson(ticket);
    else printText(formatTicket(ticket));
  });
}

/** Keeps tickets as read back (`fetched` events); a store that cannot be written is a warning, not a failure. */
async function keepFetched(
  choice: LedgerChoice,
  logger: ReturnType<typeof createLogger>,
  tickets: Ticket[],
): Promise<void> {
  let store: TicketStore | undefined;
  try {
    store = await openStoreOf(choice, logger);
    for (const ticket of tickets) await store.append(fetchedEvent(ticket));
  } catch (err) {
    logger.warn({ event: 'tickets.store_failed', error: (err as Error).message }, 'ticket not stored');
  } finally {
    await store?.close();
  }
}

export async function runStatus(opts: StatusOptions): Promise<void> {
  const staleAfterMs = parseIntOption(opts.staleAfterMs, '--stale-after-ms');
  if (staleAfterMs < 0)
    throw new SvcIngestError('USAGE_INVALID', `--stale-after-ms: expected 0 or more, got ${staleAfterMs}`);
  const choice = await ledgerOf(opts, true);
  const config = storeConfig(opts);
  const logger = createLogger(config.log);
  const [{ loadTickets }, { ticketsStatus, formatTicketsStatus, isStale }] = await Promise.all([
    import('../tickets/store.ts'),
    import('../tickets/status.ts'),
  ]);
  const store = await openStoreOf(choice, logger, !opts.refresh);
  try {
    let tickets = await loadTickets(store);
    const now = Date.now();
    const stale = [...tickets.values()].filter((t) => isStale(t, now, staleAfterMs));
    if (opts.refresh && stale.length > 0) {
      await withContext(opts, async ({ client }) => {
        for (const t of stale) {
          try {
            await store.append(fetchedEvent(await client.getTicket(t.sourceTicketId)));
          } catch (err) {
            if (err instanceof SvcNetworkError && classifyFailure(err).connection)
              throw unavailableError(err);
            logger.warn(
              {
                event: 'tickets.refresh_failed',
                sourceTicketId: t.sourceTicketId,
                error: (err as Error).message,
              },
              'stale ticket not read back (404: not created yet, or unknown to the service)',
            );
          }
        }
      });
      tickets = await loadTickets(store);
    }
    const report = ticketsStatus(tickets.values(), Date.now(), staleAfterMs);
    if (opts.json) printJson({ store: store.location, ...report });
    else printText([`store: ${store.location}`, ...formatTicketsStatus(report)]);
  } finally {
    await store.close();
  }
}

export function define(program: Command): void {
  const tickets = program
    .command('tickets')
    .description(
      "customer-issue tickets: create, get, listen for updates, status (kept in the ledger's store)",
    );
  addExamples(tickets, [
    ['svc-ingest tickets listen --port 8081 --until-closed T-1 &', 'receive the updates of ticket T-1'],
    [
      'svc-ingest tickets create --ticket-id T-1 --customer cust-0001 --offer 100001 --transaction 123 --description "Reward not credited"',
      'open it',
    ],
    ['svc-ingest tickets get T-1', 'read it back'],
    ['svc-ingest help tickets create', "one sub-command's options"],
  ]);
  defineCreate(tickets);
  const get = addConnectionOptions(
    tickets
      .command('get')
      .description('read a ticket back by your ticket id')
      .argument('<id>', 'sourceTicketId')
      .option('--json', 'print the ticket as JSON on stdout'),
  );
  addStoreOptions(get);
  addExamples(get, [
    ['svc-ingest tickets get T-1', 'status, dates, resolution'],
    ['svc-ingest tickets get T-1 --json | jq .status', 'as JSON'],
  ]).action(async (id: string, opts: GetOptions) => runGet(id, opts));
  defineListen(tickets);
  const status = addConnectionOptions(
    tickets
      .command('status')
      .description(
        'where the stored tickets stand: open, stale (no first update for too long), Error (to correct and resubmit), closed by resolution',
      )
      .option(
        '--stale-after-ms <ms>',
        'a ticket with no first update for longer than this is stale',
        '86400000',
      )
      .option(
        '--refresh',
        'read every stale ticket back from the service (tickets get) and store what it says',
      )
      .option('--json', 'print the report as one JSON object on stdout')
      .addHelpText(
        'after',
        '\nExit status: 0 the report was printed; 1 could not run; 5 service unavailable (--refresh).',
      ),
  );
  addStoreOptions(status);
  addExamples(status, [
    ['svc-ingest tickets status', 'open, stale, Error and closed tickets'],
    [
      'svc-ingest tickets status --stale-after-ms 3600000 --refresh --json',
      'stale after an hour; read those back',
    ],
  ]).action(async (opts: StatusOptions) => runStatus(opts));
}

/** tickets create: its options, help and examples. */
function defineCreate(tickets: Command): void {
  const create = addConnectionOptions(
    tickets
      .command('create')
      .description('open a ticket (202 = received; the outcome arrives on the webhook)')
      .requiredOption('--ticket-id <id>', 'sourceTicketId: your own ticket id')
      .requiredOption('--customer <id>', 'sourceCustomerId')
      .requiredOption('--offer <n>', 'offerId (the ad id, a number)')
      .requiredOption(
        '--transaction <id...>',
        "transaction id(s) as sent, up to 10, all for the same offer; each must be a plain whole number (a ticket's " +
          'transactionIds are numbers) and acknowledged in the ledger',
      )
      .requiredOption('--description <text>', 'expected versus observed behaviour')
      .option('--author <email>', 'authorEmailAddress')
      .option('--force', 'send it even when the ledger never shows a transaction acknowledged')
      .option('--max-attempts <n>', 'resubmissions until a 2xx answer: attempts at most', '8')
      .option('--json', 'print the answer as JSON on stdout')
      .addHelpText(
        'after',
        '\nThe ticket is stored first, then sent until the service acknowledges it (2xx): no answer, a timeout, 5xx or\n' +
          '429 is resubmitted with the same sourceTicketId. Exit status: 0 acknowledged; 1 could not run (a bad id,\n' +
          'a transaction never acknowledged without --force, a 4xx answer); 3 not acknowledged after --max-attempts\n' +
          '(no answer, or the service unreachable: run it again, the same --ticket-id resubmits).',
      ),
  );
  addStoreOptions(create);
  addSettingOptions(create, 'backoff');
  addExamples(create, [
    [
      'svc-ingest tickets create --ticket-id T-1 --customer cust-0001 --offer 100001 --transaction 123 --transaction 124 --description "Reward not credited after purchase"',
      'two transactions of one offer',
    ],
    [
      'svc-ingest tickets create --ticket-id T-2 --customer cust-0002 --offer 100002 --transaction 9 --description "Wrong amount" --author ops@bank.example --json',
      'with an author, answer as JSON',
    ],
  ]).action(async (opts: CreateOptions) => runCreate(opts));
}

/** tickets listen: its options, help and examples. */
function defineListen(tickets: Command): void {
  const listen = addConnectionOptions(
    tickets
      .command('listen')
      .description('receive ticket updates on a webhook; prints each update as one NDJSON line on stdout')
      .requiredOption('--port <n>', 'port to listen on (0 = any free port; the URL is printed on stderr)')
      .option('--host <addr>', 'address to bind', '127.0.0.1')
      .option('--path <path>', 'webhook path', '/webhook')
      .option('--until-closed <id>', 'exit after the final update of this ticket (0 closed, 2 not created)')
      .addHelpText(
        'after',
        '\nWith a shared secret (webhook.secretEnv: the NAME of an env variable holding it, or webhook.secretFile;\n' +
          'never on the command line) every POST must carry X-SVC-Timestamp (Unix seconds, within 5 minutes) and\n' +
          'X-SVC-Signature: v1=<hex HMAC-SHA256 of "<timestamp>.<body>">; others get 401 and are not printed.\n' +
          'Bodies over 1 MiB get 413, non-JSON content types 415. Every printed update has card numbers masked.\n' +
          'Each update is stored (tickets.ndjson next to the ledger, or its PostgreSQL database) before it is answered\n' +
          '200; the same update delivered again is answered and neither stored nor printed twice.',
      ),
  );
  addStoreOptions(listen);
  addExamples(listen, [
    ['svc-ingest tickets listen --port 8081', 'every update as one NDJSON line, until SIGTERM'],
    [
      'svc-ingest tickets listen --port 8081 --path /hooks/svc --until-closed T-1 > T-1.ndjson',
      'until ticket T-1 is closed',
    ],
    [
      'SVC_WEBHOOK_SECRET_ENV=HOOK_SECRET svc-ingest tickets listen --port 8081',
      'signed updates only (the secret in env HOOK_SECRET)',
    ],
  ]).action(async (opts: ListenOptions) => (await import('./tickets-listen.ts')).runListen(opts));
}
