// A small HTTP receiver for ticket-update webhooks: each JSON POST on the path becomes one update callback.
// It expects hostile traffic: an optional HMAC-SHA256 signature with a replay window, a 1 MiB body limit (413 and
// close, the rest never read), 415 for a body that is not JSON, header and request timeouts, and a connection cap.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { TicketWebhookUpdate } from '../client/models.ts';
import type { Config } from '../config/index.ts';
import { parseGuarded } from '../mask/answer.ts';

/** `v1=<hex HMAC-SHA256>`; several comma-separated values are accepted (a sender rotating its secret). */
export const SIGNATURE_HEADER = 'X-SVC-Signature';
/** Unix seconds when the sender signed; the signed string is `${timestamp}.${body}`. */
export const TIMESTAMP_HEADER = 'X-SVC-Timestamp';
/** Largest body read (bytes); a larger one gets 413 and the connection is closed. */
export const WEBHOOK_MAX_BODY = 1024 * 1024;
/** How far a timestamp may be from our clock, either way (seconds). */
export const WEBHOOK_TOLERANCE_S = 300;
/** After refusing a request, how long the connection stays open (unread) so the sender can read the answer. */
const LINGER_MS = 1_000;

/**
 * Closes a connection whose request body is not read: once the answer is out, our side is shut (FIN) and reading
 * stops, so the rest of the body stays in the sender's buffers (TCP flow control holds it back); after LINGER_MS
 * the socket is destroyed. Destroying it at once would reset the connection under the sender's writes, and the
 * sender would see the reset instead of our answer.
 */
function lingerThenClose(socket: Socket): void {
  socket.destroySoon = () => {
    socket.pause();
    if (socket.writable) socket.end();
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  };
}

/**
 * The signature header value for a body signed at `timestamp` (Unix seconds).
 * @example signWebhook('a-shared-secret-of-16+', 1795300000, '{"sourceTicketId":"T-1"}') // 'v1=5f0c…'
 */
export function signWebhook(secret: string, timestamp: number, body: string | Buffer): string {
  const mac = createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex');
  return `v1=${mac}`;
}

/** Why a signed request was refused, or that it passed. */
export type Verdict = { ok: true; signature: string } | { ok: false; reason: string };

/** Checks the timestamp alone (before any body is read). */
function checkTimestamp(timestamp: string | undefined, nowMs: number): Verdict | undefined {
  if (timestamp === undefined) return { ok: false, reason: `missing ${TIMESTAMP_HEADER}` };
  if (!/^\d{1,12}$/.test(timestamp)) return { ok: false, reason: `malformed ${TIMESTAMP_HEADER}` };
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > WEBHOOK_TOLERANCE_S) {
    return {
      ok: false,
      reason: `${TIMESTAMP_HEADER} outside the ${WEBHOOK_TOLERANCE_S} s window (a replay, or a clock off)`,
    };
  }
  return undefined;
}

/**
 * Verifies a webhook request: timestamp within WEBHOOK_TOLERANCE_S of now, and one `v1=` value of the signature
 * header equal (constant-time) to HMAC-SHA256(secret, `${timestamp}.${body}`).
 * @example verifyWebhook(secret, { signature, timestamp }, body).ok
 */
export function verifyWebhook(
  secret: string,
  headers: { signature: string | undefined; timestamp: string | undefined },
  body: Buffer,
  nowMs = Date.now(),
): Verdict {
  const early = checkTimestamp(headers.timestamp, nowMs);
  if (early) return early;
  if (headers.signature === undefined) return { ok: false, reason: `missing ${SIGNATURE_HEADER}` };
  const given = headers.signature
    .split(',')
    .map((p) => p.trim())
    .filter((p) => /^v1=[0-9a-fA-F]{64}$/.test(p))
    .map((p) => Buffer.from(p.slice(3), 'hex'));
  if (given.length === 0) return { ok: false, reason: `no v1=<hex> value in ${SIGNATURE_HEADER}` };
  const wanted = Buffer.from(signWebhook(secret, Number(headers.timestamp), body).slice(3), 'hex');
  // Every candidate is compared, so the time taken does not tell which one came close.
  let match = false;
  for (const g of given) if (timingSafeEqual(g, wanted)) match = true;
  return match
    ? { ok: true, signature: wanted.toString('hex') }
    : { ok: false, reason: 'signature does not match' };
}

