// Poison isolation: a batch that keeps failing while the service is otherwise healthy is halved until the refused
// record fails alone and the rest is acknowledged. Decides and recurses; sending (with retries) and recording are
// the dispatcher's, handed in as `attempt` and `acked`.
import type { BatchItem } from '../batch/batcher.ts';
import type { Config } from '../config/index.ts';
import type { FailureClass } from './classify.ts';

/** How one send of some items ended (after its retries). */
export interface AttemptResult {
  ok: boolean;
  requestId: string | null;
  clientRequestId: string;
  httpStatus: number | null;
  attempts: number;
  failure?: FailureClass;
}

/** A part (the whole batch or a split piece) that failed for good; recorded once the batch is settled. */
export interface FailedPart {
  batchId: string;
  items: BatchItem[];
  r: AttemptResult;
  /** More than one record, and not cut short by a stop: halving it could still isolate a bad record. */
  splittable: boolean;
}

/** One top-level batch being delivered: when it started, how many of its parts were acked, which failed. */
export interface Delivery {
  startedAt: number;
  acked: number;
  failed: FailedPart[];
}

export interface BisectDeps {
  /** Sends the items with up to `retries` retries. */
  attempt(batchId: string, items: BatchItem[], retries: number): Promise<AttemptResult>;
  /** Records an acknowledged part (inside the batch's slot). */
  acked(batchId: string, items: BatchItem[], r: AttemptResult): Promise<void>;
  /** A failure no batch can fix (401/403, a redirect): the run stops. */
  fatal(f: FailureClass): void;
  /** The run is stopping. */
  stopped(): boolean;
  /** When the last part of any batch was acknowledged (0 = never). */
  lastAckAt(): number;
  /** splitRetries: the retries of each part of a split batch. */
  settings: Pick<Config['send'], 'splitRetries'>;
  onSplit?(info: { batchId: string; size: number; failure: FailureClass }): void;
}

/**
 * Could halving these items still isolate a bad record? Not for one record, a stop, an abort, a fatal failure,
 * or a failure to connect (that is an outage).
 */
export function canSplit(size: number, f: FailureClass, stopped: boolean): boolean {
  return size > 1 && !stopped && !f.aborted && !f.fatal && !f.connection;
}

/**
 * Does the failure look specific to this batch? The service refused it (a 4xx other than 429), or it
 * acknowledged other batches (or other parts of this one) since this batch was taken.
 */
export function looksSpecific(f: FailureClass, lastAckAt: number, startedAt: number): boolean {
  const refused = f.httpStatus !== null && f.httpStatus >= 400 && f.httpStatus < 500 && f.httpStatus !== 429;
  return refused || lastAckAt > startedAt;
}

export interface Bisector {
  /** Send items; on final failure, split in halves while the failure looks specific to them. */
  deliver(batchId: string, items: BatchItem[], retries: number, d: Delivery): Promise<void>;
  /**
   * A batch that failed whole while nothing else was acknowledged gives no sign whether the service is down or
   * the batch holds a record it refuses: split it once, one attempt per half. An ack of either half shows the
   * service is up, and a half that failed is then split as usual; if neither is acked it is most likely an
   * outage and the batch stays failed as it was. At most two extra requests.
   */
  explore(whole: FailedPart, d: Delivery): Promise<void>;
}

export function createBisector(deps: BisectDeps): Bisector {
  async function deliver(batchId: string, items: BatchItem[], retries: number, d: Delivery): Promise<void> {
    const r = await deps.attempt(batchId, items, retries);
    if (r.ok) {
      d.acked++;
      await deps.acked(batchId, items, r);
      return;
    }
    const failure = r.failure as FailureClass;
    // 401/403, a redirect: no batch can succeed; the run stops, nothing is split.
    if (failure.fatal) deps.fatal(failure);
    const splittable = canSplit(items.length, failure, deps.stopped());
    // During an outage nothing is split, and a failure to connect (refused, DNS, TLS) is always an outage.
    if (splittable && looksSpecific(failure, deps.lastAckAt(), d.startedAt)) {
      await split({ batchId, items, r, splittable }, deps.settings.splitRetries, d);
      return;
    }
    d.failed.push({ batchId, items, r, splittable });
  }

  async function split(part: FailedPart, retries: number, d: Delivery): Promise<void> {
    deps.onSplit?.({
      batchId: part.batchId,
      size: part.items.length,
      failure: part.r.failure as FailureClass,
    });
    const mid = Math.ceil(part.items.length / 2);
    await deliver(`${part.batchId}.1`, part.items.slice(0, mid), retries, d);
    await deliver(`${part.batchId}.2`, part.items.slice(mid), retries, d);
  }

  async function explore(whole: FailedPart, d: Delivery): Promise<void> {
    const explored: Delivery = { startedAt: d.startedAt, acked: 0, failed: [] };
    await split(whole, 0, explored);
    d.acked += explored.acked;
    if (explored.acked === 0) return;
    d.failed = [];
    for (const part of explored.failed) {
      if (part.splittable && !deps.stopped()) await split(part, deps.settings.splitRetries, d);
      else d.failed.push(part);
    }
  }

  return { deliver, explore };
}
