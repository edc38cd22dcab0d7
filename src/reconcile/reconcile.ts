// Reconciliation: each customer's redemptions (fetched with bounded concurrency), matched against the acked
// ledger lines that carried their transactions (one streaming pass over the ledgers for the redemption ids
// only), with reward totals by currency.
import pLimit from 'p-limit';
import { SvcNetworkError, unavailableError } from '../client/errors.ts';
import type { Ad, Redemption, RedemptionsResponse } from '../client/models.ts';
import { SvcIngestError } from '../errors.ts';
import type { LedgerReader } from '../ledger/reader.ts';
import { currencyExponent } from '../model/codes.ts';
import { classifyFailure } from '../send/classify.ts';
import type { TicketRecord } from '../tickets/state.ts';

/**
 * Paid or pending (the interface: pending = approved, not yet paid): paid once its rewardSettlementRunDate has
 * come; pending while that date is ahead, or when the service gives none.
 * @example rewardStateOf({ rewardSettlementRunDate: '2025-10-09T00:00:00.000Z', … }, Date.now()) // 'paid'
 */
export function rewardStateOf(
  r: Pick<Redemption, 'rewardSettlementRunDate'>,
  now: number,
): 'paid' | 'pending' {
  const at =
    typeof r.rewardSettlementRunDate === 'string' ? Date.parse(r.rewardSettlementRunDate) : Number.NaN;
  return Number.isFinite(at) && at <= now ? 'paid' : 'pending';
}

/** The part of the client reconciliation uses. */
export interface RedemptionSource {
  getRedemptions(
    sourceCustomerId: string,
    opts?: { lookbackWindowInDays?: number },
  ): Promise<RedemptionsResponse>;
}

/**
 * One customer's answer, or why there is none.
 * @example { sourceCustomerId: 'c-1', requestId: '…', redemptions: [...], ads: {...} }
 */
export interface FetchedCustomer {
  sourceCustomerId: string;
  requestId: string | null;
  redemptions: Redemption[];
  ads: Record<string, Ad>;
  error?: { code: string; message: string; status?: number };
}

/**
 * All customers' answers; `unavailable` is set when the service could not be reached (the customers not yet
 * asked then have no entry).
 */
export interface FetchResult {
  fetched: FetchedCustomer[];
  unavailable?: SvcIngestError;
}

/**
 * Fetch every customer's redemptions, at most `concurrency` calls at once (each customer's session is started
 * once and cached by the client). Failures are classified as a send's are (send/classify.ts): no connection
 * (refused, DNS, TLS) means the service is unavailable and no new call is started; an authentication refusal
 * (401/403 after the client's session renewal), a redirect or a request that cannot be built is thrown. Any
 * other failure (a 4xx such as "Customer not enrolled", a 5xx, a reset, a timeout) is that customer's `error`.
 * @example const { fetched } = await fetchRedemptions(client, ['c-1', 'c-2'], { concurrency: 4 })
 */
export async function fetchRedemptions(
  client: RedemptionSource,
  customers: string[],
  o: { concurrency: number; lookbackDays?: number },
): Promise<FetchResult> {
  const limit = pLimit(o.concurrency);
  let unavailable: SvcIngestError | undefined;
  let fatal: unknown;
  const results = await Promise.all(
    customers.map((id) =>
      limit(async (): Promise<FetchedCustomer | undefined> => {
        if (unavailable || fatal) return undefined;
        try {
          const res = await client.getRedemptions(
            id,
            o.lookbackDays === undefined ? {} : { lookbackWindowInDays: o.lookbackDays },
          );
          return {
            sourceCustomerId: id,
            requestId: res.requestId ?? null,
            redemptions: res.redemptions,
            ads: res.ads,
          };
        } catch (err) {
          if (!(err instanceof SvcIngestError)) {
            fatal ??= err;
            return undefined;
          }
          const c = classifyFailure(err);
          if (c.connection && err instanceof SvcNetworkError) {
            unavailable ??= unavailableError(err);
            return undefined;
          }
          // A 404 here can be about one customer (unknown to the service): that customer's error, not a stop.
          if (c.fatal && c.fatal !== 'endpoint') {
            fatal ??=
              c.fatal === 'auth'
                ? new SvcIngestError(
                    'SEND_AUTH',
                    `${c.message}; stopped at once: the service refused our credentials (check auth.tokenEnv / auth.tokenFile, session.*)`,
                  )
                : err;
            return undefined;
          }
          return {
            sourceCustomerId: id,
            requestId: c.requestId ?? null,
            redemptions: [],
            ads: {},
            error: {
              code: err.code,
              message: err.message,
              ...(c.httpStatus !== null ? { status: c.httpStatus } : {}),
            },
          };
        }
      }),
    ),
  );
  if (fatal) throw fatal;
  const fetched = results.filter((r): r is FetchedCustomer => r !== undefined);
  return unavailable ? { fetched, unavailable } : { fetched };
}