/**
 * A running webhook receiver.
 * @example const r = await startWebhookReceiver({ port: 0, settings: config.webhook, onUpdate: (u) => console.log(u.processingStatus) }); r.url; await r.close()
 */
export interface WebhookReceiver {
  /** Full URL of the webhook path, e.g. http://127.0.0.1:43123/webhook */
  url: string;
  port: number;
  close(): Promise<void>;
}

/** The receiver's slice of the configuration. */
export type WebhookConfig = Pick<Config['webhook'], 'timeoutMs' | 'maxConnections'>;

export interface WebhookReceiverOptions {
  port?: number;
  host?: string;
  path?: string;
  /** Shared secret: when set, every POST must carry a valid signature (401 otherwise, and it is not delivered). */
  secret?: string;
  /**
   * The table's webhook.timeoutMs (headers, and the whole request, must arrive within it) and
   * webhook.maxConnections (open connections at most; a new one beyond it closes the oldest).
   */
  settings: WebhookConfig;
  /**
   * Each update; when it returns a promise the 200 is sent once it resolves (the update is stored first), and a
   * rejection is answered 500 so the sender delivers it again.
   */
  onUpdate: (update: TicketWebhookUpdate) => unknown;
  /** A request refused (status and reason; never its body). */
  onBadRequest?: (reason: string, status: number) => void;
  /** The connection cap was reached and the oldest connection closed (once per `n` evictions: 1, 2, 4, …). */
  onEvict?: (evicted: number) => void;
}

const JSON_TYPE = /^application\/([a-z0-9.+-]+\+)?json\s*(;.*)?$/i;

export function startWebhookReceiver(opts: WebhookReceiverOptions): Promise<WebhookReceiver> {
  const path = opts.path ?? '/webhook';
  const host = opts.host ?? '127.0.0.1';
  const { timeoutMs } = opts.settings;
  const secret = opts.secret;
  /** Signatures delivered within the window: a replay of one is answered 200 but not delivered again. */
  const seen = new Map<string, number>();

  const refuse = (req: IncomingMessage, res: ServerResponse, status: number, reason: string): void =>
    refuseRequest(opts, req, res, status, reason);

  const server = createServer(
    {
      headersTimeout: timeoutMs,
      requestTimeout: timeoutMs,
      keepAliveTimeout: 5_000,
      // Node checks the two timeouts above on this interval (30 s by default, which would triple them).
      connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(timeoutMs / 4))),
      maxHeaderSize: 16 * 1024,
    },
    (req, res) => {
      const reqPath = (req.url ?? '/').split('?')[0];
      if (reqPath !== path) return refuse(req, res, 404, 'no such path');
      if (req.method !== 'POST') {
        res.setHeader('allow', 'POST');
        return refuse(req, res, 405, 'method not allowed');
      }
      if (!JSON_TYPE.test(req.headers['content-type'] ?? '')) {
        return refuse(req, res, 415, 'content-type must be application/json');
      }
      const declared = req.headers['content-length'];
      if (declared !== undefined && Number(declared) > WEBHOOK_MAX_BODY) {
        return refuse(req, res, 413, `body larger than ${WEBHOOK_MAX_BODY} bytes`);
      }
      const header = (name: string): string | undefined => {
        const v = req.headers[name.toLowerCase()];
        return typeof v === 'string' ? v : undefined;
      };
      if (secret !== undefined) {
        // Refused before the body is read when the timestamp alone already fails, or nothing is signed.
        const early = checkTimestamp(header(TIMESTAMP_HEADER), Date.now());
        if (early && !early.ok) return refuse(req, res, 401, early.reason);
        if (header(SIGNATURE_HEADER) === undefined) {
          return refuse(req, res, 401, `missing ${SIGNATURE_HEADER}`);
        }
      }
      const chunks: Buffer[] = [];
      let size = 0;
      let refused = false;
      req.on('data', (c: Buffer) => {
        size += c.length;
        if (size > WEBHOOK_MAX_BODY) {
          refused = true;
          refuse(req, res, 413, `body larger than ${WEBHOOK_MAX_BODY} bytes`);
          return;
        }
        chunks.push(c);
      });
      req.on('end', () => {
        if (refused) return;
        const body = Buffer.concat(chunks);
        deliver(opts, seen, req, res, body, header);
      });
    },
  );

  capConnections(server, opts.settings, opts.onEvict);

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

