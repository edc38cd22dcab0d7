// The tickets file: one JSON event a line, appended with O_APPEND and fsynced before append() resolves; read back
// incrementally (only what was appended since, by this process or another). Torn or foreign lines are skipped.
import { constants } from 'node:fs';
import { type FileHandle, mkdir, open } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { SvcIngestError } from '../errors.ts';
import { maskDeep } from '../mask/index.ts';
import type { TicketEvent } from './state.ts';
import type { TicketStore, TicketStoreOptions } from './store-types.ts';

const KINDS = new Set(['submitted', 'accepted', 'update', 'fetched']);
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;

function eventOf(text: string): TicketEvent | undefined {
  try {
    const e = JSON.parse(text) as TicketEvent;
    return e && typeof e === 'object' && KINDS.has(e.kind) && typeof e.sourceTicketId === 'string'
      ? e
      : undefined;
  } catch {
    return undefined;
  }
}

export async function openFileTicketStore(path: string, o: TicketStoreOptions): Promise<TicketStore> {
  const abs = resolve(path);
  const fail = (verb: string, err: unknown) =>
    new SvcIngestError(
      verb === 'read' ? 'LEDGER_READ' : 'LEDGER_WRITE',
      `cannot ${verb} tickets file ${abs}: ${(err as Error).message}`,
      { source: path },
    );
  let handle: FileHandle | null = null;
  try {
    if (!o.readOnly) await mkdir(dirname(abs), { recursive: true, mode: 0o700 });
    handle = await open(
      abs,
      (o.readOnly ? constants.O_RDONLY : constants.O_RDWR | constants.O_APPEND | constants.O_CREAT) |
        NOFOLLOW,
      0o600,
    );
    if (!(await handle.stat()).isFile()) throw new Error('not a regular file');
  } catch (err) {
    await handle?.close().catch(() => {});
    if (o.readOnly && (err as NodeJS.ErrnoException).code === 'ENOENT') handle = null;
    else throw fail('open', err);
  }
  const events: TicketEvent[] = [];
  const keys = new Set<string>();
  let offset = 0;
  let tail = '';
  /** One operation at a time: the read-check-append of an update is not interleaved with another. */
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(fn: () => Promise<T>): Promise<T> => {
    const next = queue.then(fn, fn);
    queue = next.catch(() => {});
    return next;
  };

  const catchUp = async (): Promise<void> => {
    if (!handle) return;
    const size = (await handle.stat()).size;
    if (size <= offset) return;
    const buf = Buffer.alloc(size - offset);
    const { bytesRead } = await handle.read(buf, 0, buf.length, offset);
    offset += bytesRead;
    const parts = (tail + buf.subarray(0, bytesRead).toString('utf8')).split('\n');
    tail = parts.pop() ?? '';
    for (const text of parts) {
      const e = text ? eventOf(text) : undefined;
      if (!e) continue;
      events.push(e);
      if (e.kind === 'update') keys.add(e.key);
    }
  };

  return {
    location: abs,
    events: () =>
      serial(async () => {
        await catchUp().catch((err: unknown) => {
          throw fail('read', err);
        });
        return [...events];
      }),
    append: (event) =>
      serial(async () => {
        if (!handle || o.readOnly) throw fail('write', new Error('opened read-only'));
        try {
          await catchUp();
          if (event.kind === 'update' && keys.has(event.key)) return false;
          // A torn last line (a crash mid-write) ends here, so this event starts on a line of its own.
          const text = `${tail === '' ? '' : '\n'}${JSON.stringify(maskDeep(event))}\n`;
          await handle.write(Buffer.from(text, 'utf8'));
          await handle.datasync();
          await catchUp();
          return true;
        } catch (err) {
          throw err instanceof SvcIngestError ? err : fail('write', err);
        }
      }),
    async close() {
      await queue;
      await handle?.close().catch(() => {});
      handle = null;
    },
  };
}
