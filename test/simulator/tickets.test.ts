// Tickets: 202 then webhook updates (Success/In Process, then Closed; or Error), retrieval in each state, 400s and 404s.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RESOLUTION_TYPES } from '../../src/client/models.ts';
import type { Simulator } from '../../src/simulator/index.ts';
import { startSimulator } from '../../src/simulator/index.ts';
import { call, fields, startReceiver } from './helpers.ts';

let sim: Simulator;
let hook: Awaited<ReturnType<typeof startReceiver>>;
// Between two updates of a ticket the test reads it back: 60 ms was too short on a loaded machine (files run in
// parallel), where the ticket had closed before the read of its "In Process" state, or was answered before the
// read of its pending state; 500 ms was too short once at load 14. Only the tests that read a state between two
// updates use this simulator.
const DELAY = 1000;
// Where no state is read between updates (a refusal, an Error update), a simulator whose updates come 20 ms apart:
// "no (further) webhook" is then checked over ten of its delays, not over two of the slow one's.
const FAST_DELAY = 20;
const QUIET_MS = FAST_DELAY * 10;
let fast: Simulator;
let fastHook: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  hook = await startReceiver();
  sim = await startSimulator({ seed: 3, webhookUrl: hook.url, ticketDelayMs: DELAY });
  fastHook = await startReceiver();
  fast = await startSimulator({ seed: 3, webhookUrl: fastHook.url, ticketDelayMs: FAST_DELAY });
});
afterAll(async () => {
  await sim.close();
  await hook.close();
  await fast.close();
  await fastHook.close();
});
beforeEach(() => {
  sim.reset();
  hook.updates.length = 0;
  fast.reset();
  fastHook.updates.length = 0;
});

const ticket = (over: Record<string, unknown> = {}) => ({
  sourceTicketId: 'T-1',
  sourceCustomerId: 'cust-0005',
  transactionIds: [1001, 1002],
  offerId: 100_004,
  description: 'Customer bought twice, no cash back seen',
  authorEmailAddress: 'agent@bank.example',
  ...over,
});
const create = (body: unknown, headers: Record<string, string> = {}, on: Simulator = sim) =>
  call(`${on.url}/csaapi/v2/tickets`, { body, headers });
const get = (id: string, on: Simulator = sim) =>
  call(`${on.url}/csaapi/v2/tickets/${encodeURIComponent(id)}`);

