// `send` as a composition of stages (docs/architecture.md): prepare (read → map → validate) → dedupe (within-run
// duplicates, resume through the ledger store) → batch → sink (the service, or a dry run's) → recorder (ledger,
// counters, logs; rejects). Everything that can refuse to run does so before anything is sent.

import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { columnMissing, logRunStart } from './chain/notices.ts';
import type { SendOptions } from './chain/options.ts';
import { cliIo } from './io.ts';
import { checkStateFile } from './ledger/file/files.ts';
import { openLedgerStore } from './ledger/open.ts';
import { readyStore } from './ledger/ready.ts';
import type { LedgerStore } from './ledger/store.ts';
import { ambiguousTimes } from './map/ambiguous-times.ts';
import { loadProfile } from './map/profile.ts';
import { silentWarnings } from './map/silent-errors.ts';
import { createCodeTally } from './model/code-lists.ts';
import { openInputs } from './prepare/inputs.ts';
import { prepareSource } from './prepare/source.ts';
import { sourceName } from './read/open.ts';
import {
  type Counters,
  newCounters,
  type RunProgress,
  type RunSummary,
  summarize,
} from './record/counters.ts';
import { nullRejectsWriter, openRejectsWriter, type RejectsWriter } from './record/rejects.ts';
import { controlTotals } from './send/control-totals.ts';

export type { SendOptions } from './chain/options.ts';

export interface RunHandle {
  progress(): RunProgress;
  done: Promise<RunSummary>;
}

/** What the progress line reads besides the counters. */
interface Live {
  inFlight: () => number;
  bytes: { read: number; total: number | null };
}

export function startSend(o: SendOptions): RunHandle {
  const c = newCounters();
  const live: Live = { inFlight: () => 0, bytes: { read: 0, total: null } };
  const done = runSend(o, c, live);
  const progress = () => ({
    ...c,
    inFlight: live.inFlight(),
    bytesRead: live.bytes.read,
    bytesTotal: live.bytes.total,
  });
  return { progress, done };
}

async function runSend(o: SendOptions, c: Counters, live: Live): Promise<RunSummary> {
  const started = performance.now();
  const runId = randomBytes(4).toString('hex');
  const log = o.logger;
  const stopRequested = () => (o.signal?.aborted ? String(o.signal.reason) : null);
  const profile = await loadProfile(o.mapping);
  const inputs = await openInputs(o.inputs, profile, { ...o, warn: columnMissing(log) });
  // Declared control totals: files are checked now, before anything is sent; streams as they end.
  const totals = await controlTotals(o.control ?? {}, profile);
  await totals?.precheck(inputs.specs, { delimiter: inputs.delimiter });
  const source = await prepareSource(inputs, profile, { ...o, tap: totals?.tap });
  live.bytes = source.bytes;
  // The rejects file this run writes, resolved (a dry run writes one only when it was given).
  const rejectsOut = !o.dryRun || o.rejectsExplicit ? resolve(o.rejectsFile) : null;
  let store: LedgerStore | null = null;
  let rejects: RejectsWriter = nullRejectsWriter();
  try {
    // The rejects file is checked before the ledger is locked: a bad path makes no lock or owner file.
    if (rejectsOut) await checkStateFile(o.rejectsFile, 'rejects file');
    store = await openLedgerStore(o.ledger, {
      mode: o.dryRun ? 'read' : 'write',
      resume: o.resume,
      runId,
      logger: log,
      signal: o.signal,
      destination: o.destination,
      newDestination: o.newDestination,
      inFlight: () => live.inFlight(),
    });
    logRunStart(log, runId, store.location, rejectsOut, o.dryRun, o.ledger.from);
    // Before any record is read (standard input would be consumed): does the service answer at all? A signal
    // while it waits (up to --timeout) ends the check at once: the run stops interrupted, nothing read.
    if (!o.dryRun)
      await o.preflight?.(o.signal).catch((err: unknown) => {
        if (!stopRequested()) throw err;
      });
    const interrupted = stopRequested() ?? (await readyStore(store, stopRequested));
    let end: import('./chain/run.ts').ChainRunEnd = { interrupted, outage: false, tooManyRejects: null };
    const codes = createCodeTally();
    if (!interrupted) {
      const sources = inputs.specs.map(sourceName);
      if (rejectsOut) rejects = await openRejectsWriter(o.rejectsFile, { caps: o.caps, sources });
      // The chain's modules are loaded once the ledger is ours: a run refused before (a locked ledger, the service
      // not answering) does not load them.
      const [{ runChainSettled, settlePollMs }, { gatedOnClaims }] = await Promise.all([
        import('./chain/settle.ts'),
        import('./chain/claims.ts'),
      ]);
      // The run's modules are loaded and the service answered: from here its heap is held (src/runtime/heap-growth.ts).
      cliIo().holdHeap?.();
      end = await runChainSettled(
        {
          chunks: source.chunks,
          store,
          runId,
          counters: c,
          rejects,
          caps: o.caps,
          batching: o.batching,
          dispatch: o.dryRun ? undefined : gatedOnClaims(o.dispatch, store),
          profileName: profile.name,
          ownIds: profile.ownIds,
          logger: log,
          signal: o.signal,
          codes,
          onSink: (sink) => {
            live.inFlight = () => sink.inFlight;
          },
          accountBrokenInput: true,
        },
        { pollMs: settlePollMs(o.ledger) },
      );
    }
    // The warnings of a probably wrong profile, once, at the end (mapping check prints the same).
    const state = source.silent.end();
    const warnings = interrupted ? [] : silentWarnings(profile, state);
    const ambiguous = ambiguousTimes(profile, state);
    for (const w of warnings) log.warn({ event: 'mapping.warning' }, `svc-ingest: warning: ${w}`);
    const whole = !end.interrupted && !end.outage && !end.tooManyRejects && !end.inputError;
    const totalsError = whole ? totals?.finish() : undefined;
    return summarize(c, {
      ...end,
      ...(totalsError ? { inputError: totalsError } : {}),
      ...(warnings.length > 0 ? { mappingWarnings: warnings.length } : {}),
      ...(ambiguous ? { ambiguousTimes: ambiguous } : {}),
      codes: codes.counts(),
      durationMs: Math.round(performance.now() - started),
      dryRun: o.dryRun,
      runId,
      ledger: o.dryRun ? null : store.location,
      rejects: rejectsOut,
      ledgerBadLines: store.badLines,
      emptyInputs: source.emptyInputs,
      ...(profile.ownIds.length > 0 ? { ownNumericIds: [...profile.ownIds] } : {}),
    });
  } finally {
    await rejects.close().catch((err: Error) => log.error({ event: 'rejects.close' }, err.message));
    await store?.close();
  }
}
