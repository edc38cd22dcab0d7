// A purpose-built node:http server on 127.0.0.1:0 for tests that need an answer the simulator never gives
// (a redirect, a 403, a capture of everything received). It records every request it gets.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the server received it, body included. */
export interface Received {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export interface TestServer {
  /** Base URL, e.g. http://127.0.0.1:41234 */
  url: string;
  received: Received[];
  close(): Promise<void>;
}

/**
 * Start a server; `handle` answers each request once its body has been read.
 * @example const s = await startTestServer((req, res) => res.writeHead(308, { location: other.url }).end())
 */
export async function startTestServer(
  handle: (req: Received, res: ServerResponse) => void,
): Promise<TestServer> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r: Received = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      received.push(r);
      handle(r, res);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
