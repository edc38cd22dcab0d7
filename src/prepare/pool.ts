// Prepares one input file on a pool of worker threads: the main thread splits the bytes into chunks at record
// boundaries (split.ts), each worker reads, maps and validates whole chunks, and the items come back in input
// order with the line numbers a single reader would give. Same items as prepareInput, in the same order.
import sea from 'node:sea';
import { Worker } from 'node:worker_threads';
import { IN_EXECUTABLE } from '../config/builtin.ts';
import { type ErrorCode, SvcIngestError } from '../errors.ts';
import { mergeSilentState, type SilentState } from '../map/silent-errors.ts';
import { type InputSpec, inputBytes, readCsvHeader, sourceName } from '../read/open.ts';
import type { PoolReply, PoolRequest, PoolWorkerData } from './pool-worker.ts';
import type { PreparedChunks, PreparedItem } from './prepare.ts';
import { createSplitter } from './split.ts';

/**
 * The worker module beside this one: `.ts` in the clone (type stripping), `.js` in the built package; in the single
 * executable its bundle, an embedded asset (packaging/sea.ts), run as a script.
 */
const WORKER_URL = new URL(
  `./pool-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`,
  import.meta.url,
);
function workerScript(): { script: URL | string; eval: boolean } {
  return IN_EXECUTABLE
    ? { script: sea.getAsset(POOL_WORKER_ASSET, 'utf8'), eval: true }
    : { script: WORKER_URL, eval: false };
}
/** The worker's bundle's asset name in the single executable. */
export const POOL_WORKER_ASSET = 'pool-worker.js';

/** The pool as a run uses it (choosePool): `large` = files of WORKER_MIN_BYTES or more; standard input never. */
export interface PoolChoice {
  use: 'on' | 'off' | 'large';
  threads: number;
  chunkBytes: number;
  /** Bytes handed to the reader at a time when preparing inline (read/open.ts: SLICE_BYTES, BUSY_SLICE_BYTES). */
  sliceBytes?: number;
}

/** Options of prepareInPool. */
export interface PoolOptions {
  /** Mapping profile name or path (each worker loads and compiles it itself); undefined = canonical. */
  mapping: string | undefined;
  delimiter: string;
  maxLineBytes: number;
  /** Threads and chunk size (choosePool): a chunk ends at the first record boundary after that many bytes. */
  pool: PoolChoice;
  /** A CSV file's header, when the caller has read it already (else it is read here). */
  columns?: string[];
  /** Told how many input bytes the feeder consumed (it runs at most a few chunks ahead of the consumer). */
  onBytes?: (n: number) => void;
  /** Where the workers' counts of a probably wrong profile are merged (silent-errors.ts). */
  silent?: SilentState;
}

/** Chunks handed out and not yet taken by the consumer, per worker: how far reading runs ahead. */
const CHUNKS_AHEAD = 3;
/** Bytes a worker may have been sent and not yet read, so one endless chunk cannot pile up in its queue. */
const UNREAD_BYTES = 4 * 1024 * 1024;
/** Item messages (of up to 200 items) a worker may post ahead of the consumer. */
const WINDOW = 32;

type Outcome = { items: PreparedItem[][]; done: boolean; error?: PoolReply & { t: 'error' } };

interface Lane {
  worker: Worker;
  unread: number;
  /** Resolves a writer waiting for this worker to read. */
  wake: (() => void) | null;
}

function errorOf(m: Extract<PoolReply, { t: 'error' }>): Error {
  if (m.code) return new SvcIngestError(m.code as ErrorCode, m.message, m.context ?? {});
  return new Error(m.message);
}

/** One pool's shared state: the workers, what came back from them, and how far the feeder and consumer are. */
interface PoolRun {
  lanes: Lane[];
  outcomes: Map<number, Outcome>;
  failure: Error | undefined;
  stopped: boolean;
  /** Resolves the consumer waiting for a worker's message. */
  notify: (() => void) | null;
  /** Chunks opened. */
  chunks: number;
  /** Every chunk has been opened and ended. */
  fed: boolean;
  /** A read error, and the last chunk whose records were read before it (-1: none). */
  readError: { after: number; error: unknown } | undefined;
  /** Chunks the consumer has finished. */
  taken: number;
  /** Resolves the feeder waiting for the consumer to take a chunk. */
  aheadWake: (() => void) | null;
}

function poke(run: PoolRun): void {
  run.notify?.();
  run.notify = null;
}

function wakeAhead(run: PoolRun): void {
  run.aheadWake?.();
  run.aheadWake = null;
}

function outcomeOf(run: PoolRun, seq: number): Outcome {
  let r = run.outcomes.get(seq);
  if (!r) {
    r = { items: [], done: false };
    run.outcomes.set(seq, r);
  }
  return r;
}

/** One worker thread, its replies filed by chunk into the run's outcomes. */
function startLane(run: PoolRun, data: PoolWorkerData, silent: SilentState | undefined): Lane {
  const { script, eval: evalScript } = workerScript();
  const worker = new Worker(script, {
    eval: evalScript,
    workerData: data,
    // As the launcher does for the main thread: a small young generation keeps RSS flat on long files.
    resourceLimits: { maxYoungGenerationSizeMb: 16, maxOldGenerationSizeMb: 96 },
  });
  const lane: Lane = { worker, unread: 0, wake: null };
  worker.on('message', (m: PoolReply) => {
    if (m.t === 'ack') {
      lane.unread -= m.bytes;
      lane.wake?.();
      lane.wake = null;
      return;
    }
    const r = outcomeOf(run, m.seq);
    if (m.t === 'items') r.items.push(m.items);
    else if (m.t === 'done') {
      r.done = true;
      if (m.silent !== undefined && silent !== undefined) mergeSilentState(silent, m.silent);
    } else r.error = m;
    poke(run);
  });
  worker.on('error', (err) => {
    run.failure ??= new Error(`prepare worker failed: ${err.message}`);
    poke(run);
  });
  worker.on('exit', (code) => {
    if (!run.stopped)
      run.failure ??= new Error(`prepare worker exited (code ${code}) before the end of ${data.source}`);
    poke(run);
  });
  return lane;
}