/**
 * One redemption and what the ledgers say of its transaction.
 * @example { redemptionId: 'r-1', transactionId: 't-1', amount: 1.25, currency: 'USD', matched: true, acked: { requestId: '…', batchId: '…', … }, failed: null }
 */
export interface RedemptionMatch {
  redemptionId: string;
  transactionId: string;
  adId: string;
  merchantName: string | null;
  amount: number;
  currency: string;
  redemptionDate: string;
  /** When the reward is (or was) paid: the settlement run that pays it. */
  rewardSettlementRunDate: string | null;
  /** Paid once the settlement run date has come; pending (approved, not yet paid) before, or without one. */
  reward: 'paid' | 'pending';
  matched: boolean;
  /** The first acked ledger line holding the transaction: the batch and the service's requestId. */
  acked: {
    requestId: string | null;
    batchId: string | null;
    ts: string | null;
    runId: string | null;
    ledger: string;
  } | null;
  /** When not matched: the last failed ledger line holding it, if any. */
  failed: { error: string | null; batchId: string | null; ts: string | null; ledger: string } | null;
  /** Stored tickets naming the transaction (tickets create / listen), with where each stands. */
  tickets: ReconcileTicket[];
}

/**
 * A ticket joined to a redemption.
 * @example { sourceTicketId: 'T-1', phase: 'closed', resolutionType: 'No Credit: Reward Received' }
 */
export interface ReconcileTicket {
  sourceTicketId: string;
  phase: TicketRecord['phase'];
  resolutionType: string | null;
  errorMessage: string | null;
}

/**
 * Reward totals of one currency, as decimal strings in the currency's minor-unit precision.
 * @example { total: '4.50', matched: '3.25', unmatched: '1.25' }
 */
export interface RewardTotals {
  total: string;
  matched: string;
  unmatched: string;
  /** Of the total: paid (settlement run date come) and pending (approved, not yet paid). */
  paid: string;
  pending: string;
}

/**
 * The reconciliation of one customer.
 * @example { sourceCustomerId: 'c-1', requestId: '…', redemptions: 3, matched: 2, unmatched: 1, rewards: { USD: {...} }, items: [...] }
 */
export interface CustomerReconciliation {
  sourceCustomerId: string;
  /** requestId of the redemptions call. */
  requestId: string | null;
  redemptions: number;
  matched: number;
  unmatched: number;
  paid: number;
  pending: number;
  rewards: Record<string, RewardTotals>;
  items: RedemptionMatch[];
  /** Set when the customer's redemptions could not be fetched (then every count is 0). */
  error?: { code: string; message: string; status?: number };
}

/**
 * The whole report (`reconcile --json`).
 * @example { ledgers: ['l.ndjson'], ledgerLines: 10, ledgerBadLines: 0, customers: [...], totals: {...} }
 */
export interface ReconcileReport {
  ledgers: string[];
  ledgerLines: number;
  ledgerBadLines: number;
  customers: CustomerReconciliation[];
  totals: {
    customers: number;
    /** Customers whose redemptions could not be fetched. */
    customersFailed: number;
    redemptions: number;
    matched: number;
    unmatched: number;
    paid: number;
    pending: number;
    rewards: Record<string, RewardTotals>;
  };
}

type Sums = { total: number; matched: number; unmatched: number; paid: number; pending: number };
const zero = (): Sums => ({ total: 0, matched: 0, unmatched: 0, paid: 0, pending: 0 });

/** Reward sums in minor units, by currency. */
class RewardSums {
  private readonly sums = new Map<string, Sums>();
  add(currency: string, amount: number, matched: boolean, paid: boolean): void {
    const minor = Math.round(amount * 10 ** exponentOf(currency));
    const s = this.sums.get(currency) ?? zero();
    s.total += minor;
    if (matched) s.matched += minor;
    else s.unmatched += minor;
    if (paid) s.paid += minor;
    else s.pending += minor;
    this.sums.set(currency, s);
  }
  merge(other: RewardSums): void {
    for (const [c, s] of other.sums) {
      const mine = this.sums.get(c) ?? zero();
      for (const k of Object.keys(mine) as Array<keyof Sums>) mine[k] += s[k];
      this.sums.set(c, mine);
    }
  }
  toJSON(): Record<string, RewardTotals> {
    const out: Record<string, RewardTotals> = {};
    for (const c of [...this.sums.keys()].sort()) {
      const s = this.sums.get(c) as Sums;
      const e = exponentOf(c);
      out[c] = {
        total: formatMinor(s.total, e),
        matched: formatMinor(s.matched, e),
        unmatched: formatMinor(s.unmatched, e),
        paid: formatMinor(s.paid, e),
        pending: formatMinor(s.pending, e),
      };
    }
    return out;
  }
}

const exponentOf = (currency: string): number => currencyExponent(currency) ?? 2;

