// The service as a capture server for the card-number tests: answers 200 (or the scripted error) and keeps every
// request it received; and `tickets listen` started on a free port with a way to post webhook bodies to it.
import { mkdtempSync } from 'node:fs';
import { createServer, type IncomingMessage, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { type CliResult, startCli } from './cli.ts';

export interface Capture {
  url: string;
  /** Bodies of the POSTs to the transactions endpoint. */
  bodies: string[];
  /** Every request as received (method, URL, headers, body), whatever its endpoint. */
  all: string[];
  /** Answer every request with this status and body (an error envelope echoing card numbers). */
  failWith: { status: number; body: string } | null;
}

/** A capture server for the file's tests: started before them, emptied before each, closed after. */
export function useCapture(): Capture {
  let server: Server;
  const capture: Capture = { url: '', bodies: [], all: [], failWith: null };
  beforeAll(async () => {
    server = createServer((req: IncomingMessage, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        capture.all.push(`${req.method} ${req.url}\n${JSON.stringify(req.headers)}\n${body}`);
        if (req.method === 'POST' && req.url?.startsWith('/v2/data/transactions')) capture.bodies.push(body);
        res.setHeader('content-type', 'application/json');
        if (capture.failWith) {
          res.statusCode = capture.failWith.status;
          res.end(capture.failWith.body);
          return;
        }
        // A request id without long digit runs, so a scan of the ledger looks at what came from the input.
        res.end(JSON.stringify({ requestId: `cap-${capture.bodies.length}` }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    capture.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));
  beforeEach(() => {
    capture.bodies = [];
    capture.all = [];
    capture.failWith = null;
  });
  return capture;
}

/** `tickets listen --port 0`, once it listens: post(body) answers the HTTP status; stop() sends SIGTERM. */
export async function listenTickets(
  env: NodeJS.ProcessEnv,
): Promise<{ post(body: string): Promise<number>; stop(): Promise<CliResult> }> {
  // tickets listen keeps every update next to the ledger: a folder of its own unless the caller names one.
  const ledger =
    env.SVC_LEDGER_PATH ?? join(mkdtempSync(join(tmpdir(), 'svc-listen-')), 'transactions.ndjson');
  const run = startCli(['tickets', 'listen', '--port', '0'], { env: { ...env, SVC_LEDGER_PATH: ledger } });
  let stderr = '';
  run.child.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const url = await new Promise<string>((resolve, reject) => {
    const t = setInterval(() => {
      const m = /listening on (\S+)/.exec(stderr);
      if (m?.[1]) {
        clearInterval(t);
        resolve(m[1]);
      } else if (run.child.exitCode !== null) {
        clearInterval(t);
        reject(new Error(stderr));
      }
    }, 10);
  });
  return {
    post: (body) =>
      new Promise<number>((resolve, reject) => {
        const req = request(
          url,
          { method: 'POST', headers: { 'content-type': 'application/json' } },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        req.end(body);
      }),
    async stop() {
      // The updates are printed as they arrive: a moment for the last one before the signal.
      await new Promise((r) => setTimeout(r, 200));
      run.child.kill('SIGTERM');
      return run.done;
    },
  };
}