/** Answers and closes the connection; whatever of the body is still coming is never read. */
function refuseRequest(
  opts: WebhookReceiverOptions,
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  reason: string,
): void {
  opts.onBadRequest?.(reason, status);
  req.removeAllListeners('data');
  // Node closes a `connection: close` answer's socket with destroySoon once the answer is written.
  lingerThenClose(req.socket);
  res.shouldKeepAlive = false;
  res.writeHead(status, { 'content-type': 'application/json', connection: 'close' });
  res.end(JSON.stringify({ error: reason }));
}

/** A signature delivered within the window is remembered; false when it was delivered already (a replay). */
function remember(seen: Map<string, number>, signature: string, now: number): boolean {
  for (const [sig, until] of seen) {
    if (until > now && seen.size < 10_000) break;
    seen.delete(sig);
  }
  if (seen.has(signature)) return false;
  seen.set(signature, now + 2 * WEBHOOK_TOLERANCE_S * 1000);
  return true;
}

/** A whole body received: verified (with a secret), parsed, delivered once, answered. */
function deliver(
  opts: WebhookReceiverOptions,
  seen: Map<string, number>,
  req: IncomingMessage,
  res: ServerResponse,
  body: Buffer,
  header: (name: string) => string | undefined,
) {
  const secret = opts.secret;
  const refuse = (status: number, reason: string): void => refuseRequest(opts, req, res, status, reason);
  let signature: string | undefined;
  if (secret !== undefined) {
    const verdict = verifyWebhook(
      secret,
      { signature: header(SIGNATURE_HEADER), timestamp: header(TIMESTAMP_HEADER) },
      body,
    );
    if (!verdict.ok) return refuse(401, verdict.reason);
    signature = verdict.signature;
  }
  let update: unknown;
  try {
    // Read losslessly and masked before it is printed or kept in the ticket store (src/mask/answer.ts).
    update = parseGuarded(body.toString('utf8'));
  } catch {
    update = undefined;
  }
  if (update === null || typeof update !== 'object' || Array.isArray(update)) {
    return refuse(400, 'body is not a JSON object');
  }
  if (signature !== undefined && !remember(seen, signature, Date.now())) {
    // The same signed update again (a sender's retry, or a replay): acknowledged, not delivered twice.
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"received":true,"duplicate":true}');
    return;
  }
  const answer = (): void => {
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"received":true}');
  };
  let handled: unknown;
  try {
    handled = opts.onUpdate(update as TicketWebhookUpdate);
  } catch (err) {
    handled = Promise.reject(err);
  }
  if (!(handled instanceof Promise)) return answer();
  handled.then(answer, (err: unknown) => {
    // Not kept: the sender's retry (if any) brings it again; a replayed signature must not be refused then.
    if (signature !== undefined) seen.delete(signature);
    opts.onBadRequest?.(`update not stored: ${(err as Error).message}`, 500);
    if (!res.headersSent)
      res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"update not stored"}');
  });
}

/** The cap: a connection beyond it closes the oldest one (slow senders cannot lock the door on the service). */
function capConnections(
  server: Server,
  settings: WebhookConfig,
  onEvict: ((evicted: number) => void) | undefined,
): void {
  let evicted = 0;
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    if (sockets.size > settings.maxConnections) {
      const oldest = sockets.values().next().value as Socket;
      sockets.delete(oldest);
      oldest.destroy();
      evicted++;
      if ((evicted & (evicted - 1)) === 0) onEvict?.(evicted);
    }
  });
}
