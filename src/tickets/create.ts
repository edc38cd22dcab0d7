// `tickets create`: the create is stored first (submitted), then sent until the service acknowledges it (2xx):
// the interface says a partner that gets no answer resubmits until one arrives, and sourceTicketId makes a
// resubmission the same ticket. A 4xx other than 408/429 is an answer too (the create is wrong): not resent.
import { SvcHttpError, SvcRedirectError } from '../client/errors.ts';
import type { CreateTicketRequest } from '../client/models.ts';
import { SvcIngestError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { retried } from '../send/retried.ts';
import type { RetryTiming } from '../send/retry-policy.ts';
import type { TicketStore } from './store-types.ts';

/** The part of the client a create uses. */
export interface TicketSender {
  createTicket(req: CreateTicketRequest): Promise<{ requestId?: string; httpStatus: number }>;
}

/** The waits (before the second attempt, doubled each time, capped: the table's send.retry* by retryTimingOf). */
export interface ResubmitOptions extends RetryTiming {
  /** Attempts at most (the first included). */
  maxAttempts: number;
  logger: Logger;
}

/**
 * The outcome of a create: acknowledged (with the attempts it took), or not after every attempt.
 * @example { accepted: true, httpStatus: 202, requestId: '…', attempts: 2 }
 */
export type CreateOutcome =
  | { accepted: true; httpStatus: number; requestId: string | null; attempts: number }
  | { accepted: false; attempts: number; error: SvcIngestError };

/** An answer that says the create itself is wrong (resending it changes nothing). */
function isFinalRefusal(err: unknown): boolean {
  if (!(err instanceof SvcHttpError)) return false;
  const s = err.status;
  return s >= 400 && s < 500 && s !== 408 && s !== 429;
}

/**
 * Stores the create, then sends it until it is acknowledged; the acknowledgement is stored before this resolves.
 * @example const out = await submitTicket(client, store, req, ['700123'], { maxAttempts: 8, baseDelayMs: 500, maxDelayMs: 30000, logger })
 */
export async function submitTicket(
  client: TicketSender,
  store: TicketStore,
  req: CreateTicketRequest,
  transactions: string[],
  o: ResubmitOptions,
): Promise<CreateOutcome> {
  await store.append({
    kind: 'submitted',
    sourceTicketId: req.sourceTicketId,
    ts: new Date().toISOString(),
    request: req,
    transactions,
  });
  let attempts = 0;
  try {
    const res = await retried(
      (attempt) => {
        attempts = attempt;
        return client.createTicket(req);
      },
      {
        // The policy: resubmitted until answered, up to maxAttempts, waits without jitter; a wrong create or refused
        // credentials (a 4xx but 408 and 429: isFinalRefusal) and a redirect (SvcRedirectError) are answers
        // (thrown), as is anything that is not the service's error.
        retries: o.maxAttempts - 1,
        baseDelayMs: o.baseDelayMs,
        maxDelayMs: o.maxDelayMs,
        jitter: false,
        retryable: (err) =>
          err instanceof SvcIngestError && !isFinalRefusal(err) && !(err instanceof SvcRedirectError),
        onRetry: (err, attempt, delayMs) => resubmitting(o.logger, req, attempt, err as Error, delayMs),
      },
    );
    await store.append({
      kind: 'accepted',
      sourceTicketId: req.sourceTicketId,
      ts: new Date().toISOString(),
      httpStatus: res.httpStatus,
      requestId: res.requestId ?? null,
      attempts,
    });
    return { accepted: true, httpStatus: res.httpStatus, requestId: res.requestId ?? null, attempts };
  } catch (err) {
    if (!(err instanceof SvcIngestError) || isFinalRefusal(err)) throw err;
    if (err instanceof SvcRedirectError) throw err;
    // Every attempt spent: the last one is logged as the others were.
    resubmitting(o.logger, req, attempts, err);
    return { accepted: false, attempts: o.maxAttempts, error: err };
  }
}

/** The log line of a failed attempt: with the wait before the next one, when there is one. */
function resubmitting(
  logger: Logger,
  req: CreateTicketRequest,
  attempt: number,
  err: Error,
  delayMs?: number,
): void {
  const wait = delayMs === undefined ? {} : { delayMs };
  logger.warn(
    { event: 'ticket.resubmit', sourceTicketId: req.sourceTicketId, attempt, ...wait, error: err.message },
    'no acknowledgement for the ticket: resubmitting (same sourceTicketId)',
  );
}
