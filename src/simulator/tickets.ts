// Tickets of the simulator: create (202, then webhook updates on a timer), retrieve, and the lifecycle in between.

import type { CreateTicketRequest, Ticket, TicketWebhookUpdate } from '../client/models.ts';
import { LIMITS, RESOLUTION_TYPES } from '../client/models.ts';
import { SIGNATURE_HEADER, signWebhook, TIMESTAMP_HEADER } from '../tickets/webhook.ts';
import type { FieldProblem } from './http.ts';
import { isObject, typeOf } from './http.ts';
import { draw } from './rng.ts';

/** A description shorter than this (trimmed) is "too little information": closed with a blank resolution. */
export const MIN_DESCRIPTION_CHARS = 10;
/** institutionId echoed in Error updates when the request carried no X-SVC-Institution-Id. */
export const DEFAULT_INSTITUTION_ID = 'sim-institution';
export const FIRST_SVC_TICKET_ID = 500_001;

const ALLOWED = new Set([
  'authorEmailAddress',
  'sourceTicketId',
  'sourceCustomerId',
  'transactionIds',
  'offerId',
  'description',
]);

/** What the ticket desk needs to know of the rest of the simulator. */
export interface TicketDeps {
  seed: number;
  delayMs: number;
  webhookUrl: string | undefined;
  /** When set, each webhook POST is signed (X-SVC-Timestamp, X-SVC-Signature: v1=HMAC-SHA256). */
  webhookSecret?: string | undefined;
  now(): number;
  knownCustomer(id: string): boolean;
  /** Activation date of an ad, or undefined for an unknown offer. */
  adActivation(adId: string): string | undefined | null;
  redemptionIdsFor(customerId: string, adId: string): string[];
  log(event: string, fields: Record<string, unknown>): void;
}

interface Entry {
  /** Updates sent so far: 0 = received, processing pending. */
  phase: 0 | 1 | 2;
  ticket: Ticket;
  /** The create as received: the same create again is a resubmission (202, nothing new), not a duplicate. */
  request: string;
}

/** A create's content in a fixed member order, to tell a resubmission from a second ticket under the same id. */
function requestText(req: CreateTicketRequest): string {
  return JSON.stringify([
    req.sourceTicketId,
    req.sourceCustomerId,
    req.offerId,
    req.transactionIds,
    req.description,
    req.authorEmailAddress ?? null,
  ]);
}

/**
 * The ticket desk: validates, acknowledges, and plays the lifecycle on timers.
 * @example const desk = createTicketDesk(deps); desk.create(body, 'inst-1'); desk.get('T-1')
 */
export interface TicketDesk {
  /** Problems with the body's shape/types (answer 400), or undefined after the ticket is queued (answer 202). */
  create(
    body: unknown,
    institutionId: string | undefined,
  ): { unreadable: string } | { problems: FieldProblem[] } | undefined;
  /** The ticket as retrieval shows it, or undefined (unknown, failed, or not yet processed). */
  get(sourceTicketId: string): Ticket | undefined;
  /** Updates sent (or attempted) so far, in order. */
  sent(): TicketWebhookUpdate[];
  clear(): void;
  close(): Promise<void>;
}

export function checkTicketBody(
  body: unknown,
): { unreadable: string } | { problems: FieldProblem[] } | undefined {
  if (!isObject(body)) return { unreadable: `body: expected an object, got ${typeOf(body)}` };
  const problems: FieldProblem[] = [];
  for (const key of Object.keys(body))
    if (!ALLOWED.has(key)) problems.push({ field: key, message: 'unknown field' });
  const need = (field: string, ok: boolean, expected: string): void => {
    const v = body[field];
    if (v === undefined) problems.push({ field, message: 'required field is missing' });
    else if (!ok) problems.push({ field, message: `expected ${expected}, got ${typeOf(v)}` });
  };
  const {
    sourceTicketId: st,
    sourceCustomerId: sc,
    transactionIds: ids,
    offerId,
    description,
    authorEmailAddress,
  } = body;
  need(
    'sourceTicketId',
    typeof st === 'string' && st.length > 0 && st.length <= 128,
    'a string of 1 to 128 characters',
  );
  need(
    'sourceCustomerId',
    (typeof sc === 'string' && sc.length > 0) || (typeof sc === 'number' && Number.isFinite(sc)),
    'a non-empty string or a number',
  );
  need('transactionIds', Array.isArray(ids), 'an array of numbers');
  if (Array.isArray(ids)) {
    ids.forEach((v, i) => {
      if (typeof v !== 'number' || !Number.isFinite(v)) {
        problems.push({ field: `transactionIds[${i}]`, message: `expected a number, got ${typeOf(v)}` });
      }
    });
  }
  need('offerId', typeof offerId === 'number' && Number.isFinite(offerId), 'a number');
  need('description', typeof description === 'string', 'a string');
  if (authorEmailAddress !== undefined && typeof authorEmailAddress !== 'string') {
    problems.push({
      field: 'authorEmailAddress',
      message: `expected a string, got ${typeOf(authorEmailAddress)}`,
    });
  }
  return problems.length > 0 ? { problems } : undefined;
}

