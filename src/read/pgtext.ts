// PostgreSQL's text format, as `COPY … TO STDOUT` and psql's `\copy … TO STDOUT` write it by default: one row a
// line, values separated by a tab, `\N` for NULL (the value is missing), backslash escapes for the characters a
// value holds (\t \n \r \b \f \v \\, octal \NNN, hex \xHH, any other escaped character as itself). No quoting. The
// first line is the header (`WITH (HEADER)`, PostgreSQL 15+). A lone `\.` line (the end-of-data marker) ends it.
import { isUtf8 } from 'node:buffer';
import { SvcIngestError } from '../errors.ts';
import { maskExcerpt } from '../mask/index.ts';
import { ENDED_MID_RECORD, endedMidRecord } from './broken.ts';
import { rejectText } from './excerpt.ts';
import { type FieldsBuilder, fieldsBuilder } from './fields.ts';
import type { RawRecord, ReadItem, RecordChunks } from './types.ts';

const SIMPLE: Record<string, string> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v' };

/**
 * One value of the text format: undefined for `\N` (NULL), else the text with its escapes decoded.
 * @example pgValue('a\\tb') // 'a\tb'
 */
export function pgValue(raw: string): string | undefined {
  if (raw === '\\N') return undefined;
  if (!raw.includes('\\')) return raw;
  let out = '';
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i] as string;
    if (c !== '\\' || i + 1 >= raw.length) {
      out += c;
      continue;
    }
    const n = raw[++i] as string;
    const oct = /^[0-7]{1,3}/.exec(raw.slice(i, i + 3));
    const hex = n === 'x' ? /^[0-9A-Fa-f]{1,2}/.exec(raw.slice(i + 1, i + 3)) : null;
    if (oct) {
      out += String.fromCharCode(Number.parseInt(oct[0], 8) & 0xff);
      i += oct[0].length - 1;
    } else if (hex) {
      out += String.fromCharCode(Number.parseInt(hex[0], 16));
      i += hex[0].length;
    } else out += SIMPLE[n] ?? n;
  }
  return out;
}

/** Options of readPgText. */
export interface PgTextOptions {
  maxLineBytes: number;
  onHeader?: (columns: string[], source: string) => void;
  headerOnly?: boolean;
  /** A stream: a last line without a line break is "input ended mid-record" (read/broken.ts). */
  wholeEnd?: boolean;
}

/**
 * Read the text format into record / reject items: the header first (names decoded, each once), then one record a
 * line with as many values as the header (else a reject); a NULL value is left out of the record (missing).
 * @example for await (const items of readPgText(bytes, 'stdin', { maxLineBytes: 1 << 20 })) …
 */
export async function* readPgText(
  bytes: AsyncIterable<Buffer>,
  source: string,
  o: PgTextOptions,
): RecordChunks {
  let columns: string[] | undefined;
  let build: FieldsBuilder | undefined;
  let carry: Buffer[] = [];
  let carryLen = 0;
  let line = 0;
  let ended = false;
  const tooLong = `line longer than ${o.maxLineBytes} bytes`;
  const handle = (text: string, items: ReadItem[], invalidUtf8: boolean): void => {
    line++;
    const t = text.endsWith('\r') ? text.slice(0, -1) : text;
    if (ended || t === '') return;
    if (t === '\\.') {
      ended = true;
      return;
    }
    const raw = t.split('\t');
    if (columns === undefined) {
      columns = header(raw, source, line);
      build = fieldsBuilder(columns);
      o.onHeader?.(columns, source);
      return;
    }
    if (raw.length !== columns.length) {
      const message = `expected ${columns.length} tab-separated values as in the header, got ${raw.length}`;
      items.push({ kind: 'reject', reject: { source, line, message, raw: rejectText(t) } });
      return;
    }
    const record: RawRecord = {
      source,
      line,
      fields: (build as FieldsBuilder)(raw.map(pgValue) as string[]),
    };
    if (invalidUtf8) record.invalidUtf8 = true;
    items.push({ kind: 'record', record });
  };
  for await (const chunk of bytes) {
    const items: ReadItem[] = [];
    let start = 0;
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
      const part = chunk.subarray(start, nl);
      if (carryLen + part.length > o.maxLineBytes) {
        line++;
        items.push({ kind: 'reject', reject: { source, line, message: tooLong } });
      } else {
        const whole = carryLen === 0 ? part : Buffer.concat([...carry, part]);
        handle(whole.toString('utf8'), items, !isUtf8(whole));
      }
      carry = [];
      carryLen = 0;
      start = nl + 1;
    }
    // The rest of the line goes on past this chunk (kept as bytes: a character may be split); an overlong one is
    // cut to its limit here and rejected when its line ends.
    if (start < chunk.length && carryLen <= o.maxLineBytes) {
      carry.push(chunk.subarray(start));
      carryLen += chunk.length - start;
    }
    if (o.headerOnly && columns !== undefined) return;
    if (items.length > 0) yield items;
  }
  const items: ReadItem[] = [];
  const last = Buffer.concat(carry).toString('utf8');
  const cut = o.wholeEnd === true && last.trim() !== '' && !ended;
  if (cut) {
    line++;
    const message = `${ENDED_MID_RECORD} (no line break after it)`;
    items.push({ kind: 'reject', reject: { source, line, message, raw: rejectText(last) } });
  } else if (carryLen > o.maxLineBytes) {
    line++;
    items.push({ kind: 'reject', reject: { source, line, message: tooLong } });
  } else if (last !== '') handle(last, items, !isUtf8(Buffer.concat(carry)));
  if (items.length > 0) yield items;
  if (cut) throw endedMidRecord(source, line, 'no line break after it');
}

function header(raw: string[], source: string, line: number): string[] {
  const names = raw.map((r) => pgValue(r) ?? '');
  const seen = new Set<string>();
  for (const n of names) {
    if (seen.has(n))
      throw new SvcIngestError(
        'INPUT_PARSE',
        `${source}: header names the column ${JSON.stringify(maskExcerpt(n, 40))} twice (PostgreSQL's text format needs \`WITH (HEADER)\`: PostgreSQL 15+)`,
        { source, line },
      );
    seen.add(n);
  }
  return names;
}
