// POST /v2/data/transactions: fault injection in a fixed order, strict validation, then recording the batch.
import { createHash } from 'node:crypto';
import type { Catalog } from './catalog.ts';
import { type CheckRules, checkTransactionsBody, transactionsOf } from './check-transactions.ts';
import type { Reply } from './http.ts';
import { errorReply, parseJson, unreadableReply, validationReply } from './http.ts';
import type { Faults } from './options.ts';
import { draw } from './rng.ts';
import type { SimState } from './state.ts';
import { bump, recordAccepted } from './state.ts';

/** What to do with a transactions request: answer it, or drop the socket, or never answer. */
export type TransactionsOutcome = Reply | 'reset' | 'hang';

export interface TransactionsDeps {
  seed: number;
  faults: Faults;
  state: SimState;
  catalog: Catalog;
  keepTransactions: number;
  rules: CheckRules;
}

/**
 * Identity of a batch: sha1 of its sorted transactionIds, so a retry of the same batch (in any order) matches.
 * @example batchIdentity(['b', 'a']) === batchIdentity(['a', 'b'])
 */
export function batchIdentity(ids: string[]): string {
  return createHash('sha1').update(ids.sort().join('\n')).digest('base64url');
}

function identityOf(list: unknown[] | undefined): string | undefined {
  if (!list) return undefined;
  const ids: string[] = [];
  for (const tx of list) {
    const id = (tx as { transactionId?: unknown } | null)?.transactionId;
    if (typeof id !== 'string') return undefined;
    ids.push(id);
  }
  return batchIdentity(ids);
}

function serverError(requestId: string, detail: string): Reply {
  return errorReply(500, 'InternalServerError', 'Internal Server Error', requestId, { detail });
}

export function handleTransactions(
  d: TransactionsDeps,
  raw: Buffer | undefined,
  requestId: string,
): TransactionsOutcome {
  const { faults: f, state: s, seed } = d;
  const parsed = parseJson(raw);
  const list = parsed.ok ? transactionsOf(parsed.value) : undefined;
  if (list && list.length > s.largestBatch) s.largestBatch = list.length;
  const identity = identityOf(list);
  // Fault draws are keyed by (batch identity, attempt number): the same run gives the same faults whatever the
  // interleaving of concurrent batches. Bodies without an identity draw from a running counter instead.
  const key = identity ?? `anonymous:${++s.anonymous}`;
  const attempt = identity ? bump(s.attempts, identity) : 1;

  if (f.resetRate > 0 && draw(seed, 'reset', key, attempt) < f.resetRate) {
    s.faults.reset++;
    return 'reset';
  }
  if (f.hangRate > 0 && draw(seed, 'hang', key, attempt) < f.hangRate) {
    s.faults.hang++;
    return 'hang';
  }
  if (f.rate429 > 0 && draw(seed, '429', key, attempt) < f.rate429) {
    s.faults.rate429++;
    return errorReply(429, 'TooManyRequests', 'Too Many Requests', requestId, {
      detail: `rate limit exceeded; retry after ${f.retryAfterS} s`,
      headers: { 'retry-after': String(f.retryAfterS) },
    });
  }

  if (!parsed.ok) return unreadableReply(requestId, 'body is not JSON');
  const check = checkTransactionsBody(parsed.value, d.rules);
  if (check.kind === 'unreadable') return unreadableReply(requestId, check.detail);
  if (check.kind === 'invalid') return validationReply(requestId, check.problems, check.title);

  const txs = check.transactions;
  if (f.poison.size > 0) {
    for (const tx of txs) {
      if (f.poison.has(tx.transactionId)) {
        s.faults.poison++;
        return serverError(requestId, 'the batch could not be processed');
      }
    }
  }
  if (f.failFirst > 0 && identity && bump(s.failFirstSeen, identity) <= f.failFirst) {
    s.faults.failFirst++;
    return serverError(requestId, 'transient failure');
  }
  if (f.failRate > 0 && draw(seed, 'fail', key, attempt) < f.failRate) {
    s.faults.fail500++;
    return serverError(requestId, 'transient failure');
  }
  recordAccepted(s, d.catalog, txs, d.keepTransactions);
  return { status: 200, body: { requestId } };
}
