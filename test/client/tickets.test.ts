// Ticket lifecycle through a real webhook receiver, and the odd answers the simulator never gives (200 with errors, unknown enums).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { expect, it } from 'vitest';
import { createClient, SvcHttpError } from '../../src/client/index.ts';
import type { TicketWebhookUpdate } from '../../src/client/models.ts';
import { defaultConfig } from '../../src/config/index.ts';
import { startSimulator } from '../../src/simulator/index.ts';
import { startWebhookReceiver } from '../../src/tickets/webhook.ts';
import { configFor, makeTransactions } from './fixtures.ts';

function waitFor<T>(pred: () => T | undefined, ms = 5000): Promise<T> {
  const until = Date.now() + ms;
  return new Promise((resolve, reject) => {
    const tick = () => {
      const v = pred();
      if (v !== undefined) resolve(v);
      else if (Date.now() > until) reject(new Error('timed out waiting'));
      else setTimeout(tick, 10);
    };
    tick();
  });
}

it('creates a ticket, receives Success then Closed on the webhook, reads it back; a bad one gets Error', async () => {
  const updates: TicketWebhookUpdate[] = [];
  const receiver = await startWebhookReceiver({
    port: 0,
    settings: defaultConfig().webhook,
    onUpdate: (u) => updates.push(u),
  });
  const sim = await startSimulator({ seed: 3, webhookUrl: receiver.url, ticketDelayMs: 20 });
  const client = createClient(configFor(sim.url));
  try {
    const r = await client.getRedemptions('cust-0001', { lookbackWindowInDays: 396 });
    const offerId = Number(Object.keys(r.ads)[0]);
    const ack = await client.createTicket({
      sourceTicketId: 'life-1',
      sourceCustomerId: 'cust-0001',
      offerId,
      transactionIds: [11, 12],
      description: 'reward missing',
      authorEmailAddress: 'agent@example.com',
    });
    expect(ack.httpStatus).toBe(202);
    const closed = await waitFor(() =>
      updates.find((u) => u.sourceTicketId === 'life-1' && u.status === 'Closed'),
    );
    const mine = updates.filter((u) => u.sourceTicketId === 'life-1');
    expect(mine.map((u) => [u.processingStatus, u.status])).toEqual([
      ['Success', 'In Process'],
      ['Success', 'Closed'],
    ]);
    expect(closed.svcTicketId).toBeTypeOf('number');
    const ticket = await client.getTicket('life-1');
    expect(ticket).toMatchObject({
      sourceTicketId: 'life-1',
      status: 'Closed',
      offerId,
      transactionIds: [11, 12],
    });

    await client.createTicket({
      sourceTicketId: 'life-2',
      sourceCustomerId: 'nobody',
      offerId,
      transactionIds: [1],
      description: 'x',
    });
    const err = await waitFor(() => updates.find((u) => u.sourceTicketId === 'life-2'));
    expect(err.processingStatus).toBe('Error');
    expect(err.processingStatusMessage).toContain('Invalid customer id');
  } finally {
    await client.close();
    await sim.close();
    await receiver.close();
  }
});

/** A tiny service whose answers the test chooses. */
async function withServer(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  fn: (url: string, hits: () => number) => Promise<void>,
): Promise<void> {
  let hits = 0;
  const server = createServer((req, res) => {
    hits++;
    req.resume();
    req.on('end', () => handler(req, res));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  try {
    await fn(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, () => hits);
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
}

it('a 200 carrying error detail or lacking a requestId is not success', async () => {
  const bodies = [
    {
      type: 'ValidationException',
      status: 400,
      validationErrors: [{ field: 'x', message: 'bad' }],
      requestId: 'r',
    },
    {},
    { requestId: '' },
  ];
  let i = 0;
  await withServer(
    (_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(bodies[i++])),
    async (url) => {
      const client = createClient(configFor(url));
      try {
        for (let k = 0; k < bodies.length; k++) {
          const err = await client.postTransactions(makeTransactions(1), { requestId: `b-${k}` }).then(
            () => undefined,
            (e: unknown) => e,
          );
          expect(err).toBeInstanceOf(SvcHttpError);
          expect((err as SvcHttpError).status).toBe(200);
        }
      } finally {
        await client.close();
      }
    },
  );
});

it('a Retry-After HTTP date becomes milliseconds', async () => {
  await withServer(
    (_req, res) =>
      res
        .writeHead(503, {
          'retry-after': new Date(Date.now() + 5000).toUTCString(),
          'x-svc-request-id': 'hdr-id',
        })
        .end(),
    async (url) => {
      const client = createClient(configFor(url));
      try {
        const err = (await client.getTicket('t').catch((e: unknown) => e)) as SvcHttpError;
        expect(err.status).toBe(503);
        expect(err.requestId).toBe('hdr-id');
        expect(err.retryAfterMs).toBeGreaterThan(3000);
        expect(err.retryAfterMs).toBeLessThanOrEqual(5000);
      } finally {
        await client.close();
      }
    },
  );
});

it('keeps unknown enum values and warns once', async () => {
  const ad = {
    adId: '1',
    adType: 'CASH_BACK_OFFER',
    merchantName: 'M',
    activationState: 'HIBERNATING',
    reward: { rewardType: 'PERCENT', rewardAmount: 5, purchaseRequirement: { purchaseChannels: ['Drone'] } },
  };
  await withServer(
    (req, res) => {
      const body = req.url?.startsWith('/v2/session')
        ? { sessionToken: 'a.b.c' }
        : { redemptions: [], ads: { '1': ad }, requestId: 'q' };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    },
    async (url) => {
      const lines: Array<Record<string, unknown>> = [];
      const sink = new Writable({
        write(chunk, _enc, cb) {
          lines.push(JSON.parse(String(chunk)));
          cb();
        },
      });
      const client = createClient(configFor(url), { logger: pino({ level: 'warn' }, sink) });
      try {
        const a = await client.getRedemptions('c');
        await client.getRedemptions('c');
        expect(a.ads['1']?.activationState).toBe('HIBERNATING');
        const warned = lines.filter((l) => l.msg === 'response.unknown_enum').map((l) => [l.field, l.value]);
        expect(warned).toEqual([
          ['activationState', 'HIBERNATING'],
          ['purchaseChannels', 'Drone'],
        ]);
      } finally {
        await client.close();
      }
    },
  );
});
