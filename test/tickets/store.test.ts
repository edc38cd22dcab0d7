// The ticket store on both backends (a file, a real PostgreSQL), the lifecycle fold, and the rule that maps our
// transaction ids to a ticket's numbers.
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TicketWebhookUpdate } from '../../src/client/models.ts';
import type { LedgerRef } from '../../src/ledger/ref.ts';
import { createLogger } from '../../src/log.ts';
import { ticketNumberOf, ticketNumbers } from '../../src/tickets/ids.ts';
import { foldTickets, type TicketEvent } from '../../src/tickets/state.ts';
import { isStale, ticketsStatus } from '../../src/tickets/status.ts';
import { loadTickets, openTicketStore, storeUpdate, ticketsPathOf } from '../../src/tickets/store.ts';
import { fileRef, pgRef } from '../helpers/ledger-ref.ts';
import { usePostgres } from '../helpers/postgres.ts';

const pgs = usePostgres();
const logger = createLogger({ level: 'silent' });
const ts = (s: number) => new Date(Date.UTC(2026, 10, 25, 12, 0, s)).toISOString();

const submitted = (id: string, at: number, customer = 'cust-1000'): TicketEvent => ({
  kind: 'submitted',
  sourceTicketId: id,
  ts: ts(at),
  request: {
    sourceTicketId: id,
    sourceCustomerId: customer,
    offerId: 100001,
    transactionIds: [700001],
    description: 'd',
  },
  transactions: ['700001'],
});
const accepted = (id: string, at: number): TicketEvent => ({
  kind: 'accepted',
  sourceTicketId: id,
  ts: ts(at),
  httpStatus: 202,
  requestId: 'r-1',
  attempts: 1,
});
const update = (id: string, u: Partial<TicketWebhookUpdate>): TicketWebhookUpdate => ({
  sourceTicketId: id,
  sourceCustomerId: 'cust-1000',
  processingStatus: 'Success',
  ...u,
});

describe('ticket ids', () => {
  it('a plain safe integer is sent as that number; anything else is refused naming it and the rule', () => {
    expect(ticketNumberOf('700123')).toBe(700123);
    expect(ticketNumberOf('0')).toBe(0);
    for (const bad of ['tx-1', '007', '-5', '1e3', '1.0', ' 12', '9007199254740992', ''])
      expect(ticketNumberOf(bad), bad).toBeNull();
    expect(ticketNumbers(['1', '9007199254740991'])).toEqual([1, 9007199254740991]);
    expect(() => ticketNumbers(['12', 'ipi_1SmplTx000001'])).toThrow(
      /--transaction "ipi_1SmplTx000001" cannot be named in a ticket: a ticket's transactionIds are numbers/,
    );
  });
});

describe('the lifecycle', () => {
  it("follows the interface's state machine and never goes back", () => {
    const events: TicketEvent[] = [
      submitted('A', 0),
      accepted('A', 1),
      {
        kind: 'update',
        sourceTicketId: 'A',
        ts: ts(2),
        key: 'a1',
        update: update('A', { status: 'In Process' }),
      },
      {
        kind: 'update',
        sourceTicketId: 'A',
        ts: ts(3),
        key: 'a2',
        update: update('A', { status: 'Closed', resolutionType: 'No Credit: Reward Pending' }),
      },
      // A late copy of the first update does not reopen it.
      {
        kind: 'update',
        sourceTicketId: 'A',
        ts: ts(4),
        key: 'a3',
        update: update('A', { status: 'In Process' }),
      },
      submitted('B', 0, 'nobody'),
      accepted('B', 1),
      {
        kind: 'update',
        sourceTicketId: 'B',
        ts: ts(2),
        key: 'b1',
        update: update('B', {
          processingStatus: 'Error',
          processingStatusMessage: 'Invalid customer id: nobody',
        }),
      },
      submitted('C', 0),
    ];
    const t = foldTickets(events);
    expect(t.get('A')).toMatchObject({
      phase: 'closed',
      resolutionType: 'No Credit: Reward Pending',
      updates: 3,
    });
    expect(t.get('B')).toMatchObject({ phase: 'error', errorMessage: 'Invalid customer id: nobody' });
    expect(t.get('C')).toMatchObject({ phase: 'submitted', acceptedAt: null });
    // Corrected and resubmitted: a new submission, the error forgotten.
    const again = foldTickets([...events, submitted('B', 5), accepted('B', 6)]);
    expect(again.get('B')).toMatchObject({ phase: 'received', submissions: 2, errorMessage: null });
    const s = ticketsStatus(t.values(), Date.parse(ts(100)), 50_000);
    expect(s.counts).toEqual({ tickets: 3, open: 1, stale: 1, error: 1, closed: 1 });
    expect(isStale(t.get('C')!, Date.parse(ts(10)), 50_000)).toBe(false);
  });
});

const kinds = [
  {
    name: 'file',
    location: async (): Promise<LedgerRef> =>
      fileRef(join(await mkdtemp(join(tmpdir(), 'svc-tstore-')), 'l.ndjson')),
  },
  { name: 'PostgreSQL', location: async (): Promise<LedgerRef> => pgRef(await pgs.createDatabase()) },
];

for (const kind of kinds) {
  describe(`ticket store [${kind.name}]`, () => {
    it('keeps events in order across reopenings; a repeated update is stored once, a new submission makes it new', async () => {
      const ledger = await kind.location();
      const empty = await openTicketStore(ledger, { logger, readOnly: true });
      expect(await empty.events()).toEqual([]);
      await empty.close();

      const a = await openTicketStore(ledger, { logger });
      await a.append(submitted('T-1', 0));
      const err = update('T-1', {
        processingStatus: 'Error',
        processingStatusMessage: 'Invalid offer id: 1',
      });
      expect(await storeUpdate(a, err, ts(1))).toBe(true);
      expect(await storeUpdate(a, { ...err }, ts(2))).toBe(false);
      await a.close();

      // Another process (a second open) sees it, and the same Error after a resubmission is a new update.
      const b = await openTicketStore(ledger, { logger });
      expect(await storeUpdate(b, err, ts(3))).toBe(false);
      await b.append(submitted('T-1', 4));
      expect(await storeUpdate(b, err, ts(5))).toBe(true);
      const t = (await loadTickets(b)).get('T-1');
      expect(t).toMatchObject({ phase: 'error', submissions: 2, updates: 2 });
      expect((await b.events()).map((e) => e.kind)).toEqual(['submitted', 'update', 'submitted', 'update']);
      await b.close();
    });

    it('masks card numbers before they are stored', async () => {
      const ledger = await kind.location();
      const s = await openTicketStore(ledger, { logger });
      await storeUpdate(s, update('T-9', { description: 'card 4111 1111 1111 1111 read out' }), ts(0));
      const [e] = await s.events();
      expect(JSON.stringify(e)).not.toMatch(/4111 1111 1111 1111/);
      await s.close();
    });
  });
}

it('a torn last line of the tickets file is skipped and the next event starts a line of its own', async () => {
  const ledger = join(await mkdtemp(join(tmpdir(), 'svc-tstore-')), 'l.ndjson');
  const path = ticketsPathOf(ledger);
  await writeFile(path, `${JSON.stringify(submitted('T-1', 0))}\n{"kind":"upd`);
  const s = await openTicketStore(fileRef(ledger), { logger });
  await s.append(accepted('T-1', 1));
  expect((await s.events()).map((e) => e.kind)).toEqual(['submitted', 'accepted']);
  await s.close();
  expect((await readFile(path, 'utf8')).split('\n').filter(Boolean)).toHaveLength(3);
});
