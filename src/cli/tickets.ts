// `svc-ingest tickets create|get|listen`: open a customer-issue ticket, read it back, receive its webhook updates.
import type { Command } from 'commander';
import { createEnumWarner, warnTicketEnums } from '../client/enums.ts';
import { startWebhookReceiver } from '../client/index.ts';
import type { CreateTicketRequest, Ticket, TicketWebhookUpdate } from '../client/models.ts';
import { readWebhookSecret } from '../config/secret.ts';
import { EXIT, ExitError } from '../errors.ts';
import { createLogger, stderrLine } from '../log.ts';
import { maskDeep } from '../mask.ts';
import {
  addConnectionOptions,
  addExamples,
  type CommonOptions,
  isLoopbackBind,
  loadCommandConfig,
  parseIntOption,
  printJson,
  printText,
  withContext,
} from './common.ts';

interface CreateOptions extends CommonOptions {
  ticketId: string;
  customer: string;
  offer: string;
  transaction: string[];
  description: string;
  author?: string;
  json?: boolean;
}

interface GetOptions extends CommonOptions {
  json?: boolean;
}

interface ListenOptions extends CommonOptions {
  port: string;
  host: string;
  path: string;
  untilClosed?: string;
}

export async function runCreate(opts: CreateOptions): Promise<void> {
  const req: CreateTicketRequest = {
    sourceTicketId: opts.ticketId,
    sourceCustomerId: opts.customer,
    offerId: parseIntOption(opts.offer, '--offer'),
    transactionIds: opts.transaction.map((t) => parseIntOption(t, '--transaction')),
    description: opts.description,
    ...(opts.author ? { authorEmailAddress: opts.author } : {}),
  };
  await withContext(opts, async ({ client }) => {
    const res = await client.createTicket(req);
    if (opts.json) printJson({ sourceTicketId: req.sourceTicketId, ...res });
    else {
      printText([
        `ticket ${req.sourceTicketId} accepted (HTTP ${res.httpStatus}) [requestId ${res.requestId ?? '-'}]; ` +
          'whether it was created arrives on the webhook (svc-ingest tickets listen)',
      ]);
    }
  });
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
  await withContext(opts, async ({ client }) => {
    const ticket = await client.getTicket(id);
    if (opts.json) printJson(ticket);
    else printText(formatTicket(ticket));
  });
}

/** True when an update is the last one a ticket gets: created-with-error, or closed. */
export function isFinalUpdate(u: TicketWebhookUpdate): boolean {
  return u.processingStatus === 'Error' || u.status === 'Closed';
}

export async function runListen(opts: ListenOptions): Promise<void> {
  const config = loadCommandConfig(opts);
  const logger = createLogger({ level: config.log.level });
  const warn = createEnumWarner(logger);
  const port = parseIntOption(opts.port, '--port');
  const path = opts.path.startsWith('/') ? opts.path : `/${opts.path}`;
  const secret = readWebhookSecret(config);
  if (secret === undefined && !isLoopbackBind(opts.host)) {
    logger.warn(
      { event: 'webhook.unsigned', host: opts.host },
      `listening on ${opts.host} without a webhook secret: anyone who can reach this port can post ticket updates ` +
        '(set webhook.secretEnv or webhook.secretFile; see README "Webhook signing")',
    );
  }
  let settle: (code: number) => void = () => {};
  const done = new Promise<number>((resolve) => {
    settle = resolve;
  });
  // Without --until-closed a signal is the normal way to stop (exit 0); with it, an interrupt is not an answer.
  // Installed before the receiver starts and kept to the end, so no signal finds the process without them.
  const onSignal = (signal: NodeJS.Signals) => {
    settle(opts.untilClosed === undefined ? EXIT.OK : signal === 'SIGINT' ? EXIT.SIGINT : EXIT.SIGTERM);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const receiver = await startWebhookReceiver({
    port,
    host: opts.host,
    path,
    ...(secret !== undefined ? { secret } : {}),
    timeoutMs: config.webhook.timeoutMs,
    maxConnections: config.webhook.maxConnections,
    onUpdate(raw) {
      // Whatever the sender put in an update, no card number is printed or logged in full.
      const u = maskDeep(raw) as TicketWebhookUpdate;
      printJson(u);
      warnTicketEnums(
        {
          status: u.status ?? 'In Process',
          resolutionType: u.resolutionType,
          sourceTicketId: u.sourceTicketId,
        },
        warn,
      );
      logger.info(
        { sourceTicketId: u.sourceTicketId, processingStatus: u.processingStatus, status: u.status },
        'ticket.update',
      );
      if (
        opts.untilClosed !== undefined &&
        String(raw.sourceTicketId) === opts.untilClosed &&
        isFinalUpdate(u)
      ) {
        settle(u.processingStatus === 'Error' ? EXIT.REJECTED : EXIT.OK);
      }
    },
    onBadRequest: (reason, status) =>
      logger.warn({ event: 'webhook.refused', status, reason }, 'webhook.refused'),
    onEvict: (n) =>
      logger.warn(
        { event: 'webhook.evicted', evicted: n, maxConnections: config.webhook.maxConnections },
        'connection cap reached: the oldest connections are closed',
      ),
  });
  stderrLine(
    'info',
    'webhook.listening',
    `svc-ingest: listening on ${receiver.url} (${secret !== undefined ? 'signed updates only' : 'unsigned: no webhook secret configured'})`,
    { url: receiver.url, signed: secret !== undefined },
  );
  const code = await done;
  await receiver.close();
  if (code !== EXIT.OK) throw new ExitError(code);
}

export function define(program: Command): void {
  const tickets = program
    .command('tickets')
    .description('customer-issue tickets: create, get, listen for updates');
  addExamples(tickets, [
    ['svc-ingest tickets listen --port 8081 --until-closed T-1 &', 'receive the updates of ticket T-1'],
    [
      'svc-ingest tickets create --ticket-id T-1 --customer cust-0001 --offer 100001 --transaction 123 --description "Reward not credited"',
      'open it',
    ],
    ['svc-ingest tickets get T-1', 'read it back'],
    ['svc-ingest help tickets create', "one sub-command's options"],
  ]);
  const create = addConnectionOptions(
    tickets
      .command('create')
      .description('open a ticket (202 = received; the outcome arrives on the webhook)')
      .requiredOption('--ticket-id <id>', 'sourceTicketId: your own ticket id')
      .requiredOption('--customer <id>', 'sourceCustomerId')
      .requiredOption('--offer <n>', 'offerId (the ad id, a number)')
      .requiredOption('--transaction <n...>', 'transaction id(s), numbers, up to 10, all for the same offer')
      .requiredOption('--description <text>', 'expected versus observed behaviour')
      .option('--author <email>', 'authorEmailAddress')
      .option('--json', 'print the answer as JSON on stdout'),
  );
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
  const get = addConnectionOptions(
    tickets
      .command('get')
      .description('read a ticket back by your ticket id')
      .argument('<id>', 'sourceTicketId')
      .option('--json', 'print the ticket as JSON on stdout'),
  );
  addExamples(get, [
    ['svc-ingest tickets get T-1', 'status, dates, resolution'],
    ['svc-ingest tickets get T-1 --json | jq .status', 'as JSON'],
  ]).action(async (id: string, opts: GetOptions) => runGet(id, opts));
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
          'Bodies over 1 MiB get 413, non-JSON content types 415. Every printed update has card numbers masked.',
      ),
  );
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
  ]).action(async (opts: ListenOptions) => runListen(opts));
}
