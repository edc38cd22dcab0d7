// The simulator's memory: counters, deliveries, per-batch attempts, enrolments and earned redemptions.
import type { Redemption, TransactionNotification } from '../client/models.ts';
import type { Catalog } from './catalog.ts';
import { rewardFor } from './catalog.ts';
import { fnv1a } from './rng.ts';

/**
 * Counters of one simulator since start (or the last reset).
 * @example sim.stats().faults.failFirst === 2 * distinctBatches // with failFirst: 2
 */
export interface SimulatorStats {
  /** preflight: `HEAD /v2/data/transactions` connection checks (svc-ingest send), outside total, byPath, byStatus. */
  requests: {
    total: number;
    byPath: Record<string, number>;
    byStatus: Record<string, number>;
    preflight: number;
  };
  faults: {
    fail500: number;
    failFirst: number;
    reset: number;
    hang: number;
    rate429: number;
    poison: number;
  };
  transactions: { accepted: number; distinct: number; duplicates: number }; // accepted = tx count over all 200 batches; duplicates = accepted - distinct
  largestBatch: number;
  maxInFlight: number; // most requests in flight at once (all paths)
  inFlight: number;
}

/** A transaction id earns a redemption when its FNV-1a 32-bit hash is 0 mod 10 (about one in ten). */
export function earnsRedemption(transactionId: string): boolean {
  return fnv1a(transactionId) % 10 === 0;
}

export interface SimState {
  requests: { total: number; byPath: Map<string, number>; byStatus: Map<string, number>; preflight: number };
  faults: SimulatorStats['faults'];
  accepted: number;
  largestBatch: number;
  maxInFlight: number;
  inFlight: number;
  /** Every transactionId accepted at least once (one hash operation a transaction: add, then compare sizes). */
  delivered: Set<string>;
  /** Deliveries beyond the first, for the ids accepted more than once. */
  redelivered: Map<string, number>;
  kept: TransactionNotification[];
  /** Attempts per batch identity (fault draws are keyed by identity + attempt number). */
  attempts: Map<string, number>;
  /** Attempts per batch identity that reached the failFirst stage. */
  failFirstSeen: Map<string, number>;
  /** Customers enrolled by their first accepted transaction. */
  enrolled: Set<string>;
  earned: Map<string, Redemption[]>;
  /** Requests whose body had no batch identity (they key their fault draws by this counter). */
  anonymous: number;
}

export function createState(): SimState {
  return {
    requests: { total: 0, byPath: new Map(), byStatus: new Map(), preflight: 0 },
    faults: { fail500: 0, failFirst: 0, reset: 0, hang: 0, rate429: 0, poison: 0 },
    accepted: 0,
    largestBatch: 0,
    maxInFlight: 0,
    inFlight: 0,
    delivered: new Set(),
    redelivered: new Map(),
    kept: [],
    attempts: new Map(),
    failFirstSeen: new Map(),
    enrolled: new Set(),
    earned: new Map(),
    anonymous: 0,
  };
}

/** Forget everything but the in-flight gauge (requests still open stay counted until they end). */
export function clearState(s: SimState): void {
  const fresh = createState();
  fresh.inFlight = s.inFlight;
  fresh.maxInFlight = s.inFlight;
  Object.assign(s, fresh);
}

export function bump(map: Map<string, number>, key: string): number {
  const n = (map.get(key) ?? 0) + 1;
  map.set(key, n);
  return n;
}

export function snapshot(s: SimState): SimulatorStats {
  return {
    requests: {
      total: s.requests.total,
      byPath: Object.fromEntries(s.requests.byPath),
      byStatus: Object.fromEntries(s.requests.byStatus),
      preflight: s.requests.preflight,
    },
    faults: { ...s.faults },
    transactions: {
      accepted: s.accepted,
      distinct: s.delivered.size,
      duplicates: s.accepted - s.delivered.size,
    },
    largestBatch: s.largestBatch,
    maxInFlight: s.maxInFlight,
    inFlight: s.inFlight,
  };
}

/**
 * How many times each transactionId was accepted, in first-acceptance order.
 * @example for (const [transactionId, count] of deliveryCounts(state)) …
 */
export function* deliveryCounts(s: SimState): Generator<[string, number]> {
  for (const id of s.delivered) yield [id, 1 + (s.redelivered.get(id) ?? 0)];
}

/** Is this customer known (seeded, or enrolled by a transaction)? */
export function knownCustomer(s: SimState, catalog: Catalog, id: string): boolean {
  return catalog.customers.has(id) || s.enrolled.has(id);
}

/** Record an accepted batch: deliveries, kept copies, enrolments and earned redemptions. */
export function recordAccepted(
  s: SimState,
  catalog: Catalog,
  txs: TransactionNotification[],
  keepMax: number,
): void {
  s.accepted += txs.length;
  const delivered = s.delivered;
  for (let i = 0; i < txs.length; i++) {
    const tx = txs[i] as TransactionNotification;
    const id = tx.transactionId;
    const before = delivered.size;
    delivered.add(id);
    if (delivered.size === before) {
      s.redelivered.set(id, (s.redelivered.get(id) ?? 0) + 1);
      continue;
    }
    if (s.kept.length < keepMax) s.kept.push(tx);
    const customer = tx.sourceCustomerId;
    if (!catalog.customers.has(customer)) s.enrolled.add(customer);
    if (earnsRedemption(id) && catalog.ongoingAdIds.length > 0 && !catalog.seededTransactionIds.has(id))
      earn(s, catalog, tx);
  }
}

function earn(s: SimState, catalog: Catalog, tx: TransactionNotification): void {
  const h = fnv1a(tx.transactionId);
  const adId = catalog.ongoingAdIds[Math.floor(h / 10) % catalog.ongoingAdIds.length] as string;
  const ad = catalog.ads.get(adId)?.ad;
  if (!ad) return;
  const minor = Number(tx.postedAmount ?? tx.authorizationAmount ?? '0');
  const spend = minor / 100;
  // Approved on receipt, paid by the settlement run a week after the day it arrived: pending until then.
  const settlement = Math.floor(Date.now() / 86_400_000) * 86_400_000 + 7 * 86_400_000;
  const redemption: Redemption = {
    redemptionId: `rdm-${h.toString(16).padStart(8, '0')}`,
    adId,
    amount: rewardFor(ad, spend),
    redemptionDate: tx.transactionPostingTimestamp,
    sourceCustomerId: tx.sourceCustomerId,
    sourceAccountId: tx.sourceAccountId,
    redeemingTransactionAmount: spend,
    transactionId: tx.transactionId,
    rewardSettlementRunDate: new Date(settlement).toISOString(),
  };
  const list = s.earned.get(tx.sourceCustomerId);
  if (list) list.push(redemption);
  else s.earned.set(tx.sourceCustomerId, [redemption]);
}
