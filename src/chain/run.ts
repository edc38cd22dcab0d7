// One run of the chain over prepared chunks, its stages assembled: dedupe (a fresh within-run set) → batch →
// sink (the service, or a dry run's when no dispatch settings are given) → recorder, with the rejecter on the side.
// send (send-run.ts) runs it over its inputs; a backfill worker runs it over one partition with its own counters.
import { createBatcher } from '../batch/batcher.ts';
import { createDedupe } from '../dedupe/dedupe.ts';
import type { LedgerStore } from '../ledger/store.ts';
import type { Logger } from '../log.ts';
import type { CodeTally } from '../model/code-lists.ts';
import type { PreparedChunks } from '../prepare/choose.ts';
import type { Counters } from '../record/counters.ts';
import { createRecorder } from '../record/recorder.ts';
import { createRejecter, type RejectCaps } from '../record/rejecter.ts';
import type { RejectsWriter } from '../record/rejects.ts';
import { createDispatcher } from '../send/dispatcher.ts';
import { createDryRunSink } from '../send/dry-run.ts';
import type { Sink } from '../send/sink.ts';
import { createSpillingFingerprintSet } from '../sorted-runs/fingerprint-set.ts';
import { type ChainEnd, driveChain } from './drive.ts';
import { ownIdsNotice, relaxedNotice } from './notices.ts';
import type { BatchConfig, DispatchSettings } from './options.ts';

export interface ChainRun {
  chunks: PreparedChunks;
  /** Ready (admit([]) done: see ledger/ready.ts). */
  store: LedgerStore;
  runId: string;
  /** Batch ids are `<batchPrefix>-<n>` (default the run id; a backfill worker adds the partition). */
  batchPrefix?: string;
  /** The counters this run moves (a partition's own, or the whole send's). */
  counters: Counters;
  rejects: RejectsWriter;
  caps: RejectCaps;
  batching: BatchConfig;
  /** The service sink's settings; absent: a dry run (nothing is sent or recorded). */
  dispatch?: DispatchSettings;
  /** The mapping profile's name, for the relaxed-field notice. */
  profileName: string;
  /** Id fields the profile declares the bank's own numeric ids: said at the start of every run. */
  ownIds?: readonly string[];
  logger: Logger;
  /** Aborted (reason: the signal's name) when the run must stop. */
  signal?: AbortSignal;
  /** Counts the code values of the records sent (a dry run: batched), for the summary. */
  codes?: CodeTally;
  /** Told the sink once it exists (the progress line reads its in-flight count). */
  onSink?: (sink: Sink) => void;
  /** A broken input ends the run accounted for, in `inputError` (drive.ts); else it is thrown. */
  accountBrokenInput?: boolean;
}

/** How the run ended, and why it stopped reading when a reject cap did it. */
export type ChainRunEnd = ChainEnd & { tooManyRejects: string | null };

export async function runChain(r: ChainRun): Promise<ChainRunEnd> {
  const { counters: c, logger } = r;
  const stopRequested = () => (r.signal?.aborted ? String(r.signal.reason) : null);
  const seen = createSpillingFingerprintSet(); // this run's ids: flat memory, spilled to a temp folder
  if (r.ownIds !== undefined && r.ownIds.length > 0) ownIdsNotice(logger, r.profileName, r.ownIds);
  try {
    const rejecter = createRejecter(r.rejects, c, r.runId, r.caps);
    const recorder = createRecorder({
      store: r.store,
      runId: r.runId,
      counters: c,
      logger,
      stopRequested,
      codes: r.codes,
    });
    const sink = r.dispatch ? createDispatcher({ ...r.dispatch, ...recorder }) : createDryRunSink(c, r.codes);
    r.onSink?.(sink);
    r.signal?.addEventListener('abort', () => sink.stop(), { once: true });
    const size = r.batching.batchSize;
    const batcher = createBatcher(size, r.batchPrefix ?? r.runId);
    const onSkipped = (n: number) => {
      c.skipped += n;
    };
    // Groups are admitted ahead of batching (drive.ts): one closes where the batch under way would be full once every
    // group under admission is batched, so a group holds about `admitBatches` batches (the store's: 1 for the file,
    // several for PostgreSQL, where each group is a round trip) and batches form as if each record were alone.
    const perGroup = size * Math.max(1, r.store.admitBatches ?? 1);
    const room = () => perGroup - (dedupe.expected % size);
    const dedupe: ReturnType<typeof createDedupe> = createDedupe({ store: r.store, seen, room, onSkipped });
    const onPass = relaxedNotice(logger, r.profileName);
    const end = await driveChain(r.chunks, {
      counters: c,
      rejecter,
      dedupe,
      batcher,
      sink,
      logger,
      onPass,
      stopRequested,
      accountBrokenInput: r.accountBrokenInput,
    });
    return { ...end, tooManyRejects: rejecter.tooMany };
  } finally {
    seen.close?.();
  }
}
