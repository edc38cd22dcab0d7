import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSpillingFingerprintSet } from '../../src/sorted-runs/fingerprint-set.ts';

const tmp = () => mkdtemp(join(tmpdir(), 'svc-seen-test-'));
/** Files under a folder, one level of sub-folders deep (the set makes its own sub-folder). */
const filesUnder = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? readdirSync(path).map((f) => join(path, f)) : [path];
  });

describe('spilling fingerprint set (within-run duplicate check in flat memory)', () => {
  it('spills sorted runs to its folder, finds every id again, and close() removes the runs', async () => {
    const dir = await tmp();
    const set = createSpillingFingerprintSet({ memoryIds: 1000, dir });
    const N = 50_000;
    let firsts = 0;
    for (let i = 0; i < N; i++) if (set.add(`tx-${i}`)) firsts++;
    expect(firsts).toBe(N);
    expect(set.size).toBe(N);

    const runs = filesUnder(dir);
    expect(runs.length).toBeGreaterThan(0);
    for (const f of runs) expect(statSync(f).mode & 0o777).toBe(0o600);

    // Again, in another order (a stride through all of them): every one is already there.
    let again = 0;
    for (let k = 0; k < N; k++) if (set.add(`tx-${(k * 7919) % N}`)) again++;
    let has = 0;
    for (let i = N - 1; i >= 0; i--) if (set.has(`tx-${i}`)) has++;
    expect([again, has]).toEqual([0, N]);

    let others = 0;
    for (let i = 0; i < N; i++) if (set.has(`other-${i}`)) others++;
    expect(others).toBe(0);
    expect(set.size).toBe(N);

    set.close?.();
    expect(filesUnder(dir)).toEqual([]);
    expect(() => set.has('tx-1')).toThrow();
  });

  it('merges runs in the background, answering from the inputs meanwhile, and keeps the runs few', async () => {
    const dir = await tmp();
    const set = createSpillingFingerprintSet({ memoryIds: 1000, dir });
    // Four spills (at the 1001st, 2001st … add): the fourth starts a merge of the four runs (a fifth file).
    for (let i = 0; i < 4001; i++) set.add(`m-${i}`);
    expect(filesUnder(dir)).toHaveLength(5);
    // Under way, every id is still found (in the inputs) and none is added twice.
    let again = 0;
    for (let i = 0; i < 4001; i++) if (set.add(`m-${i}`)) again++;
    expect(again).toBe(0);
    // The event loop's turns finish it: the merged run replaces its four inputs.
    for (let t = 0; t < 100 && filesUnder(dir).length > 1; t++) await new Promise((r) => setImmediate(r));
    expect(filesUnder(dir)).toHaveLength(1);
    let has = 0;
    for (let i = 0; i < 4001; i++) if (set.has(`m-${i}`)) has++;
    expect(has).toBe(4001);

    // A thread that never yields still merges (adds pay for steps): 400 spills leave tens of runs, not 400 …
    for (let i = 4001; i < 400_001; i++) set.add(`m-${i}`); // 400 spills
    expect(filesUnder(dir).length).toBeLessThanOrEqual(40);
    // … and the event loop's turns finish the merges due: 400 = 1·256 + 2·64 + 1·16 runs of 1000 → 4 runs.
    for (let t = 0; t < 5000 && filesUnder(dir).length > 4; t++) await new Promise((r) => setImmediate(r));
    expect(filesUnder(dir)).toHaveLength(4);
    let found = 0;
    for (let i = 0; i < 400_000; i += 7) if (set.has(`m-${i}`)) found++;
    let others = 0;
    for (let i = 0; i < 50_000; i++) if (set.has(`x-${i}`)) others++;
    expect([found, others]).toEqual([Math.ceil(400_000 / 7), 0]);
    set.close?.();
    expect(filesUnder(dir)).toEqual([]);
  });

  it('adds new ids after spilling, mixed with repeats', async () => {
    const dir = await tmp();
    const set = createSpillingFingerprintSet({ memoryIds: 500, dir });
    const results: boolean[] = [];
    for (let i = 0; i < 20_000; i++) {
      results.push(set.add(`a-${i}`));
      if (i % 3 === 0) results.push(set.add(`a-${Math.floor(i / 2)}`)); // an earlier id: false
    }
    expect(results.filter((r) => r)).toHaveLength(20_000);
    expect(set.size).toBe(20_000);
    set.close?.();
    expect(filesUnder(dir)).toEqual([]);
  });

  it('keeps everything in memory when its folder cannot be made (a path under a regular file)', async () => {
    const file = join(await tmp(), 'not-a-dir');
    await writeFile(file, 'x');
    const set = createSpillingFingerprintSet({ memoryIds: 1000, dir: join(file, 'sub') });
    const N = 20_000;
    let firsts = 0;
    for (let i = 0; i < N; i++) if (set.add(`tx-${i}`)) firsts++;
    let again = 0;
    for (let i = N - 1; i >= 0; i--) if (set.add(`tx-${i}`)) again++;
    let others = 0;
    for (let i = 0; i < N; i++) if (set.has(`other-${i}`)) others++;
    expect([firsts, again, others, set.size]).toEqual([N, 0, 0, N]);
    expect(existsSync(join(file, 'sub'))).toBe(false);
    set.close?.();
  });

  it('goes on in memory, answering from the runs already written, when its folder disappears', async () => {
    const dir = await tmp();
    const set = createSpillingFingerprintSet({ memoryIds: 1000, dir });
    for (let i = 0; i < 2500; i++) set.add(`tx-${i}`);
    for (const name of readdirSync(dir)) rmSync(join(dir, name), { recursive: true, force: true });
    let firsts = 0;
    for (let i = 2500; i < 10_000; i++) if (set.add(`tx-${i}`)) firsts++;
    let again = 0;
    for (let i = 0; i < 10_000; i++) if (set.add(`tx-${i}`)) again++;
    expect([firsts, again, set.size]).toEqual([7500, 0, 10_000]);
    set.close?.();
  });

  it('makes no folder while the ids fit in memory', async () => {
    const dir = await tmp();
    const set = createSpillingFingerprintSet({ memoryIds: 1000, dir });
    for (let i = 0; i < 1000; i++) set.add(`tx-${i}`);
    expect(readdirSync(dir)).toEqual([]);
    expect(set.add('tx-999')).toBe(false);
    set.close?.();
  });
});
