// `trace`: what became of each transaction id, from the ledgers, the rejects file, the customer's redemptions and
// the tickets that name it — one verdict each, with its evidence, and an exit status for the whole answer.
import type { Ad, Redemption } from '../client/models.ts';
import type { FoundLine } from '../ledger/file/find.ts';
import { type FetchedCustomer, rewardStateOf } from '../reconcile/reconcile.ts';
import type { TicketRecord } from '../tickets/state.ts';
import type { RejectHit } from './rejects.ts';

/**
 * The verdict classes, each with its exit status (docs/support.md):
 * reward-paid 0 · rejected 2 · failed 3 · not-read 4 · reward-pending 6 · no-reward 7 · disputed 8 ·
 * reward-unchecked 9 (acknowledged; its customer is unknown, or their redemptions could not be read).
 */
export type TraceVerdict =
  | 'reward-paid'
  | 'rejected'
  | 'failed'
  | 'not-read'
  | 'reward-pending'
  | 'no-reward'
  | 'disputed'
  | 'reward-unchecked';

export const VERDICT_EXIT: Record<TraceVerdict, number> = {
  'reward-paid': 0,
  rejected: 2,
  failed: 3,
  'not-read': 4,
  'reward-pending': 6,
  'no-reward': 7,
  disputed: 8,
  'reward-unchecked': 9,
};

/** Several ids: the first of these classes that any id has decides the exit status. */
export const VERDICT_SEVERITY: readonly TraceVerdict[] = [
  'not-read',
  'rejected',
  'failed',
  'reward-unchecked',
  'disputed',
  'no-reward',
  'reward-pending',
  'reward-paid',
];

/** The reward a redemption shows for the transaction. */
export interface RewardEvidence {
  state: 'paid' | 'pending';
  customer: string;
  redemptionId: string;
  amount: number;
  adId: string;
  merchantName: string | null;
  redemptionDate: string | null;
  rewardSettlementRunDate: string | null;
}

/** A ticket that names the transaction, as stored (and read back from the service when it could be). */
export interface TicketEvidence {
  sourceTicketId: string;
  svcTicketId: number | null;
  phase: TicketRecord['phase'];
  status: string | null;
  resolutionType: string | null;
  svcResponse: string | null;
  errorMessage: string | null;
  lastUpdateAt: string | null;
}

/** What is known of one customer's redemptions: the answer, or why there is none. */
export type CustomerRedemptions =
  | { ok: true; requestId: string | null; redemptions: Redemption[]; ads: Record<string, Ad> }
  | { ok: false; error: string };

/** What fetchRedemptions (reconcile/reconcile.ts) got for one customer, as the trace uses it. */
export function customerRedemptionsOf(f: FetchedCustomer): CustomerRedemptions {
  return f.error
    ? { ok: false, error: `${f.error.code}: ${f.error.message}` }
    : { ok: true, requestId: f.requestId, redemptions: f.redemptions, ads: f.ads };
}

/**
 * The answer for one transaction id.
 * @example { transactionId: 'can-csv-0001', verdict: 'reward-paid', exitStatus: 0, acked: {...}, reward: {...}, … }
 */
export interface TransactionTrace {
  transactionId: string;
  verdict: TraceVerdict;
  exitStatus: number;
  /** The verdict in words. */
  summary: string;
  customer: string | null;
  /** The first acknowledged ledger line holding it. */
  acked: FoundLine | null;
  /** When never acknowledged: its last failed line (the next send resends it). */
  failed: FoundLine | null;
  rejected: RejectHit[];
  reward: RewardEvidence | null;
  /** Why the reward could not be checked (reward-unchecked). */
  rewardError: string | null;
  tickets: TicketEvidence[];
}

/** Everything gathered for the ids, before any verdict. */
export interface TraceFacts {
  hits: FoundLine[];
  rejects: RejectHit[];
  /** Customer of each id: given (--customer), or known from a ticket or a reject. */
  customerOf: (id: string) => string | null;
  redemptions: Map<string, CustomerRedemptions>;
  tickets: TicketRecord[];
  now: number;
}

