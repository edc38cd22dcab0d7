// A small HTTP receiver for ticket-update webhooks: each JSON POST on the path becomes one update callback.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TicketWebhookUpdate } from './models.ts';

/**
 * A running webhook receiver.
 * @example const r = await startWebhookReceiver({ port: 0, onUpdate: (u) => console.log(u.processingStatus) }); r.url; await r.close()
 */
export interface WebhookReceiver {
  /** Full URL of the webhook path, e.g. http://127.0.0.1:43123/webhook */
  url: string;
  port: number;
  close(): Promise<void>;
}

const MAX_BODY = 1024 * 1024;

export function startWebhookReceiver(opts: {
  port?: number;
  host?: string;
  path?: string;
  onUpdate: (update: TicketWebhookUpdate) => void;
  onBadRequest?: (reason: string) => void;
}): Promise<WebhookReceiver> {
  const path = opts.path ?? '/webhook';
  const host = opts.host ?? '127.0.0.1';
  const server = createServer((req, res) => {
    const reqPath = (req.url ?? '/').split('?')[0];
    if (reqPath !== path || req.method !== 'POST') {
      res.writeHead(reqPath === path ? 405 : 404).end();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY) chunks.push(c);
    });
    req.on('end', () => {
      let update: unknown;
      try {
        update = size > MAX_BODY ? undefined : JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        update = undefined;
      }
      if (update === null || typeof update !== 'object' || Array.isArray(update)) {
        opts.onBadRequest?.(size > MAX_BODY ? 'body too large' : 'body is not a JSON object');
        res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"expected a JSON object"}');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"received":true}');
      opts.onUpdate(update as TicketWebhookUpdate);
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      const { port } = server.address() as AddressInfo;
      const shownHost = host.includes(':') ? `[${host}]` : host;
      resolve({
        url: `http://${shownHost}:${port}${path}`,
        port,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
