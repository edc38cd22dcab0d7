// The batch body's preparation (src/client/body.ts): the JSON the service gets, and UTF-8 bytes cut from a shared
// slab that never overwrite a body still in use.
import { describe, expect, it } from 'vitest';
import {
  batchJson,
  encodeRecords,
  holdBody,
  jsonOf,
  releaseBody,
  releaseWires,
  slabCounts,
  utf8,
  type WireRecord,
} from '../../src/client/body.ts';
import { makeTransactions } from './fixtures.ts';

describe('batchJson', () => {
  it('is JSON.stringify({ transactions }) of the records, for 1, 2 and 50 of them', () => {
    for (const n of [1, 2, 50]) {
      const txs = makeTransactions(n);
      const json = batchJson(txs.map((t) => JSON.stringify(t)));
      expect(json).toBe(JSON.stringify({ transactions: txs }));
      expect(JSON.parse(json)).toEqual({ transactions: txs });
    }
    expect(batchJson([])).toBe('{"transactions":[]}');
  });
});

describe('utf8', () => {
  it('gives the UTF-8 bytes of each string, and bodies kept across many slabs stay intact', () => {
    const kept: Array<{ s: string; b: Buffer }> = [];
    // ~40 MB of bodies: dozens of slabs, ASCII, Latin-1, BMP and astral characters, sizes around the slab's limits.
    for (let i = 0; i < 400; i++) {
      const unit = ['tx-ascii,', 'Café é,', 'Zürich ☕,', '😀 𝄞,'][i % 4] as string;
      const s = `${i}:${unit.repeat(1 + ((i * 7919) % 12_000))}`;
      kept.push({ s, b: utf8(s) });
    }
    for (const { s, b } of kept) {
      expect(b.byteLength).toBe(Buffer.byteLength(s));
      expect(b.toString('utf8')).toBe(s);
    }
    expect(new Set(kept.map((k) => k.b.buffer)).size).toBeGreaterThan(10);
  });

  it('a string larger than a slab allows gets a buffer of its own', () => {
    const s = 'é'.repeat(300_000);
    const b = utf8(s);
    expect(b.byteLength).toBe(600_000);
    expect(b.toString('utf8')).toBe(s);
    expect(utf8('').byteLength).toBe(0);
  });
});

describe('encodeRecords', () => {
  it('is the UTF-8 of batchJson, encoded once: the records then hold their bytes, and a part of the batch is cut from them', () => {
    const txs = makeTransactions(50).map((t, i) => ({
      ...t,
      paymentNetworkMerchant: ['Café é', 'Zürich ☕', '😀 𝄞', 'plain'][i % 4] as string,
    }));
    const json = txs.map((t) => JSON.stringify(t));
    const items: WireRecord[] = json.map((j) => ({ json: j }));
    const whole = encodeRecords(items);
    expect(whole.count).toBe(50);
    expect(whole.bytes.toString('utf8')).toBe(batchJson(json));
    // The JSON strings are let go; each record's text is still there, from its bytes.
    for (let i = 0; i < items.length; i++) {
      expect(items[i]?.json).toBe('');
      expect(jsonOf(items[i] as WireRecord)).toBe(json[i]);
    }
    // Parts of it (a split batch), encoded across many slabs, and a record never encoded beside encoded ones.
    for (let round = 0; round < 200; round++) {
      const part = items.slice(round % 25, 25 + (round % 25));
      const body = encodeRecords(part);
      expect(body.count).toBe(part.length);
      expect(JSON.parse(body.bytes.toString('utf8'))).toEqual({
        transactions: txs.slice(round % 25, 25 + (round % 25)),
      });
    }
    const fresh = { json: JSON.stringify(txs[0]) };
    const mixed = encodeRecords([items[3] as WireRecord, fresh]);
    expect(mixed.bytes.toString('utf8')).toBe(batchJson([json[3] as string, json[0] as string]));
    expect(whole.bytes.toString('utf8')).toBe(batchJson(json));
  });
});

describe('the slabs of encodeRecords: reused once nothing holds them, never while a body cut from them is held', () => {
  /** A batch of `n` fresh records (~600 bytes each), numbered from `from`. */
  function batch(n: number, from: number): { items: WireRecord[]; json: string[] } {
    const json = makeTransactions(n).map((t, i) => JSON.stringify({ ...t, transactionId: `r-${from + i}` }));
    return { items: json.map((j) => ({ json: j })), json };
  }

  it('a batch settled (its body and its records let go of) leaves its slab to the next batches: few slabs for many MB', () => {
    const before = slabCounts();
    // ~30 MB of bodies, each let go of at once: without reuse that is ~30 slabs.
    for (let b = 0; b < 1000; b++) {
      const { items, json } = batch(50, b * 50);
      const body = encodeRecords(items);
      expect(body.bytes.toString('utf8')).toBe(batchJson(json));
      releaseBody(body.bytes);
      releaseWires(items);
      // A record let go of holds no bytes any more (so a second releaseWires gives nothing back twice).
      expect(items[0]?.wire).toBeUndefined();
      releaseWires(items);
    }
    const after = slabCounts();
    expect(after.allocated - before.allocated).toBeLessThanOrEqual(2);
    expect(after.reused - before.reused).toBeGreaterThan(20);
  });

  it('a body still held (its attempt, a request writing it, its records) keeps its bytes while later batches reuse slabs', () => {
    const kept = batch(50, 0);
    const keptBody = encodeRecords(kept.items);
    // The attempt is over but a request still writes it (dispatch-fetch's hold); its records are settled.
    holdBody(keptBody.bytes);
    releaseBody(keptBody.bytes);
    const part = encodeRecords(kept.items.slice(10, 30));
    releaseWires(kept.items);
    const before = slabCounts();
    for (let b = 1; b < 200; b++) {
      const { items } = batch(50, b * 50);
      const body = encodeRecords(items);
      releaseBody(body.bytes);
      releaseWires(items);
    }
    expect(slabCounts().reused).toBeGreaterThan(before.reused);
    expect(keptBody.bytes.toString('utf8')).toBe(batchJson(kept.json));
    expect(part.bytes.toString('utf8')).toBe(batchJson(kept.json.slice(10, 30)));
    // Let go of, its slab goes back to the pool (the current slab is another by now).
    const free = slabCounts().free;
    releaseBody(keptBody.bytes);
    expect(slabCounts().free).toBe(free);
    releaseBody(part.bytes);
    expect(slabCounts().free).toBe(free + 1);
  });
});