function rewardOf(id: string, customer: string | null, facts: TraceFacts) {
  if (customer === null) return { reward: null, error: 'no customer: give --customer' };
  const answer = facts.redemptions.get(customer);
  if (!answer) return { reward: null, error: `the redemptions of ${customer} were not asked` };
  if (!answer.ok) return { reward: null, error: answer.error };
  const r = answer.redemptions.find((x) => String(x.transactionId) === id);
  if (!r) return { reward: null, error: null };
  const reward: RewardEvidence = {
    state: rewardStateOf(r, facts.now),
    customer,
    redemptionId: String(r.redemptionId),
    amount: r.amount,
    adId: String(r.adId),
    merchantName: answer.ads[r.adId]?.merchantName ?? null,
    redemptionDate: r.redemptionDate ?? null,
    rewardSettlementRunDate: r.rewardSettlementRunDate ?? null,
  };
  return { reward, error: null };
}

function ticketEvidence(t: TicketRecord): TicketEvidence {
  return {
    sourceTicketId: t.sourceTicketId,
    svcTicketId: t.svcTicketId,
    phase: t.phase,
    status: t.status,
    resolutionType: t.resolutionType,
    svcResponse: t.svcResponse,
    errorMessage: t.errorMessage,
    lastUpdateAt: t.lastUpdateAt,
  };
}

function where(h: FoundLine): string {
  const lines = h.lines ? ` lines ${h.lines[0]}-${h.lines[1]}` : '';
  return h.source ? `${h.source}${lines}` : 'an unnamed source';
}

/** A reward amount with two decimals (the interface's decimal; the programme's currency). */
const money = (n: number): string => (Number.isFinite(n) ? n.toFixed(2) : String(n));

type Facts = Omit<TransactionTrace, 'verdict' | 'exitStatus' | 'summary'>;

function verdictOf(t: Facts): [TraceVerdict, string] {
  const [v, text] = deliveryVerdict(t) ?? rewardVerdict(t);
  // A redemption for a transaction this tool never delivered: earned on a transaction sent another way.
  if (!t.acked && t.reward)
    return [
      v,
      `${text}; yet redemption ${t.reward.redemptionId} (${t.reward.state}) names it: the service had it from elsewhere`,
    ];
  return [v, text];
}

function deliveryVerdict(t: Facts): [TraceVerdict, string] | null {
  if (!t.acked) {
    if (t.failed)
      return [
        'failed',
        `failed: last tried ${t.failed.ts ?? '?'} (${t.failed.error ?? 'no error recorded'}); the next send resends it`,
      ];
    const r = t.rejected[t.rejected.length - 1];
    if (r)
      return [
        'rejected',
        `rejected, never sent: ${r.source ?? '?'} line ${r.line ?? '?'} (fix the record and send it again)`,
      ];
    return [
      'not-read',
      'not read: no ledger or rejects file given holds it (never in an input sent from here)',
    ];
  }
  return null;
}

function rewardVerdict(t: Facts): [TraceVerdict, string] {
  if (!t.acked) return ['not-read', 'not read'];
  const a = `acknowledged ${t.acked.ts ?? '?'} (requestId ${t.acked.requestId ?? '?'})`;
  if (t.tickets.length > 0) {
    const k = t.tickets[t.tickets.length - 1] as TicketEvidence;
    return ['disputed', `${a}; disputed: ticket ${k.sourceTicketId} ${describeTicket(k)}`];
  }
  if (t.reward?.state === 'paid')
    return [
      'reward-paid',
      `${a}; reward paid: ${money(t.reward.amount)} (settlement run ${t.reward.rewardSettlementRunDate ?? '?'})`,
    ];
  if (t.reward?.state === 'pending')
    return [
      'reward-pending',
      `${a}; reward pending: ${money(t.reward.amount)}, approved, to be paid by the settlement run ${t.reward.rewardSettlementRunDate ?? '(not set)'}`,
    ];
  if (t.rewardError !== null) return ['reward-unchecked', `${a}; reward not checked: ${t.rewardError}`];
  return ['no-reward', `${a}; no reward (yet): no redemption of ${t.customer} names it`];
}