export function createTicketDesk(deps: TicketDeps): TicketDesk {
  const tickets = new Map<string, Entry>();
  const timers = new Set<NodeJS.Timeout>();
  const inFlight = new Set<AbortController>();
  let updates: TicketWebhookUpdate[] = [];
  let nextSvcId = FIRST_SVC_TICKET_ID;
  let generation = 0;

  const later = (fn: () => void): void => {
    const gen = generation;
    const t = setTimeout(() => {
      timers.delete(t);
      if (gen === generation) fn();
    }, deps.delayMs);
    timers.add(t);
  };

  const post = (update: TicketWebhookUpdate): void => {
    updates.push(update);
    postWebhook(deps, inFlight, update);
  };

  return {
    create(body, institutionId) {
      const shape = checkTicketBody(body);
      if (shape) return shape;
      const req = body as unknown as CreateTicketRequest;
      // The interface: a partner that got no answer resubmits until one arrives. The same create again is the
      // same ticket (acknowledged again, no second lifecycle); another create under a taken id is an Error.
      if (tickets.get(req.sourceTicketId)?.request === requestText(req)) return undefined;
      const problem = ticketProblem(deps, tickets, req);
      if (problem !== undefined) {
        later(() => post(errorUpdate(req, institutionId, problem)));
        return undefined;
      }
      const ticket: Ticket = {
        svcTicketId: nextSvcId++,
        sourceTicketId: req.sourceTicketId,
        sourceCustomerId: req.sourceCustomerId,
        status: 'In Process',
        description: req.description,
        offerId: req.offerId,
        transactionIds: [...req.transactionIds],
        ticketCreatedDate: new Date(deps.now()).toISOString(),
      };
      if (req.authorEmailAddress !== undefined) ticket.authorEmailAddress = req.authorEmailAddress;
      const activation = deps.adActivation(String(req.offerId));
      if (activation) ticket.activationDate = activation;
      const entry: Entry = { phase: 0, ticket, request: requestText(req) };
      tickets.set(req.sourceTicketId, entry);
      const base = {
        svcTicketId: ticket.svcTicketId,
        sourceTicketId: ticket.sourceTicketId,
        sourceCustomerId: ticket.sourceCustomerId,
        description: ticket.description,
        ...(ticket.authorEmailAddress !== undefined ? { authorEmailAddress: ticket.authorEmailAddress } : {}),
      };
      later(() => {
        entry.phase = 1;
        post({ ...base, status: 'In Process', processingStatus: 'Success' });
        later(() => {
          closeTicket(deps, entry);
          post({
            ...base,
            status: 'Closed',
            processingStatus: 'Success',
            resolutionType: ticket.resolutionType ?? '',
            svcResponse: ticket.svcResponse ?? '',
          });
        });
      });
      return undefined;
    },
    get(id) {
      const entry = tickets.get(id);
      return entry && entry.phase > 0 ? structuredClone(entry.ticket) : undefined;
    },
    sent: () => [...updates],
    clear() {
      generation++;
      for (const t of timers) clearTimeout(t);
      timers.clear();
      tickets.clear();
      updates = [];
      nextSvcId = FIRST_SVC_TICKET_ID;
    },
    async close() {
      this.clear();
      for (const ac of inFlight) ac.abort();
    },
  };
}

