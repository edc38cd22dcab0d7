// Worker-thread entry: prepares one input file (read → map → validate) and posts chunks to the main thread,
// never more than `window` chunks ahead of what the main thread has taken (back-pressure).
import { parentPort, workerData } from 'node:worker_threads';
import { SvcIngestError } from '../errors.ts';
import { loadProfile } from '../map/profile.ts';
import type { InputSpec } from '../read/open.ts';
import { type PreparedItem, prepareInput } from './prepare.ts';

/** What the main thread hands the worker (structured-cloned). */
export interface PrepareWorkerData {
  spec: InputSpec;
  mapping: string | undefined;
  delimiter: string;
  maxLineBytes: number;
  window: number;
}

/** Messages from the worker. */
export type PrepareMessage =
  | { type: 'items'; items: PreparedItem[] }
  | { type: 'end' }
  | { type: 'error'; code?: string; message: string; context?: Record<string, unknown> };

/** The item itself if it survives a structured clone; else the same reject without its record. */
function cloneable(item: PreparedItem): PreparedItem {
  try {
    structuredClone(item);
    return item;
  } catch {
    return item.kind === 'reject' ? { ...item, record: undefined } : item;
  }
}

/** Items per message (~0.2 ms to deserialise on the main thread). */
const MESSAGE_ITEMS = 200;

const port = parentPort;
if (port) {
  const data = workerData as PrepareWorkerData;
  let credits = data.window;
  let wake: (() => void) | null = null;
  port.on('message', (m: unknown) => {
    if (m === 'credit') {
      credits++;
      wake?.();
      wake = null;
    }
  });
  try {
    const profile = await loadProfile(data.mapping);
    for await (const items of prepareInput(data.spec, profile, {
      delimiter: data.delimiter,
      maxLineBytes: data.maxLineBytes,
    })) {
      // Small messages: the main thread deserialises each in one go, and a long one would delay its sockets.
      for (let from = 0; from < items.length; from += MESSAGE_ITEMS) {
        const part = items.length <= MESSAGE_ITEMS ? items : items.slice(from, from + MESSAGE_ITEMS);
        while (credits === 0) await new Promise<void>((r) => (wake = r));
        credits--;
        try {
          port.postMessage({ type: 'items', items: part } satisfies PrepareMessage);
        } catch {
          // A record too deep to clone (hostile input): send the part without the records that will not clone.
          port.postMessage({ type: 'items', items: part.map(cloneable) } satisfies PrepareMessage);
        }
      }
    }
    port.postMessage({ type: 'end' } satisfies PrepareMessage);
  } catch (err) {
    const msg: PrepareMessage =
      err instanceof SvcIngestError
        ? { type: 'error', code: err.code, message: err.message, context: { ...err.context } }
        : { type: 'error', message: err instanceof Error ? err.message : String(err) };
    port.postMessage(msg);
  }
  port.close();
}