/** A ticket's state in words. */
export function describeTicket(k: TicketEvidence): string {
  switch (k.phase) {
    case 'submitted':
      return 'submitted, no acknowledgement yet';
    case 'received':
      return 'received (202), waiting for its first update';
    case 'processing':
      return 'In Process';
    case 'error':
      return `not created (Error: ${k.errorMessage ?? '?'}); correct it and resubmit`;
    case 'closed':
      return `Closed: ${k.resolutionType ? k.resolutionType : 'blank resolution (too little information: recreate it)'}${k.svcResponse ? ` — ${k.svcResponse}` : ''}`;
  }
}

/**
 * One trace per id, in the order given.
 * @example traceTransactions(['can-csv-0001'], facts)[0].verdict // 'reward-paid'
 */
export function traceTransactions(ids: string[], facts: TraceFacts): TransactionTrace[] {
  return ids.map((id) => {
    const mine = facts.hits.filter((h) => h.transactionId === id);
    const acked = mine.find((h) => h.status === 'acked') ?? null;
    const failed = acked ? null : (mine.filter((h) => h.status === 'failed').pop() ?? null);
    const customer = facts.customerOf(id);
    const { reward, error } = rewardOf(id, customer, facts);
    const base = {
      transactionId: id,
      customer,
      acked,
      failed,
      rejected: facts.rejects.filter((r) => r.transactionId === id),
      reward,
      rewardError: error,
      tickets: facts.tickets.filter((t) => t.transactions.includes(id)).map(ticketEvidence),
    };
    const [verdict, summary] = verdictOf(base);
    return { ...base, verdict, exitStatus: VERDICT_EXIT[verdict], summary };
  });
}

/** The exit status of several traces: the most severe class present (VERDICT_SEVERITY). */
export function traceExit(traces: TransactionTrace[]): number {
  for (const v of VERDICT_SEVERITY) if (traces.some((t) => t.verdict === v)) return VERDICT_EXIT[v];
  return 0;
}

/** The readable form: a verdict line per id, then its evidence. */
export function formatTraces(traces: TransactionTrace[]): string[] {
  const out: string[] = [];
  for (const t of traces) {
    out.push(
      `${t.transactionId}: ${t.verdict.toUpperCase()} (exit ${t.exitStatus})${t.customer ? `  customer ${t.customer}` : ''}`,
    );
    out.push(`  ${t.summary}`);
    if (t.acked)
      out.push(
        `  ledger:   acked ${t.acked.ts ?? '?'}, batch ${t.acked.batchId ?? '?'} (run ${t.acked.runId ?? '?'}), requestId ${t.acked.requestId ?? '?'}, batch read from ${where(t.acked)} [${t.acked.ledger}:${t.acked.ledgerLine}]`,
      );
    if (t.failed)
      out.push(
        `  ledger:   failed ${t.failed.ts ?? '?'}, batch ${t.failed.batchId ?? '?'}, HTTP ${t.failed.httpStatus ?? 'none'}: ${t.failed.error ?? '?'}, from ${where(t.failed)} [${t.failed.ledger}:${t.failed.ledgerLine}]`,
      );
    for (const r of t.rejected)
      out.push(
        `  rejected: ${r.source ?? '?'} line ${r.line ?? '?'}: ${r.errors.map((e) => `${e.field}: ${e.message}`).join('; ')} [rejects line ${r.rejectsLine}]`,
      );
    if (t.reward)
      out.push(
        `  reward:   ${t.reward.state}: redemption ${t.reward.redemptionId}, amount ${money(t.reward.amount)}, ad ${t.reward.adId}${t.reward.merchantName ? ` (${t.reward.merchantName})` : ''}, redeemed ${t.reward.redemptionDate ?? '?'}, settlement run ${t.reward.rewardSettlementRunDate ?? '(not set)'}`,
      );
    for (const k of t.tickets)
      out.push(
        `  ticket:   ${k.sourceTicketId}${k.svcTicketId !== null ? ` (svc ${k.svcTicketId})` : ''}: ${describeTicket(k)}`,
      );
  }
  return out;
}
