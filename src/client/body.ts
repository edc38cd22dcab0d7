// The batch's request body: the JSON put together from records already serialised, and its UTF-8 bytes.

/**
 * `{"transactions":[…]}` from records already serialised, as one flat string: the wrapper goes into the first and
 * last parts, so the one join writes it all (a template around the join would leave a concatenation that is copied
 * flat again when the body is encoded).
 * @example batchJson(['{"a":1}', '{"a":2}']) // '{"transactions":[{"a":1},{"a":2}]}'
 */
export function batchJson(transactions: readonly string[]): string {
  const n = transactions.length;
  if (n === 0) return '{"transactions":[]}';
  const parts = transactions.slice();
  parts[0] = `{"transactions":[${parts[0]}`;
  parts[n - 1] = `${parts[n - 1]}]}`;
  return parts.join(',');
}

/** Bytes from which request bodies are cut (as Buffer's own pool, for bodies of tens of KB). */
const SLAB_BYTES = 1 << 20;
const encoder = new TextEncoder();
let slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
let slabUsed = 0;

/**
 * A string's UTF-8 bytes, cut from a shared slab. Buffer.from(string) (what undici does with a string body) measures
 * the string, allocates a buffer and then writes it: ~16 µs for a 39 KB batch, where encodeInto into room already
 * there takes ~1 µs. A slab is dropped for a new one when the next string may not fit (3 bytes per UTF-16 unit at
 * most) and is freed once the last body cut from it is gone; a string too large for a slab gets its own buffer.
 * @example utf8('{"transactions":[…]}') // Buffer of the UTF-8 bytes
 */
export function utf8(s: string): Buffer {
  const most = s.length * 3;
  if (most > SLAB_BYTES >> 2) return Buffer.from(s, 'utf8');
  if (slabUsed + most > SLAB_BYTES) {
    slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
    slabUsed = 0;
  }
  const { written } = encoder.encodeInto(s, slab.subarray(slabUsed));
  return cut(written);
}

/** The next `written` bytes of the slab as a body; the next body starts on an 8-byte boundary (as Buffer's pool). */
function cut(written: number): Buffer {
  const out = slab.subarray(slabUsed, slabUsed + written);
  slabUsed = (slabUsed + written + 7) & ~7;
  return out;
}

/**
 * A record of a batch: its JSON until the batch is encoded (encodeRecords), then where its bytes are in the body
 * (`wire`, from `at` to `end`) and its JSON string let go (''). A record waits for its batch's answer (50 ms and
 * more): its ~1 KB string then outlived two scavenges and was promoted to the old generation, where its bytes in
 * the body (outside the V8 heap) cost the collector nothing.
 */
export interface WireRecord {
  json: string;
  wire?: Buffer | undefined;
  at?: number | undefined;
  end?: number | undefined;
}

/** A batch's body encoded once (encodeRecords), sent as it is by every attempt, and how many records it holds. */
export interface EncodedBatch {
  readonly bytes: Buffer;
  readonly count: number;
}

const OPEN = '{"transactions":[';

/**
 * `{"transactions":[…]}` of the records as UTF-8 bytes, written straight into the slab (no joined string): each
 * record's bytes are written once, the first time one of its batches is encoded, and copied from there in a part
 * of it (a split batch); each record is then left holding where its bytes are, not its JSON (WireRecord).
 * @example const body = encodeRecords(items); await client.postTransactionsJson(body, { requestId })
 */
export function encodeRecords(records: readonly WireRecord[]): EncodedBatch {
  const n = records.length;
  let most = OPEN.length + 2 + n;
  for (let k = 0; k < n; k++) {
    const r = records[k] as WireRecord;
    most += r.wire === undefined ? r.json.length * 3 : (r.end as number) - (r.at as number);
  }
  if (most > SLAB_BYTES >> 2) return { bytes: Buffer.from(batchJson(records.map(jsonOf)), 'utf8'), count: n };
  if (slabUsed + most > SLAB_BYTES) {
    slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
    slabUsed = 0;
  }
  const out = slab;
  const start = slabUsed;
  let p = start + out.write(OPEN, start, 'latin1');
  for (let k = 0; k < n; k++) {
    const r = records[k] as WireRecord;
    if (k > 0) out[p++] = 0x2c; // ,
    const wire = r.wire;
    if (wire === undefined) {
      const at = p;
      p += out.write(r.json, p, 'utf8');
      r.wire = out;
      r.at = at;
      r.end = p;
      r.json = '';
    } else p += wire.copy(out, p, r.at as number, r.end as number);
  }
  out[p++] = 0x5d; // ]
  out[p++] = 0x7d; // }
  return { bytes: cut(p - start), count: n };
}

/** A record's JSON, from its string or, once its batch was encoded, from its bytes. */
export function jsonOf(r: WireRecord): string {
  return r.wire === undefined ? r.json : r.wire.toString('utf8', r.at as number, r.end as number);
}
