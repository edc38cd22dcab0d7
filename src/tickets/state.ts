// The ticket lifecycle of the interface as a pure fold over stored events: created (202) → first update Success →
// In Process, or Error → not created (correct and resubmit); next update → Closed with a resolution.
import { createHash } from 'node:crypto';
import type { CreateTicketRequest, Ticket, TicketWebhookUpdate } from '../client/models.ts';

/**
 * One stored event of a ticket (a line of the tickets file, a row of the PostgreSQL table).
 * - `submitted`: a create is about to be sent (before the first attempt), with our own transaction ids;
 * - `accepted`: the service answered 2xx (202) to a create;
 * - `update`: a webhook update received (`key` makes a second delivery of it a no-op);
 * - `fetched`: the ticket as `tickets get` read it back.
 * @example {"kind":"update","sourceTicketId":"T-1","ts":"…","key":"…","update":{"processingStatus":"Success",…}}
 */
export type TicketEvent =
  | {
      kind: 'submitted';
      sourceTicketId: string;
      ts: string;
      request: CreateTicketRequest;
      transactions: string[];
    }
  | {
      kind: 'accepted';
      sourceTicketId: string;
      ts: string;
      httpStatus: number;
      requestId: string | null;
      attempts: number;
    }
  | { kind: 'update'; sourceTicketId: string; ts: string; key: string; update: TicketWebhookUpdate }
  | { kind: 'fetched'; sourceTicketId: string; ts: string; ticket: Ticket };

/**
 * Where a ticket stands:
 * `submitted` (a create sent, no 202 yet: it is resubmitted), `received` (202, waiting for the first update),
 * `processing` (first update Success: In Process), `error` (first update Error: not created; correct and resubmit),
 * `closed` (a resolution, or blank: too little information, recreate it).
 */
export type TicketPhase = 'submitted' | 'received' | 'processing' | 'error' | 'closed';

/**
 * One ticket as the store knows it.
 * @example { sourceTicketId: 'T-1', phase: 'closed', resolutionType: 'No Credit: Reward Received', transactions: ['700123'], … }
 */
export interface TicketRecord {
  sourceTicketId: string;
  sourceCustomerId: string | null;
  offerId: number | null;
  /** Our transaction ids (as given to `tickets create`), or the numbers an update or a read named. */
  transactions: string[];
  description: string | null;
  phase: TicketPhase;
  /** Creates submitted under this id (a resubmission after an Error or a blank closure adds one). */
  submissions: number;
  submittedAt: string | null;
  acceptedAt: string | null;
  /** requestId of the 202 and the attempts it took. */
  requestId: string | null;
  attempts: number | null;
  /** When the last update (or read) arrived. */
  lastUpdateAt: string | null;
  updates: number;
  svcTicketId: number | null;
  status: string | null;
  errorMessage: string | null;
  resolutionType: string | null;
  svcResponse: string | null;
  solvedAt: string | null;
}

const RANK: Record<TicketPhase, number> = { submitted: 0, received: 1, processing: 2, error: 3, closed: 3 };

function blank(id: string): TicketRecord {
  return {
    sourceTicketId: id,
    sourceCustomerId: null,
    offerId: null,
    transactions: [],
    description: null,
    phase: 'received',
    submissions: 0,
    submittedAt: null,
    acceptedAt: null,
    requestId: null,
    attempts: null,
    lastUpdateAt: null,
    updates: 0,
    svcTicketId: null,
    status: null,
    errorMessage: null,
    resolutionType: null,
    svcResponse: null,
    solvedAt: null,
  };
}

/** Moves a ticket forward only: a late or repeated update never takes a closed ticket back to In Process. */
function advance(t: TicketRecord, phase: TicketPhase): boolean {
  if (RANK[phase] < RANK[t.phase]) return false;
  t.phase = phase;
  return true;
}

function fillFrom(t: TicketRecord, x: Partial<Ticket & TicketWebhookUpdate>): void {
  if (x.sourceCustomerId !== undefined && t.sourceCustomerId === null)
    t.sourceCustomerId = String(x.sourceCustomerId);
  if (typeof x.offerId === 'number' && t.offerId === null) t.offerId = x.offerId;
  if (Array.isArray(x.transactionIds) && t.transactions.length === 0)
    t.transactions = x.transactionIds.map(String);
  if (typeof x.description === 'string' && t.description === null) t.description = x.description;
  if (typeof x.svcTicketId === 'number') t.svcTicketId = x.svcTicketId;
}