function closeTicket(deps: TicketDeps, entry: Entry): void {
  const t = entry.ticket;
  entry.phase = 2;
  t.status = 'Closed';
  t.ticketSolvedDate = new Date(deps.now()).toISOString();
  if (t.description.trim().length < MIN_DESCRIPTION_CHARS) {
    t.resolutionType = '';
    t.svcResponse =
      'Too little information to process this ticket; please recreate it with a fuller description.';
    return;
  }
  const pick = Math.floor(draw(deps.seed, 'resolution', t.sourceTicketId) * RESOLUTION_TYPES.length);
  const resolution = RESOLUTION_TYPES[pick] ?? RESOLUTION_TYPES[0];
  t.resolutionType = resolution;
  t.svcResponse = RESPONSES[resolution];
  t.redemptionIds = deps.redemptionIdsFor(String(t.sourceCustomerId), String(t.offerId));
}

/** One webhook POST of an update (signed when the desk has a secret), logged; aborted after 10 s or on close. */
function postWebhook(deps: TicketDeps, inFlight: Set<AbortController>, update: TicketWebhookUpdate): void {
  const url = deps.webhookUrl;
  if (!url) return;
  const ac = new AbortController();
  inFlight.add(ac);
  const timer = setTimeout(() => ac.abort(), 10_000);
  const body = JSON.stringify(update);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (deps.webhookSecret !== undefined) {
    const timestamp = Math.floor(deps.now() / 1000);
    headers[TIMESTAMP_HEADER] = String(timestamp);
    headers[SIGNATURE_HEADER] = signWebhook(deps.webhookSecret, timestamp, body);
  }
  fetch(url, { method: 'POST', headers, body, signal: ac.signal, redirect: 'manual' })
    .then(async (res) => {
      await res.arrayBuffer().catch(() => undefined);
      deps.log('webhook.sent', { sourceTicketId: update.sourceTicketId, status: res.status });
    })
    .catch((err: unknown) => {
      deps.log('webhook.failed', {
        sourceTicketId: update.sourceTicketId,
        error: err instanceof Error ? err.message : String(err),
      });
    })
    .finally(() => {
      clearTimeout(timer);
      inFlight.delete(ac);
    });
}

/** Why a ticket cannot be created, decided now (deterministically); the answer only travels by webhook. */
function ticketProblem(
  deps: TicketDeps,
  tickets: ReadonlyMap<string, Entry>,
  req: CreateTicketRequest,
): string | undefined {
  if (req.transactionIds.length === 0)
    return 'Invalid transaction id: at least one transactionId is required';
  if (req.transactionIds.length > LIMITS.ticketTransactionIdsMax) {
    return `Too many transaction ids: at most ${LIMITS.ticketTransactionIdsMax} per ticket, got ${req.transactionIds.length}`;
  }
  const badTx = req.transactionIds.find((t) => !Number.isSafeInteger(t) || t <= 0);
  if (badTx !== undefined) return `Invalid transaction id: ${badTx}`;
  if (!deps.knownCustomer(String(req.sourceCustomerId)))
    return `Invalid customer id: ${req.sourceCustomerId}`;
  if (!Number.isSafeInteger(req.offerId) || deps.adActivation(String(req.offerId)) === undefined) {
    return `Invalid offer id: ${req.offerId}`;
  }
  if (tickets.has(req.sourceTicketId)) return `Ticket already exists: ${req.sourceTicketId}`;
  return undefined;
}

/** The Error webhook of a create that cannot become a ticket. */
function errorUpdate(
  req: CreateTicketRequest,
  institutionId: string | undefined,
  problem: string,
): TicketWebhookUpdate {
  const update: TicketWebhookUpdate = {
    sourceTicketId: req.sourceTicketId,
    sourceCustomerId: req.sourceCustomerId,
    processingStatus: 'Error',
    processingStatusMessage: problem,
    offerId: req.offerId,
    transactionIds: req.transactionIds,
    description: req.description,
    institutionId: institutionId ?? DEFAULT_INSTITUTION_ID,
  };
  if (req.authorEmailAddress !== undefined) update.authorEmailAddress = req.authorEmailAddress;
  return update;
}

const RESPONSES: Record<(typeof RESOLUTION_TYPES)[number], string> = {
  'No Credit: Not eligible for reward':
    'The transactions do not meet the offer terms (channel, minimum spend or dates), so no reward is due.',
  'No Credit: Reward Pending': 'The reward was approved and will be paid with the next settlement run.',
  'No Credit: Reward Received': 'The reward for these transactions was already paid to the customer.',
};
