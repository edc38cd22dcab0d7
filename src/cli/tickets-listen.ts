// `svc-ingest tickets listen`: the webhook receiver for ticket updates, each stored (durably) before it is answered
// and printed as NDJSON; stops on a signal, or with --until-closed when that ticket's last update has come.
import { createEnumWarner, warnTicketEnums } from '../client/enums.ts';
import type { TicketWebhookUpdate } from '../client/models.ts';
import { readWebhookSecret } from '../config/secret.ts';
import { EXIT, exitWith } from '../errors.ts';
import { cliIo } from '../io.ts';
import { createLogger, stderrLine } from '../log.ts';
import { maskDeep } from '../mask/index.ts';
import { isLoopbackBind, loadCommandConfig, parseIntOption, printJson } from './common.ts';
import { openStoreOf } from './ledger-choice.ts';
import { ledgerOf, type StoreOptions } from './ticket-store.ts';

export interface ListenOptions extends StoreOptions {
  port: string;
  host: string;
  path: string;
  untilClosed?: string;
}

/** True when an update is the last one a ticket gets: created-with-error, or closed. */
export function isFinalUpdate(u: TicketWebhookUpdate): boolean {
  return u.processingStatus === 'Error' || u.status === 'Closed';
}

export async function runListen(opts: ListenOptions): Promise<void> {
  const config = loadCommandConfig(opts);
  const logger = createLogger(config.log);
  const warn = createEnumWarner(logger);
  const port = parseIntOption(opts.port, '--port');
  const path = opts.path.startsWith('/') ? opts.path : `/${opts.path}`;
  const secret = readWebhookSecret(config);
  const { storeUpdate } = await import('../tickets/store.ts');
  const store = await openStoreOf(await ledgerOf(opts, true), logger);
  if (secret === undefined && !isLoopbackBind(opts.host)) {
    logger.warn(
      { event: 'webhook.unsigned', host: opts.host },
      `listening on ${opts.host} without a webhook secret: anyone who can reach this port can post ticket updates ` +
        '(set webhook.secretEnv or webhook.secretFile; see README "Webhook signing")',
    );
  }
  // node:http is loaded only here: its ESM import evaluates all of its exports, Node's fetch among them (~12 ms).
  const { startWebhookReceiver } = await import('../tickets/webhook.ts');
  let settle: (code: number) => void = () => {};
  const done = new Promise<number>((resolve) => {
    settle = resolve;
  });
  // Without --until-closed a signal is the normal way to stop (exit 0); with it, an interrupt is not an answer.
  // Installed before the receiver starts and kept to the end, so no signal finds the process without them.
  const onSignal = (signal: NodeJS.Signals) => {
    settle(opts.untilClosed === undefined ? EXIT.OK : signal === 'SIGINT' ? EXIT.SIGINT : EXIT.SIGTERM);
  };
  const offSignals = cliIo().onSignal(onSignal);
  const receiver = await startWebhookReceiver({
    port,
    host: opts.host,
    path,
    ...(secret !== undefined ? { secret } : {}),
    settings: config.webhook,
    async onUpdate(raw) {
      // Whatever the sender put in an update, no card number is printed, stored or logged in full.
      const u = maskDeep(raw) as TicketWebhookUpdate;
      // Stored (durably) before the 200 goes out; a second delivery of the same update is answered, not applied.
      if (!(await storeUpdate(store, u, new Date().toISOString()))) {
        logger.info({ event: 'ticket.duplicate', sourceTicketId: u.sourceTicketId }, 'ticket.duplicate');
        return;
      }
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
    `svc-ingest: listening on ${receiver.url} (${secret !== undefined ? 'signed updates only' : 'unsigned: no webhook secret configured'}); updates stored in ${store.location}`,
    { url: receiver.url, signed: secret !== undefined },
  );
  const code = await done;
  offSignals();
  await receiver.close();
  await store.close();
  exitWith(code);
}