function applySubmitted(t: TicketRecord, e: Extract<TicketEvent, { kind: 'submitted' }>): void {
  // The same create again while it waits for its 202 (a resubmission after no answer) is the same submission.
  if (t.submissions > 0 && t.phase === 'submitted') return;
  t.submissions++;
  t.phase = 'submitted';
  t.submittedAt = e.ts;
  t.acceptedAt = null;
  t.errorMessage = null;
  t.resolutionType = null;
  t.svcResponse = null;
  t.status = null;
  t.solvedAt = null;
  t.sourceCustomerId = String(e.request.sourceCustomerId);
  t.offerId = e.request.offerId;
  t.transactions = [...e.transactions];
  t.description = e.request.description;
}

function applyUpdate(t: TicketRecord, e: Extract<TicketEvent, { kind: 'update' }>): void {
  const u = e.update;
  fillFrom(t, u);
  t.updates++;
  t.lastUpdateAt = e.ts;
  if (u.processingStatus === 'Error') {
    if (advance(t, 'error')) t.errorMessage = u.processingStatusMessage ?? '(no message)';
    return;
  }
  if (u.status === 'Closed') {
    if (!advance(t, 'closed')) return;
    t.status = 'Closed';
    t.resolutionType = u.resolutionType ?? '';
    t.svcResponse = u.svcResponse ?? null;
    t.solvedAt ??= e.ts;
    return;
  }
  if (advance(t, 'processing')) t.status = u.status ?? 'In Process';
}

function applyFetched(t: TicketRecord, e: Extract<TicketEvent, { kind: 'fetched' }>): void {
  const k = e.ticket;
  fillFrom(t, k);
  t.lastUpdateAt = e.ts;
  if (k.status === 'Closed') {
    if (!advance(t, 'closed')) return;
    t.status = 'Closed';
    t.resolutionType = k.resolutionType ?? '';
    t.svcResponse = k.svcResponse ?? null;
    t.solvedAt = k.ticketSolvedDate ?? e.ts;
  } else if (advance(t, 'processing')) t.status = k.status;
}

/** The event of a ticket as read back from the service (`tickets get`). */
export function fetchedEvent(ticket: Ticket, ts = new Date().toISOString()): TicketEvent {
  return { kind: 'fetched', sourceTicketId: String(ticket.sourceTicketId), ts, ticket };
}

/** Applies one event to a ticket (the state machine's step). */
export function applyEvent(t: TicketRecord, e: TicketEvent): void {
  if (e.kind === 'submitted') applySubmitted(t, e);
  else if (e.kind === 'accepted') {
    // The first update can be stored before the 202 is (the service answers the webhook and the create at once).
    advance(t, 'received');
    t.acceptedAt ??= e.ts;
    t.requestId = e.requestId;
    t.attempts = e.attempts;
  } else if (e.kind === 'update') applyUpdate(t, e);
  else applyFetched(t, e);
}

/**
 * Every ticket of the events, in the order first met.
 * @example foldTickets(events).get('T-1')?.phase // 'closed'
 */
export function foldTickets(events: Iterable<TicketEvent>): Map<string, TicketRecord> {
  const out = new Map<string, TicketRecord>();
  for (const e of events) {
    let t = out.get(e.sourceTicketId);
    if (!t) {
      t = blank(e.sourceTicketId);
      out.set(e.sourceTicketId, t);
    }
    applyEvent(t, e);
  }
  return out;
}

/** JSON with sorted keys: the same update, whatever order its members came in, gives the same text. */
function stable(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stable).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stable(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

/**
 * The key of a webhook update: its content and the submission it belongs to (the same Error after a resubmission
 * is a new update, the same delivery twice is not).
 * @example updateKey(u, 1) // 'T-1:1:9f86d081…'
 */
export function updateKey(u: TicketWebhookUpdate, submission: number): string {
  // Letters only (hex digits shifted to g..p): no run of digits in it can look like a card number to the mask.
  const digest = createHash('sha256')
    .update(stable(u))
    .digest('hex')
    .slice(0, 32)
    .replace(/[0-9]/g, (d) => String.fromCharCode(103 + Number(d)));
  return `${String(u.sourceTicketId)}:${submission}:${digest}`;
}
