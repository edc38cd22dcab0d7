// Prepares one input file on a worker thread (parsing off the main thread), same order and items as prepareInput.
import { Worker } from 'node:worker_threads';
import { type ErrorCode, SvcIngestError } from '../errors.ts';
import type { InputSpec } from '../read/open.ts';
import type { PreparedChunks, PreparedItem } from './prepare.ts';
import type { PrepareMessage, PrepareWorkerData } from './worker.ts';

/** Options of prepareInWorker. */
export interface ThreadedOptions {
  /** Mapping profile name or path (the worker loads and compiles it itself); undefined = canonical. */
  mapping: string | undefined;
  delimiter: string;
  maxLineBytes: number;
  /** Messages (of up to 200 items) the worker may prepare ahead of the consumer (default 16). */
  window?: number;
}

/**
 * Read, map and validate one input file on a worker thread. The worker stays at most `window` messages
 * ahead, so memory stays flat when the consumer (the sender) is slower. Errors keep their code.
 * @example for await (const items of prepareInWorker(spec, { mapping: undefined, delimiter: ',', maxLineBytes: 1 << 20 })) …
 */
export async function* prepareInWorker(spec: InputSpec, o: ThreadedOptions): PreparedChunks {
  const data: PrepareWorkerData = {
    spec,
    mapping: o.mapping,
    delimiter: o.delimiter,
    maxLineBytes: o.maxLineBytes,
    window: o.window ?? 16,
  };
  const worker = new Worker(new URL('./worker.ts', import.meta.url), {
    workerData: data,
    // As the launcher does for the main thread: a small young generation keeps RSS flat on long files.
    resourceLimits: { maxYoungGenerationSizeMb: 48 },
  });
  const queue: PrepareMessage[] = [];
  let notify: (() => void) | null = null;
  let finished = false;
  const push = (m: PrepareMessage) => {
    queue.push(m);
    notify?.();
    notify = null;
  };
  worker.on('message', push);
  worker.on('error', (err) => push({ type: 'error', message: `prepare worker failed: ${err.message}` }));
  worker.on('exit', (code) => {
    if (!finished)
      push({ type: 'error', message: `prepare worker exited (code ${code}) before the end of ${spec.path}` });
  });
  try {
    for (;;) {
      while (queue.length === 0) await new Promise<void>((r) => (notify = r));
      const m = queue.shift() as PrepareMessage;
      if (m.type === 'items') {
        worker.postMessage('credit');
        yield m.items as PreparedItem[];
      } else if (m.type === 'end') {
        finished = true;
        return;
      } else {
        finished = true;
        if (m.code) throw new SvcIngestError(m.code as ErrorCode, m.message, m.context ?? {});
        throw new Error(m.message);
      }
    }
  } finally {
    finished = true;
    await worker.terminate();
  }
}