/**
 * Minor units as a decimal string with `exponent` decimals.
 * @example formatMinor(-1250, 2) // '-12.50'
 */
export function formatMinor(minor: number, exponent: number): string {
  const digits = String(Math.abs(minor)).padStart(exponent + 1, '0');
  const text = exponent === 0 ? digits : `${digits.slice(0, -exponent)}.${digits.slice(-exponent)}`;
  return minor < 0 ? `-${text}` : text;
}

/**
 * The currency of a redemption's reward: the interface's Redemption carries none, so `fallback` (the
 * programme's currency, `--currency`) unless the service adds a `currency` or `currencyCode` member.
 */
function currencyOf(r: Redemption, fallback: string): string {
  const x = r as Redemption & { currency?: unknown; currencyCode?: unknown };
  const c =
    typeof x.currency === 'string'
      ? x.currency
      : typeof x.currencyCode === 'string'
        ? x.currencyCode
        : fallback;
  return c.trim().toUpperCase() || fallback;
}

/**
 * Match every fetched redemption against the ledger (one streaming pass over files; memory: the redemption ids).
 * @example const report = await matchRedemptions(fetched, reader, 'USD')
 */
export async function matchRedemptions(
  fetched: FetchedCustomer[],
  ledger: Pick<LedgerReader, 'locations' | 'find'>,
  currency: string,
  o: { now?: number; tickets?: TicketRecord[] } = {},
): Promise<ReconcileReport> {
  const now = o.now ?? Date.now();
  const ticketsOf = (id: string): ReconcileTicket[] =>
    (o.tickets ?? [])
      .filter((t) => t.transactions.includes(id))
      .map((t) => ({
        sourceTicketId: t.sourceTicketId,
        phase: t.phase,
        resolutionType: t.resolutionType,
        errorMessage: t.errorMessage,
      }));
  const wanted = new Set<string>();
  for (const f of fetched) for (const r of f.redemptions) wanted.add(String(r.transactionId));
  const acked = new Map<string, NonNullable<RedemptionMatch['acked']>>();
  const failed = new Map<string, NonNullable<RedemptionMatch['failed']>>();
  const read = await ledger.find(wanted, (hit) => {
    if (hit.status === 'acked') {
      if (!acked.has(hit.transactionId)) {
        acked.set(hit.transactionId, {
          requestId: hit.requestId,
          batchId: hit.batchId,
          ts: hit.ts,
          runId: hit.runId,
          ledger: hit.ledger,
        });
      }
    } else {
      failed.set(hit.transactionId, {
        error: hit.error ?? null,
        batchId: hit.batchId,
        ts: hit.ts,
        ledger: hit.ledger,
      });
    }
  });

  const all = new RewardSums();
  const customers = fetched.map((f): CustomerReconciliation => {
    const sums = new RewardSums();
    const items = f.redemptions.map((r): RedemptionMatch => {
      const id = String(r.transactionId);
      const hit = acked.get(id) ?? null;
      const cur = currencyOf(r, currency);
      const reward = rewardStateOf(r, now);
      sums.add(
        cur,
        typeof r.amount === 'number' ? r.amount : Number(r.amount) || 0,
        hit !== null,
        reward === 'paid',
      );
      return {
        redemptionId: String(r.redemptionId),
        transactionId: id,
        adId: String(r.adId),
        merchantName: f.ads[r.adId]?.merchantName ?? null,
        amount: r.amount,
        currency: cur,
        redemptionDate: r.redemptionDate,
        rewardSettlementRunDate:
          typeof r.rewardSettlementRunDate === 'string' ? r.rewardSettlementRunDate : null,
        reward,
        matched: hit !== null,
        acked: hit,
        failed: hit === null ? (failed.get(id) ?? null) : null,
        tickets: ticketsOf(id),
      };
    });
    all.merge(sums);
    const matched = items.filter((i) => i.matched).length;
    return {
      sourceCustomerId: f.sourceCustomerId,
      requestId: f.requestId,
      redemptions: items.length,
      matched,
      unmatched: items.length - matched,
      paid: items.filter((i) => i.reward === 'paid').length,
      pending: items.filter((i) => i.reward === 'pending').length,
      rewards: sums.toJSON(),
      items,
      ...(f.error ? { error: f.error } : {}),
    };
  });
  const sum = (pick: (c: CustomerReconciliation) => number) => customers.reduce((n, c) => n + pick(c), 0);
  return {
    ledgers: ledger.locations,
    ledgerLines: read.lines,
    ledgerBadLines: read.bad,
    customers,
    totals: {
      customers: customers.length,
      customersFailed: customers.filter((c) => c.error).length,
      redemptions: sum((c) => c.redemptions),
      matched: sum((c) => c.matched),
      unmatched: sum((c) => c.unmatched),
      paid: sum((c) => c.paid),
      pending: sum((c) => c.pending),
      rewards: all.toJSON(),
    },
  };
}
