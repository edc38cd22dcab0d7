// Chooses where one input is prepared: on a pool of worker threads (a large file) or inline.
import { statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import type { CompiledProfile } from '../map/types.ts';
import { DEFAULT_MAX_LINE_BYTES, type InputSpec } from '../read/open.ts';
import { prepareInPool } from './pool.ts';
import { type PreparedChunks, prepareInput } from './prepare.ts';

export type { PreparedChunks, PreparedItem } from './prepare.ts';

/** Files at least this big are prepared on worker threads (starting them costs ~0.1 s). */
export const WORKER_MIN_BYTES = 8 * 1024 * 1024;
/**
 * Sends at this concurrency or more use the pool; a dry run always does. Measured (test/bench, 2 cores, 50 ms
 * latency): at 32 in flight the main thread needs all its time for the answers; at 8 it has time to spare,
 * and the pool's ~60 MB a thread (each a V8 isolate) would take a resume against 20M acked ids over its
 * 300 MB budget. SVC_PREPARE_WORKER=on trades so.
 */
export const WORKER_MIN_CONCURRENCY = 16;

export interface PrepareOptions {
  /** Profile name or path as given (each worker compiles its own copy). */
  mapping: string | undefined;
  delimiter: string | undefined;
  maxLineBytes?: number;
  stdin?: NodeJS.ReadableStream;
  onHeader?: (columns: string[], source: string) => void;
  /** A CSV file's header, when the caller has read it already. */
  columns?: string[];
  /** A dry run: nothing else for the main thread to do, so parsing in parallel always pays. */
  dryRun?: boolean;
  /** Batches in flight: below WORKER_MIN_CONCURRENCY the main thread has time to spare. */
  concurrency?: number;
  /** Told how many input bytes were consumed as they are read (progress). */
  onBytes?: (n: number) => void;
}

/**
 * 'on' | 'off' | 'auto' from env SVC_PREPARE_WORKER (default auto: files of WORKER_MIN_BYTES or more, in a
 * dry run or sent at WORKER_MIN_CONCURRENCY or more).
 * Standard input is always prepared on the calling thread (flat memory in pipes).
 */
function workerMode(): 'on' | 'off' | 'auto' {
  const v = process.env.SVC_PREPARE_WORKER;
  return v === 'on' || v === 'off' ? v : 'auto';
}

/**
 * Worker threads: env SVC_PREPARE_THREADS, else for a dry run one per core (at most 4), for a send one: the
 * main thread needs a core of its own for the answers (test/bench e2e-c32 on 2 cores: ratio 0.67 with one
 * worker, 0.62 with two, and 80 MB less).
 */
export function prepareThreads(dryRun: boolean): number {
  const n = Number(process.env.SVC_PREPARE_THREADS);
  if (Number.isInteger(n) && n >= 1 && n <= 64) return n;
  return dryRun ? Math.max(1, Math.min(4, availableParallelism())) : 1;
}

function useWorkers(spec: InputSpec, o: PrepareOptions): boolean {
  if (spec.path === '-') return false;
  const mode = workerMode();
  if (mode !== 'auto') return mode === 'on';
  if (!o.dryRun && (o.concurrency ?? 0) < WORKER_MIN_CONCURRENCY) return false;
  try {
    return statSync(spec.path).size >= WORKER_MIN_BYTES;
  } catch {
    return false; // the reader reports the error
  }
}

/**
 * Prepared chunks of one input (read → map → validate), in order, from worker threads or inline.
 * @example for await (const items of prepareChunks(spec, profile, { mapping: undefined, delimiter: ',' })) …
 */
export function prepareChunks(spec: InputSpec, profile: CompiledProfile, o: PrepareOptions): PreparedChunks {
  const delimiter = o.delimiter ?? ',';
  const maxLineBytes = o.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  if (useWorkers(spec, o)) {
    const chunkBytes = Number(process.env.SVC_PREPARE_CHUNK_BYTES) || undefined;
    return prepareInPool(spec, {
      mapping: o.mapping,
      delimiter,
      maxLineBytes,
      threads: prepareThreads(o.dryRun ?? false),
      columns: o.columns,
      chunkBytes,
      onBytes: o.onBytes,
    });
  }
  return prepareInput(spec, profile, {
    delimiter,
    maxLineBytes,
    stdin: o.stdin,
    onHeader: o.onHeader,
    onBytes: o.onBytes,
  });
}
