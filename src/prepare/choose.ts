// Chooses where one input is prepared: on a worker thread (a large file sent at high concurrency) or inline.
import { statSync } from 'node:fs';
import type { CompiledProfile } from '../map/profile.ts';
import { DEFAULT_MAX_LINE_BYTES, type InputSpec } from '../read/open.ts';
import { type PreparedChunks, prepareInput } from './prepare.ts';
import { prepareInWorker } from './threaded.ts';

export type { PreparedChunks, PreparedItem } from './prepare.ts';

/** Files at least this big are prepared on a worker thread (its start-up costs ~0.1 s). */
export const WORKER_MIN_BYTES = 8 * 1024 * 1024;
/**
 * Sends at this concurrency or more use the worker. Measured (test/bench, 2 cores, 50 ms latency, csv-parse):
 * at 32 in flight it is what keeps the event loop free for the answers; at 8 it lifts the ratio to the
 * service's ceiling from 0.78 to 0.87 but costs ~50 MB RSS (a second V8 isolate), which takes a resume
 * against 20M acked ids from 265 MB to 317 MB, over its 300 MB budget. SVC_PREPARE_WORKER=on trades so.
 */
export const WORKER_MIN_CONCURRENCY = 16;

export interface PrepareOptions {
  /** Profile name or path as given (the worker compiles its own copy). */
  mapping: string | undefined;
  delimiter: string | undefined;
  maxLineBytes?: number;
  stdin?: NodeJS.ReadableStream;
  onHeader?: (columns: string[], source: string) => void;
  /** A dry run prepares on the calling thread unless SVC_PREPARE_WORKER=on. */
  dryRun?: boolean;
  /** Batches in flight: below WORKER_MIN_CONCURRENCY the main thread has time to spare. */
  concurrency?: number;
}

/**
 * 'on' | 'off' | 'auto' from env SVC_PREPARE_WORKER (default auto: files of WORKER_MIN_BYTES or more,
 * sent at WORKER_MIN_CONCURRENCY or more).
 * Standard input is always prepared on the calling thread.
 */
function workerMode(): 'on' | 'off' | 'auto' {
  const v = process.env.SVC_PREPARE_WORKER;
  return v === 'on' || v === 'off' ? v : 'auto';
}

function useWorker(spec: InputSpec, o: PrepareOptions): boolean {
  if (spec.path === '-') return false;
  const mode = workerMode();
  if (mode !== 'auto') return mode === 'on';
  // A dry run has nothing else for the main thread to do: a worker would only add the cost of cloning.
  if (o.dryRun || (o.concurrency ?? 0) < WORKER_MIN_CONCURRENCY) return false;
  try {
    return statSync(spec.path).size >= WORKER_MIN_BYTES;
  } catch {
    return false; // the reader reports the error
  }
}

/**
 * Prepared chunks of one input (read → map → validate), in order, from a worker thread or inline.
 * @example for await (const items of prepareChunks(spec, profile, { mapping: undefined, delimiter: ',' })) …
 */
export function prepareChunks(spec: InputSpec, profile: CompiledProfile, o: PrepareOptions): PreparedChunks {
  const delimiter = o.delimiter ?? ',';
  const maxLineBytes = o.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  if (useWorker(spec, o)) return prepareInWorker(spec, { mapping: o.mapping, delimiter, maxLineBytes });
  return prepareInput(spec, profile, { delimiter, maxLineBytes, stdin: o.stdin, onHeader: o.onHeader });
}