describe('ticket lifecycle', () => {
  it('202, then Success/In Process, then Closed with a resolution; retrieval follows each state', async () => {
    const res = await create(ticket(), { 'X-SVC-Request-Id': 'tk-1' });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ requestId: 'tk-1' });
    expect((await get('T-1')).status).toBe(404); // received, processing pending

    await hook.waitFor(1);
    expect(hook.updates[0]).toMatchObject({
      sourceTicketId: 'T-1',
      sourceCustomerId: 'cust-0005',
      processingStatus: 'Success',
      status: 'In Process',
      svcTicketId: 500_001,
      authorEmailAddress: 'agent@bank.example',
    });
    const open = await get('T-1');
    expect(open.status).toBe(200);
    expect(open.body).toMatchObject({
      svcTicketId: 500_001,
      status: 'In Process',
      offerId: 100_004,
      transactionIds: [1001, 1002],
    });
    expect(open.body.ticketSolvedDate).toBeUndefined();
    expect(open.body.ticketCreatedDate).toMatch(/Z$/);

    await hook.waitFor(2);
    const final = hook.updates[1]!;
    expect(final).toMatchObject({ sourceTicketId: 'T-1', status: 'Closed', processingStatus: 'Success' });
    expect(RESOLUTION_TYPES).toContain(final.resolutionType);
    expect(String(final.svcResponse).length).toBeGreaterThan(10);
    const closed = await get('T-1');
    expect(closed.body).toMatchObject({
      status: 'Closed',
      resolutionType: final.resolutionType,
      svcResponse: final.svcResponse,
    });
    expect(closed.body.ticketSolvedDate).toMatch(/Z$/);
    expect(Array.isArray(closed.body.redemptionIds)).toBe(true);
  });

  it.each([
    ['an unknown offerId', { offerId: 42 }, /offer/i],
    ['more than 10 transactionIds', { transactionIds: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11] }, /10/],
    ['no transactionIds', { transactionIds: [] }, /transaction/i],
    ['a fractional transactionId', { transactionIds: [1.5] }, /transaction/i],
    ['an unknown customer', { sourceCustomerId: 'ghost' }, /customer/i],
  ])('Error update for %s, echoing the submission; retrieval stays 404', async (_n, over, message) => {
    expect((await create(ticket(over), { 'X-SVC-Institution-Id': 'inst-9' }, fast)).status).toBe(202);
    await fastHook.waitFor(1);
    const u = fastHook.updates[0]!;
    expect(u).toMatchObject({
      processingStatus: 'Error',
      sourceTicketId: 'T-1',
      institutionId: 'inst-9',
      ...over,
    });
    expect(u.description).toBe(ticket().description);
    expect(u.authorEmailAddress).toBe('agent@bank.example');
    expect(String(u.processingStatusMessage)).toMatch(message);
    await new Promise((r) => setTimeout(r, QUIET_MS));
    expect(fastHook.updates).toHaveLength(1);
    expect((await get('T-1', fast)).status).toBe(404);
  });

  it('a duplicate sourceTicketId gets an Error; the first ticket is unaffected', async () => {
    await create(ticket());
    await create(ticket({ description: 'second try with the same id' }));
    await hook.waitFor(2);
    const errors = hook.updates.filter((u) => u.processingStatus === 'Error');
    expect(errors).toHaveLength(1);
    expect(String(errors[0]!.processingStatusMessage)).toMatch(/already exists/);
    expect(errors[0]!.institutionId).toBe('sim-institution');
    await hook.waitFor(3);
    expect((await get('T-1')).body).toMatchObject({ status: 'Closed', description: ticket().description });
  });

  it('a too-short description is closed with a blank resolution (too little information)', async () => {
    await create(ticket({ description: 'help' }), {}, fast);
    await fastHook.waitFor(2);
    expect(fastHook.updates[1]).toMatchObject({ status: 'Closed', resolutionType: '' });
  });

  it('the resolution is deterministic for a seed and a ticket id', async () => {
    const hook2 = await startReceiver();
    const other = await startSimulator({ seed: 3, webhookUrl: hook2.url, ticketDelayMs: 5 });
    const ids = ['A-1', 'A-2', 'A-3', 'A-4', 'A-5'];
    for (const id of ids) {
      await create(ticket({ sourceTicketId: id }), {}, fast);
      await call(`${other.url}/csaapi/v2/tickets`, { body: ticket({ sourceTicketId: id }) });
    }
    await fastHook.waitFor(10);
    await hook2.waitFor(10);
    const pick = (us: Array<Record<string, unknown>>) =>
      Object.fromEntries(
        us.filter((u) => u.status === 'Closed').map((u) => [u.sourceTicketId, u.resolutionType]),
      );
    expect(pick(hook2.updates)).toEqual(pick(fastHook.updates));
    await other.close();
    await hook2.close();
  });
});

describe('ticket requests refused', () => {
  it.each([
    ['transactionIds of strings', { transactionIds: ['1001'] }, 'transactionIds[0]'],
    ['offerId as a string', { offerId: '100004' }, 'offerId'],
    ['description missing', { description: undefined }, 'description'],
    ['sourceTicketId missing', { sourceTicketId: undefined }, 'sourceTicketId'],
    ['sourceCustomerId as a boolean', { sourceCustomerId: true }, 'sourceCustomerId'],
    ['an unknown field', { priority: 'high' }, 'priority'],
  ])('400 for %s, and no webhook', async (_n, over, field) => {
    const res = await create(ticket(over), {}, fast);
    expect(res.status).toBe(400);
    expect(res.body.type).toBe('ValidationException');
    expect(fields(res.body)).toEqual([field]);
    await new Promise((r) => setTimeout(r, QUIET_MS));
    expect(fastHook.updates).toHaveLength(0);
  });

  it('accepts a numeric sourceCustomerId type-wise (an unknown one then errors by webhook)', async () => {
    expect((await create(ticket({ sourceCustomerId: 12345 }), {}, fast)).status).toBe(202);
    await fastHook.waitFor(1);
    expect(fastHook.updates[0]).toMatchObject({ processingStatus: 'Error', sourceCustomerId: 12345 });
  });

  it('404 with an envelope for an unknown ticket; 405 for a wrong method', async () => {
    const res = await get('no-such-ticket');
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ type: 'TicketNotFound', status: 404 });
    expect((await call(`${sim.url}/csaapi/v2/tickets`)).status).toBe(405);
    expect(sim.stats().requests.byPath['/csaapi/v2/tickets/{sourceTicketId}']).toBe(1);
  });
});
