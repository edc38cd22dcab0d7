// `svc-ingest backfill work`: one worker of a backfill (src/backfill/work.ts) with the client, signals, progress,
// metrics, the summary and the exit status wired as `send` wires them.

import type { WorkSummary } from '../backfill/work.ts';
import { SvcIngestError } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { RunMetrics } from '../metrics/run-metrics.ts';
import { rejectsFileOf } from './common.ts';
import {
  type DeliveryFlags,
  deliveryFlags,
  dispatchSettings,
  exitStatusOfRun,
  followRun,
  healthCheck,
  ledgerDestination,
  runExitStatus,
  stopOnSignals,
  withRunMetrics,
} from './delivery.ts';
import { type PgLedgerContext, type PgLedgerOptions, pgLedgerContext } from './pg-ledger.ts';

export interface WorkCliOptions extends PgLedgerOptions, DeliveryFlags {
  workerId?: string;
  retryFailed?: boolean;
  allowRejects?: boolean;
}

/** A worker id names this process in the ledger and in `backfill status`: printable, at most 200 characters. */
function checkWorkerId(id: string | undefined): string | undefined {
  if (id === undefined) return undefined;
  if (!/^[\x21-\x7e][\x20-\x7e]{0,199}$/.test(id))
    throw new SvcIngestError(
      'USAGE_INVALID',
      '--worker-id: expected 1..200 printable ASCII characters, not starting with a space',
      { field: '--worker-id' },
    );
  return id;
}

/** The readable summary of one worker. */
export function formatWorkSummary(s: WorkSummary): string {
  const p = s.partitions;
  const lines = [
    `worker ${s.workerId}: ${p.done} partition(s) done` +
      (p.takenOver > 0 ? ` (${p.takenOver} taken over from a worker whose lease ran out)` : '') +
      (p.released > 0 ? `, ${p.released} given back unfinished` : '') +
      (p.lost > 0 ? `, ${p.lost} taken by another worker while this one's lease had run out` : ''),
    `read ${s.read}, valid ${s.valid}, rejected ${s.rejected}, skipped ${s.skipped}, sent ${s.sent}, failed ${s.failed} ` +
      `(${s.batches} batches, ${s.failedBatches} failed, ${s.retries} retries) in ${(s.durationMs / 1000).toFixed(1)} s`,
    `ledger:  ${s.ledger}`,
  ];
  if (s.rejects && s.rejected > 0) lines.push(`rejects: ${s.rejects}`);
  if (s.interrupted)
    lines.push(
      `interrupted by ${s.interrupted}: its partition is pending again; start backfill work to go on`,
    );
  else if (s.outage)
    lines.push('the service looked down; the partition is pending again. Start backfill work later to go on');
  else if (s.failed > 0)
    lines.push(
      `${s.failed} ${s.failed === 1 ? 'record' : 'records'} failed after retries; backfill work --retry-failed reads their partitions again and resends them`,
    );
  return `${lines.join('\n')}\n`;
}

/** Run one worker; resolves with its exit status. */
export async function runWorkCommand(opts: WorkCliOptions): Promise<number> {
  const ctx = pgLedgerContext(opts, 'backfill work', deliveryFlags(opts));
  const workerId = checkWorkerId(opts.workerId);
  return withRunMetrics(ctx.config.metrics, ctx.logger, (metrics) =>
    workAndReport(ctx, opts, workerId, ctx.logger, metrics),
  );
}

async function workAndReport(
  ctx: PgLedgerContext,
  opts: WorkCliOptions,
  workerId: string | undefined,
  logger: Logger,
  metrics: RunMetrics | null,
): Promise<number> {
  const [{ startWork }, { createClient }] = await Promise.all([
    import('../backfill/work.ts'),
    import('../client/client.ts'),
  ]);
  const config = ctx.config;
  const client = createClient(config, { logger, connections: config.send.concurrency });
  let post: import('../send/attempt.ts').PostTransactions = (txs, o) => client.postTransactionsJson(txs, o);
  if (metrics) post = metrics.observePost(post);
  const stop = stopOnSignals(false, logger);
  const work = startWork({
    ledger: ctx.ledger,
    workerId,
    batching: config.send,
    dispatch: dispatchSettings(config, post),
    preflight: healthCheck(config, logger, (signal) => client.checkService(signal)),
    rejectsFile: rejectsFileOf(config),
    caps: config.send,
    resume: true,
    retryFailed: Boolean(opts.retryFailed),
    ...ledgerDestination(config, opts),
    logger,
    signal: stop.signal,
  });
  const summary = await followRun(work, {
    progress: opts.progress,
    json: opts.json,
    config,
    logger,
    metrics,
    text: formatWorkSummary,
    exitStatus: (sum) => runExitStatus(sum, true, Boolean(opts.allowRejects)),
    after: async () => {
      await client.close();
      stop.off();
    },
  });
  return exitStatusOfRun(summary, { allowEmpty: true, allowRejects: Boolean(opts.allowRejects), logger });
}
