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
/** The largest body cut from a slab (a larger one gets a buffer of its own). */
const MOST_IN_SLAB = SLAB_BYTES >> 2;
const encoder = new TextEncoder();

// utf8()'s slab: its bodies are let go of as any buffer is (the collector frees the slab once none is left).
let loose = Buffer.allocUnsafeSlow(SLAB_BYTES);
let looseUsed = 0;

/**
 * A string's UTF-8 bytes, cut from a shared slab. Buffer.from(string) (what undici does with a string body) measures
 * the string, allocates a buffer and then writes it: ~16 µs for a 39 KB batch, where encodeInto into room already
 * there takes ~1 µs. A slab is dropped for a new one when the next string may not fit (3 bytes per UTF-16 unit at
 * most) and is freed once the last body cut from it is gone; a string too large for a slab gets its own buffer.
 * (Not the send's path: its bodies come from encodeRecords, whose slabs are reused.)
 * @example utf8('{"transactions":[…]}') // Buffer of the UTF-8 bytes
 */
export function utf8(s: string): Buffer {
  const most = s.length * 3;
  if (most > MOST_IN_SLAB) return Buffer.from(s, 'utf8');
  if (looseUsed + most > SLAB_BYTES) {
    loose = Buffer.allocUnsafeSlow(SLAB_BYTES);
    looseUsed = 0;
  }
  const { written } = encoder.encodeInto(s, loose.subarray(looseUsed));
  const out = loose.subarray(looseUsed, looseUsed + written);
  looseUsed = (looseUsed + written + 7) & ~7;
  return out;
}

/**
 * A slab of encodeRecords' bodies and how many holds it has: one while bodies are being cut from it (the current
 * slab), one per body until its batch's attempts are over (the attempt's), one per request sending a body from it
 * until undici is done with the request (dispatch-fetch.ts), and one per record whose bytes were first written into
 * it until its batch is settled (the dispatcher's releaseWires). At no hold left it goes back to the pool and is cut
 * from again; a slab whose holds are never all given back (a body kept elsewhere) is left to the collector.
 */
interface Slab {
  readonly bytes: Buffer;
  holds: number;
}

/** Each pooled slab by its memory (what every body cut from it shares): weak, so a slab nobody holds is collected. */
const slabs = new WeakMap<ArrayBufferLike, Slab>();
/**
 * Free slabs kept for reuse. A c32 send has ~1.8 MB of bodies in flight (32 × ~56 KB) and its records' bytes until
 * their batches are recorded: 3-5 slabs at once; one more free than that is plenty, more is only resident memory.
 */
const POOL_MAX = 4;
const free: Slab[] = [];
/** Slabs allocated and reuses of a free one since the start (slabCounts: the tests and the bench read them). */
let allocated = 0;
let reused = 0;
let current = newSlab();
let used = 0;

function newSlab(): Slab {
  const s: Slab = { bytes: Buffer.allocUnsafeSlow(SLAB_BYTES), holds: 1 };
  slabs.set(s.bytes.buffer, s);
  allocated++;
  return s;
}

function drop(s: Slab, n: number): void {
  s.holds -= n;
  if (s.holds === 0 && free.length < POOL_MAX) free.push(s);
}

/** The current slab let go of (its own hold), and a free or new one cut from, from its start. */
function nextSlab(): void {
  drop(current, 1);
  const again = free.pop();
  if (again === undefined) current = newSlab();
  else {
    again.holds = 1;
    current = again;
    reused++;
  }
  used = 0;
}

/**
 * One more hold on the slab a body was cut from (nothing for a body of its own): the slab is not cut from again
 * until releaseBody. dispatch-fetch.ts holds a request's body from its dispatch until undici ends the request.
 * @example holdBody(body.bytes); try { await send(body.bytes) } finally { releaseBody(body.bytes) }
 */
export function holdBody(body: Uint8Array): void {
  const s = slabs.get(body.buffer);
  if (s !== undefined) s.holds++;
}

/** A hold given back (holdBody's, or encodeRecords' own once every attempt of its batch is over). */
export function releaseBody(body: Uint8Array): void {
  const s = slabs.get(body.buffer);
  if (s !== undefined) drop(s, 1);
}

/**
 * The records' holds on the slabs their bytes were first written into (encodeRecords takes one per record it
 * writes), given back once their batch is settled: nothing reads their bytes after (a split part of the batch is
 * cut from them before). Each record's `wire` is cleared, so a second call gives nothing back twice.
 * @example try { await deliver(batch) } finally { releaseWires(batch.items) }
 */
export function releaseWires(records: readonly WireRecord[]): void {
  let s: Slab | undefined;
  let n = 0;
  for (const r of records) {
    const wire = r.wire;
    if (wire === undefined) continue;
    r.wire = undefined;
    if (s === undefined || wire !== s.bytes) {
      if (s !== undefined) drop(s, n);
      s = slabs.get(wire.buffer);
      n = 0;
    }
    if (s !== undefined) n++;
  }
  if (s !== undefined && n > 0) drop(s, n);
}

/** Pooled slabs allocated and reused so far, and how many are free (for the tests and the bench). */
export function slabCounts(): { allocated: number; reused: number; free: number } {
  return { allocated, reused, free: free.length };
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
 * of it (a split batch); each record is then left holding where its bytes are, not its JSON (WireRecord). The slab
 * is held for the body (releaseBody(body.bytes) once its last attempt is over) and for each record written into it
 * (releaseWires once the batch is settled): only then is it reused, so no byte of a body still needed is written over.
 * @example const body = encodeRecords(items); try { await client.postTransactionsJson(body, { requestId }) } finally { releaseBody(body.bytes) }
 */
export function encodeRecords(records: readonly WireRecord[]): EncodedBatch {
  const n = records.length;
  let most = OPEN.length + 2 + n;
  for (let k = 0; k < n; k++) {
    const r = records[k] as WireRecord;
    most += r.wire === undefined ? r.json.length * 3 : (r.end as number) - (r.at as number);
  }
  if (most > MOST_IN_SLAB) return { bytes: Buffer.from(batchJson(records.map(jsonOf)), 'utf8'), count: n };
  if (used + most > SLAB_BYTES) nextSlab();
  const slab = current;
  const out = slab.bytes;
  const start = used;
  let p = start + out.write(OPEN, start, 'latin1');
  let fresh = 0;
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
      fresh++;
    } else p += wire.copy(out, p, r.at as number, r.end as number);
  }
  out[p++] = 0x5d; // ]
  out[p++] = 0x7d; // }
  // The body's own hold (releaseBody once its attempts are over) and one per record now holding its bytes here.
  slab.holds += 1 + fresh;
  used = (p + 7) & ~7;
  return { bytes: out.subarray(start, p), count: n };
}

/** A record's JSON, from its string or, once its batch was encoded, from its bytes. */
export function jsonOf(r: WireRecord): string {
  return r.wire === undefined ? r.json : r.wire.toString('utf8', r.at as number, r.end as number);
}
