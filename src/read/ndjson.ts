// NDJSON reader: one JSON object per line; blank lines skipped, bad or overlong lines become rejects.
import { isUtf8 } from 'node:buffer';
import { maskCardNumbers } from '../mask/index.ts';
import { ENDED_MID_RECORD, endedMidRecord } from './broken.ts';
import { rejectText } from './excerpt.ts';
import type { RawRecord, ReadItem, RecordChunks } from './types.ts';

/**
 * JSON.parse's message without the text it quotes (V8 shows the start of the line: `"@4111…" is not
 * valid JSON`): what went wrong and where, never what the line holds.
 * @example jsonErrorMessage(new SyntaxError('Unterminated string in JSON at position 22 (line 1 column 23)')) // 'Unterminated string in JSON at character 23'
 */
export function jsonErrorMessage(err: unknown): string {
  const m = err instanceof Error ? err.message : String(err);
  const quoted = m.indexOf(', "');
  const what = (quoted === -1 ? m : m.slice(0, quoted))
    .replace(/ at position \d+ \(line \d+ column (\d+)\)/, ' at character $1')
    .replace(/ at position (\d+)$/, (_, p: string) => ` at character ${Number(p) + 1}`);
  // Anything still quoting more than one character is not shown.
  return what.includes('"') || what.length > 120 ? 'unexpected input' : maskCardNumbers(what);
}

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
  /** A stream whose last line must end with a line break (read/broken.ts): else "input ended mid-record". */
  wholeEnd = false,
): RecordChunks {
  let carry: Buffer[] = [];
  let carryLen = 0;
  let skipping = false;
  let line = firstLine;
  const tooLong = `line longer than ${maxLineBytes} bytes`;
  const handle = (text: string, items: ReadItem[], invalidUtf8: boolean): void => {
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
        reject: { source, line, message: `not valid JSON: ${jsonErrorMessage(err)}`, raw: rejectText(t) },
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
    const record: RawRecord = { source, line, fields: value as Record<string, unknown> };
    if (invalidUtf8) record.invalidUtf8 = true;
    items.push({ kind: 'record', record });
  };
  for await (const chunk of bytes) {
    const items: ReadItem[] = [];
    let start = 0;
    // One UTF-8 check for all the complete lines of the chunk; only when it fails is each line checked.
    const lastNl = chunk.lastIndexOf(10);
    const linesOk = lastNl <= 0 || isUtf8(chunk.subarray(0, lastNl));
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
        const whole = Buffer.concat(carry, carryLen + nl - start);
        handle(whole.toString('utf8'), items, !isUtf8(whole));
      } else {
        handle(chunk.toString('utf8', start, nl), items, !linesOk && !isUtf8(chunk.subarray(start, nl)));
      }
      carry = [];
      carryLen = 0;
      line++;
      start = nl + 1;
    }
    if (items.length > 0) yield items;
  }
  const items: ReadItem[] = [];
  const last = skipping ? undefined : Buffer.concat(carry, carryLen).toString('utf8');
  const cut = wholeEnd && (skipping || (last as string).trim() !== '');
  if (cut) {
    const raw = last === undefined ? {} : { raw: rejectText(last) };
    items.push({
      kind: 'reject',
      reject: { source, line, message: `${ENDED_MID_RECORD} (no line break after it)`, ...raw },
    });
  } else if (skipping) items.push({ kind: 'reject', reject: { source, line, message: tooLong } });
  else if (carryLen > 0) {
    const whole = Buffer.concat(carry, carryLen);
    handle(whole.toString('utf8'), items, !isUtf8(whole));
  }
  if (items.length > 0) yield items;
  if (cut) throw endedMidRecord(source, line, 'no line break after it');
}
