// NDJSON reader: one JSON object per line; blank lines skipped, bad or overlong lines become rejects.
import { rejectText } from './csv.ts';
import type { ReadItem, RecordChunks } from './types.ts';

/**
 * Read NDJSON bytes into record / reject items. A line longer than maxLineBytes is dropped as it
 * streams past (never held whole), so memory stays bounded even for a huge line without a newline.
 * @example for await (const items of readNdjson(bytes, 'a.ndjson', 1 << 20)) ...
 */
export async function* readNdjson(
  bytes: AsyncIterable<Buffer>,
  source: string,
  maxLineBytes: number,
  /** Line number of the first byte, when these bytes are a later chunk of the input. */
  firstLine = 1,
): RecordChunks {
  let carry: Buffer[] = [];
  let carryLen = 0;
  let skipping = false;
  let line = firstLine;
  const tooLong = `line longer than ${maxLineBytes} bytes`;
  const handle = (text: string, items: ReadItem[]): void => {
    let t = text;
    if (line === 1 && t.charCodeAt(0) === 0xfeff) t = t.slice(1);
    if (t.length > 0 && t.charCodeAt(t.length - 1) === 13) t = t.slice(0, -1);
    if (t.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(t);
    } catch (err) {
      items.push({
        kind: 'reject',
        reject: { source, line, message: `not valid JSON: ${(err as Error).message}`, raw: rejectText(t) },
      });
      return;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      const what = value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value;
      items.push({
        kind: 'reject',
        reject: { source, line, message: `expected a JSON object, got ${what}`, raw: rejectText(t) },
      });
      return;
    }
    items.push({ kind: 'record', record: { source, line, fields: value as Record<string, unknown> } });
  };
  for await (const chunk of bytes) {
    const items: ReadItem[] = [];
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(10, start);
      if (nl === -1) {
        const rest = chunk.length - start;
        if (!skipping && rest > 0) {
          if (carryLen + rest > maxLineBytes) {
            skipping = true;
            carry = [];
            carryLen = 0;
          } else {
            carry.push(chunk.subarray(start));
            carryLen += rest;
          }
        }
        break;
      }
      if (skipping || carryLen + (nl - start) > maxLineBytes) {
        items.push({ kind: 'reject', reject: { source, line, message: tooLong } });
        skipping = false;
      } else if (carryLen > 0) {
        carry.push(chunk.subarray(start, nl));
        handle(Buffer.concat(carry, carryLen + nl - start).toString('utf8'), items);
      } else {
        handle(chunk.toString('utf8', start, nl), items);
      }
      carry = [];
      carryLen = 0;
      line++;
      start = nl + 1;
    }
    if (items.length > 0) yield items;
  }
  const items: ReadItem[] = [];
  if (skipping) items.push({ kind: 'reject', reject: { source, line, message: tooLong } });
  else if (carryLen > 0) handle(Buffer.concat(carry, carryLen).toString('utf8'), items);
  if (items.length > 0) yield items;
}
