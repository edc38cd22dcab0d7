// Chooses where one input is prepared: on a pool of worker threads (a large file) or inline.

import { statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import type { Config } from '../config/index.ts';
import type { SilentErrors } from '../map/silent-errors.ts';
import type { CompiledProfile } from '../map/types.ts';
import {
  BUSY_SLICE_BYTES,
  DEFAULT_MAX_LINE_BYTES,
  type InputSpec,
  type ReadOptions,
  readOnce,
} from '../read/open.ts';
import { type PoolChoice, prepareInPool } from './pool.ts';
import { type PreparedChunks, prepareInput } from './prepare.ts';

export type { PoolChoice } from './pool.ts';
export type { PreparedChunks, PreparedItem } from './prepare.ts';

/** Files at least this big are prepared on worker threads when the pool is automatic (starting it costs ~0.1 s). */
export const WORKER_MIN_BYTES = 8 * 1024 * 1024;
/**
 * Automatic pool: sends at this concurrency or more use it, on a machine with more than SEND_POOL_MIN_CORES cores;
 * a dry run always does. Measured (test/bench, 50 ms latency): at 8 in flight the main thread has time to spare,
 * and the pool's ~60 MB a thread (each a V8 isolate) would take a resume against 20M acked ids over its 300 MB
 * budget. `prepare.workers: on` trades so.
 */
export const WORKER_MIN_CONCURRENCY = 16;
/**
 * A send uses the pool only with more cores than this. On 2 cores the worker, the main thread and whatever else
 * runs (the service's simulator in the bench) compete for them: measured at concurrency 32 (test/bench e2e-c32,
 * issue 14), preparing inline costs no more CPU, ~100 MB less memory, and the event loop's p99 delay drops from
 * ~30 ms (stalls up to 280 ms) to ~12 ms.
 */
export const SEND_POOL_MIN_CORES = 3;
/** A send at this concurrency or more hands its reader BUSY_SLICE_BYTES at a time (read/open.ts says why). */
export const BUSY_SEND_CONCURRENCY = 16;

/** The pool as configured (config key `prepare`; threads absent: one per core, at most 4, in a dry run, else 1). */
export type PoolSettings = Pick<Config['prepare'], 'workers' | 'threads' | 'chunkBytes'>;

/**
 * What `prepare.workers: auto` means for a run: the pool for large files in a dry run on SEND_POOL_MIN_CORES cores
 * or more (on 2 cores the worker and the main thread compete; inline costs less CPU and half the memory) or when sending at WORKER_MIN_CONCURRENCY or more on SEND_POOL_MIN_CORES cores or more; worker threads: one per core (at most 4) in a
 * dry run, one for a send (the main thread needs a core of its own for the answers: test/bench e2e-c32 on 2
 * cores: ratio 0.67 with one worker, 0.62 with two, and 80 MB less).
 * @example choosePool(config.prepare, { dryRun: false, concurrency: 4 }) // { use: 'off', threads: 1, chunkBytes: 524288 }
 */
export function choosePool(
  s: PoolSettings,
  run: { dryRun: boolean; concurrency: number },
  cores: number = availableParallelism(),
): PoolChoice {
  const sendPool = run.concurrency >= WORKER_MIN_CONCURRENCY && cores >= SEND_POOL_MIN_CORES;
  // A dry run too: on 2 cores inline measured 1.3–1.4× the rows per CPU-second of the pool at half its memory
  // (docs/performance.md, "Dry run: inline or workers").
  const dryPool = run.dryRun && cores >= SEND_POOL_MIN_CORES;
  const auto = dryPool || sendPool ? 'large' : 'off';
  return {
    use: s.workers === 'auto' ? auto : s.workers,
    threads: s.threads ?? (run.dryRun ? Math.max(1, Math.min(4, availableParallelism())) : 1),
    chunkBytes: s.chunkBytes,
    ...(!run.dryRun && run.concurrency >= BUSY_SEND_CONCURRENCY ? { sliceBytes: BUSY_SLICE_BYTES } : {}),
  };
}

export interface PrepareOptions {
  /** Profile name or path as given (each worker compiles its own copy). */
  mapping: string | undefined;
  delimiter: string | undefined;
  maxLineBytes?: number;
  stdin?: NodeJS.ReadableStream;
  onHeader?: (columns: string[], source: string) => void;
  /** A CSV file's header, when the caller has read it already. */
  columns?: string[];
  /** Worker threads or not (choosePool). */
  pool: PoolChoice;
  /** Told how many input bytes were consumed as they are read (progress). */
  onBytes?: (n: number) => void;
  /** The reader's hook (ReadOptions.tap): an input with one is prepared inline. */
  tap?: ReadOptions['tap'];
}

function useWorkers(spec: InputSpec, pool: PoolChoice, tapped: boolean): boolean {
  // Standard input and pipes are always prepared on the calling thread (flat memory in pipes; read once).
  if (readOnce(spec) || pool.use === 'off' || tapped || spec.dialect !== undefined) return false;
  if (pool.use === 'on') return true;
  try {
    return statSync(spec.path).size >= WORKER_MIN_BYTES;
  } catch {
    return false; // the reader reports the error
  }
}

/**
 * Prepared chunks of one input (read → map → validate), in order, from worker threads or inline.
 * @example for await (const items of prepareChunks(spec, profile, { mapping: undefined, delimiter: ',', pool })) …
 */
export function prepareChunks(
  spec: InputSpec,
  profile: CompiledProfile,
  o: PrepareOptions,
  silent?: SilentErrors,
): PreparedChunks {
  const delimiter = o.delimiter ?? ',';
  const maxLineBytes = o.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  if (useWorkers(spec, o.pool, o.tap !== undefined)) {
    return prepareInPool(spec, {
      mapping: o.mapping,
      delimiter,
      maxLineBytes,
      pool: o.pool,
      columns: o.columns,
      onBytes: o.onBytes,
      ...(silent !== undefined ? { silent: silent.state } : {}),
    });
  }
  return prepareInput(
    spec,
    profile,
    {
      delimiter,
      maxLineBytes,
      stdin: o.stdin,
      onHeader: o.onHeader,
      onBytes: o.onBytes,
      tap: o.tap,
      ...(o.pool.sliceBytes !== undefined ? { sliceBytes: o.pool.sliceBytes } : {}),
    },
    silent,
  );
}
