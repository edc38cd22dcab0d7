// Worker-thread entry of the prepare pool: reads, maps and validates the chunks of an input it is given, one
// chunk at a time in the order given, and posts the prepared items back, tagged with the chunk's number.
import { parentPort, workerData } from 'node:worker_threads';
import { SvcIngestError } from '../errors.ts';
import { loadProfile } from '../map/profile.ts';
import { createSilentErrors, type SilentState } from '../map/silent-errors.ts';
import { readCsv } from '../read/csv.ts';
import { readNdjson } from '../read/ndjson.ts';
import type { PreparedItem } from './prepare.ts';
import { prepareRecords } from './prepare.ts';

/** What the main thread hands each worker (structured-cloned). */
export interface PoolWorkerData {
  source: string;
  format: 'csv' | 'ndjson';
  mapping: string | undefined;
  delimiter: string;
  maxLineBytes: number;
  /** Item messages the worker may have posted and the main thread not yet taken. */
  window: number;
}

/** Main thread → worker. */
export type PoolRequest =
  | { t: 'open'; seq: number; firstLine: number; columns?: string[]; recordDelimiter?: string }
  | { t: 'data'; seq: number; bytes: Uint8Array }
  | { t: 'end'; seq: number }
  | { t: 'credit' };

/** Worker → main thread. */
export type PoolReply =
  | { t: 'items'; seq: number; items: PreparedItem[] }
  | { t: 'ack'; bytes: number }
  | { t: 'done'; seq: number; silent?: SilentState }
  | { t: 'error'; seq: number; code?: string; message: string; context?: Record<string, unknown> };

/** Items per message: the main thread deserialises each in one go (~0.2 ms), between its sockets' events. */
const MESSAGE_ITEMS = 200;

interface Chunk {
  seq: number;
  open: Extract<PoolRequest, { t: 'open' }>;
  pieces: Uint8Array[];
  ended: boolean;
}

/** The item itself if it survives a structured clone; else the same reject without its record. */
function cloneable(item: PreparedItem): PreparedItem {
  try {
    structuredClone(item);
    return item;
  } catch {
    return item.kind === 'reject' ? { ...item, record: undefined } : item;
  }
}

const port = parentPort;
if (port) {
  const data = workerData as PoolWorkerData;
  const chunks: Chunk[] = [];
  let credits = data.window;
  let wake: (() => void) | null = null;
  const poke = () => {
    wake?.();
    wake = null;
  };
  const waitFor = (ready: () => boolean): Promise<void> | undefined =>
    ready() ? undefined : new Promise<void>((r) => (wake = r)).then(() => waitFor(ready));

  port.on('message', (m: PoolRequest) => {
    if (m.t === 'credit') credits++;
    else if (m.t === 'open') chunks.push({ seq: m.seq, open: m, pieces: [], ended: false });
    else {
      const c = chunks.find((x) => x.seq === m.seq);
      if (c && m.t === 'data') c.pieces.push(m.bytes);
      else if (c) c.ended = true;
    }
    poke();
  });

  async function* bytesOf(c: Chunk): AsyncGenerator<Buffer> {
    for (;;) {
      await waitFor(() => c.pieces.length > 0 || c.ended);
      const piece = c.pieces.shift();
      if (piece === undefined) return;
      port?.postMessage({ t: 'ack', bytes: piece.byteLength } satisfies PoolReply);
      yield Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength);
    }
  }

  const post = async (seq: number, items: PreparedItem[]): Promise<void> => {
    for (let from = 0; from < items.length; from += MESSAGE_ITEMS) {
      const part = items.length <= MESSAGE_ITEMS ? items : items.slice(from, from + MESSAGE_ITEMS);
      await waitFor(() => credits > 0);
      credits--;
      try {
        port.postMessage({ t: 'items', seq, items: part } satisfies PoolReply);
      } catch {
        // A record too deep to clone (hostile input): send the part without the records that will not clone.
        port.postMessage({ t: 'items', seq, items: part.map(cloneable) } satisfies PoolReply);
      }
    }
  };

  // The loop, started without a top-level await: in the single executable the worker is a CommonJS bundle.
  // A profile that does not load fails the worker (its 'error' event), as a top-level rejection would.
  const serve = async (): Promise<void> => {
    const profile = await loadProfile(data.mapping);
    for (;;) {
      await waitFor(() => chunks.length > 0);
      const c = chunks[0] as Chunk;
      try {
        const records =
          data.format === 'csv'
            ? readCsv(bytesOf(c), data.source, {
                delimiter: data.delimiter,
                maxLineBytes: data.maxLineBytes,
                columns: c.open.columns,
                firstLine: c.open.firstLine,
                recordDelimiter: c.open.recordDelimiter,
              })
            : readNdjson(bytesOf(c), data.source, data.maxLineBytes, c.open.firstLine);
        // What the chunk's records showed of a probably wrong profile, merged on the main thread.
        const silent = createSilentErrors(profile);
        for await (const items of prepareRecords(records, profile, silent, c.seq === 0))
          await post(c.seq, items);
        port.postMessage({ t: 'done', seq: c.seq, silent: silent.end() } satisfies PoolReply);
      } catch (err) {
        const msg: PoolReply =
          err instanceof SvcIngestError
            ? { t: 'error', seq: c.seq, code: err.code, message: err.message, context: { ...err.context } }
            : { t: 'error', seq: c.seq, message: err instanceof Error ? err.message : String(err) };
        port.postMessage(msg);
      }
      chunks.shift();
    }
  };
  void serve();
}
