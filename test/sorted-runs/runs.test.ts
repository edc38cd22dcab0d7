// The external sort both the fingerprint set and the resume index use: runs on disk merged into one sorted file.
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fingerprint } from '../../src/sorted-runs/fingerprint.ts';
import { collectSlots } from '../../src/sorted-runs/runs.ts';

/** The slots of a collector's output, as 64-bit numbers in order. */
function all(sorted: { count: number; read(from: number, n: number): Uint32Array }): bigint[] {
  const out: bigint[] = [];
  for (let from = 0; from < sorted.count; from += 512) {
    const n = Math.min(512, sorted.count - from);
    const w = sorted.read(from, n);
    for (let i = 0; i < n; i++)
      out.push((BigInt(w[2 * i + 1] as number) << 32n) | BigInt(w[2 * i] as number));
  }
  return out;
}

describe('sorted runs (collectSlots)', () => {
  it('sorts slots spilled as many runs on disk into one file, every slot once, in order', async () => {
    const c = collectSlots('svc-runs-test-', 1000);
    const fp = new Uint32Array(2);
    const want: bigint[] = [];
    for (let i = 0; i < 25_000; i++) {
      fingerprint(`id-${i}`, fp);
      c.push(fp[0] as number, fp[1] as number);
      want.push((BigInt(fp[0] as number) << 32n) | BigInt(fp[1] as number));
    }
    const sorted = await c.finish(() => false);
    expect(sorted).not.toBeNull();
    want.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    expect(sorted!.count).toBe(25_000);
    expect(all(sorted!)).toEqual(want);
    sorted!.close();
  });

  it('few slots stay in memory; a stop while merging removes the runs and gives null', async () => {
    const small = collectSlots('svc-runs-test-', 1000);
    for (let i = 0; i < 10; i++) small.push(10 - i, i);
    const s = await small.finish(() => false);
    expect(all(s!)).toEqual(Array.from({ length: 10 }, (_, i) => (BigInt(i + 1) << 32n) | BigInt(9 - i)));

    const parent = mkdtempSync(join(tmpdir(), 'svc-runs-parent-'));
    const big = collectSlots('svc-runs-test-', 1000, parent);
    for (let i = 0; i < 200_000; i++) big.push((i * 2654435761) >>> 0, i);
    expect(readdirSync(parent)).toHaveLength(1); // the runs' folder, made when the first run spilled
    expect(await big.finish(() => true)).toBeNull();
    expect(readdirSync(parent)).toEqual([]);
  });
});