/** The feeder: reads the input, splits it, hands chunk after chunk to the workers in turn. */
async function feed(run: PoolRun, spec: InputSpec, o: PoolOptions, columns: string[]): Promise<void> {
  const { lanes } = run;
  // The main thread only splits here: big reads, fewer messages.
  const bytes = inputBytes(spec, undefined, 256 * 1024, o.onBytes, Number.POSITIVE_INFINITY);
  const splitter = createSplitter({
    format: spec.format,
    delimiter: o.delimiter,
    maxLineBytes: o.maxLineBytes,
    pieceBytes: o.pool.chunkBytes,
  });
  let line = 1;
  let open = -1; // the chunk being fed
  const send = async (seq: number, m: PoolRequest): Promise<void> => {
    const lane = lanes[seq % lanes.length] as Lane;
    if (m.t === 'data') {
      while (lane.unread > UNREAD_BYTES && !run.stopped) await new Promise<void>((r) => (lane.wake = r));
      lane.unread += m.bytes.byteLength;
    }
    if (!run.stopped) lane.worker.postMessage(m);
  };
  const piece = async (p: { bytes: Buffer; newlines: number; last: boolean }): Promise<void> => {
    if (open === -1 && p.bytes.length === 0) return; // the input ended on a chunk boundary
    if (open === -1) {
      while (run.chunks - run.taken >= CHUNKS_AHEAD * lanes.length && !run.stopped)
        await new Promise<void>((r) => (run.aheadWake = r));
      open = run.chunks++;
      const m: PoolRequest =
        open === 0
          ? { t: 'open', seq: open, firstLine: line }
          : { t: 'open', seq: open, firstLine: line, columns, recordDelimiter: splitter.recordDelimiter };
      await send(open, m);
    }
    if (p.bytes.length > 0) await send(open, { t: 'data', seq: open, bytes: p.bytes });
    line += p.newlines;
    if (p.last) {
      await send(open, { t: 'end', seq: open });
      open = -1;
    }
  };
  try {
    for await (const buf of bytes) {
      for (const p of splitter.push(buf)) await piece(p);
      if (run.stopped) return;
    }
    await piece(splitter.end());
  } catch (err) {
    run.readError = { after: open === -1 ? run.chunks - 1 : open, error: err };
    if (open !== -1) await send(open, { t: 'end', seq: open });
  } finally {
    run.fed = true;
    poke(run);
  }
}

/** The consumer: each chunk's items in input order, as the workers send them back. */
async function* consume(run: PoolRun): PreparedChunks {
  const { lanes, outcomes } = run;
  for (let seq = 0; ; seq++) {
    for (;;) {
      if (run.failure) throw run.failure;
      const r = outcomes.get(seq);
      if (r && r.items.length > 0) {
        const items = r.items.shift() as PreparedItem[];
        (lanes[seq % lanes.length] as Lane).worker.postMessage({ t: 'credit' } satisfies PoolRequest);
        yield items;
        continue;
      }
      if (r?.error) throw errorOf(r.error);
      if (r?.done) break;
      // A read error surfaces where a single reader would raise it: after the records read before it.
      if (run.readError && run.readError.after < seq) throw run.readError.error;
      if (run.fed && seq >= run.chunks) return;
      await new Promise<void>((res) => (run.notify = res));
    }
    outcomes.delete(seq);
    run.taken = seq + 1;
    wakeAhead(run);
  }
}

/**
 * Read, map and validate one input file (CSV or NDJSON, gzipped or not) on `threads` worker threads.
 * Memory stays bounded: reading runs at most a few chunks ahead of the consumer.
 * @example for await (const items of prepareInPool(spec, { mapping: undefined, delimiter: ',', maxLineBytes: 1 << 20, pool: { use: 'on', threads: 2, chunkBytes: 524288 } })) …
 */
export async function* prepareInPool(spec: InputSpec, o: PoolOptions): PreparedChunks {
  const source = sourceName(spec);
  const columns =
    spec.format === 'csv' ? (o.columns ?? (await readCsvHeader(spec, { delimiter: o.delimiter }))) : [];
  const data: PoolWorkerData = {
    source,
    format: spec.format,
    mapping: o.mapping,
    delimiter: o.delimiter,
    maxLineBytes: o.maxLineBytes,
    window: WINDOW,
  };
  const run: PoolRun = {
    lanes: [],
    outcomes: new Map(),
    failure: undefined,
    stopped: false,
    notify: null,
    chunks: 0,
    fed: false,
    readError: undefined,
    taken: 0,
    aheadWake: null,
  };
  for (let i = 0; i < o.pool.threads; i++) run.lanes.push(startLane(run, data, o.silent));
  const feeding = feed(run, spec, o, columns);
  try {
    yield* consume(run);
  } finally {
    run.stopped = true;
    wakeAhead(run);
    for (const lane of run.lanes) lane.wake?.();
    await feeding.catch(() => {});
    await Promise.all(run.lanes.map((l) => l.worker.terminate()));
  }
}
