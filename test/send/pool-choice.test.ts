// Where a run prepares its input when `prepare.workers` is auto: the pool for a dry run, and for a send at high
// concurrency only on a machine with cores to spare (on 2 cores the send prepares inline).

import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config/index.ts';
import {
  BUSY_SEND_CONCURRENCY,
  choosePool,
  SEND_POOL_MIN_CORES,
  WORKER_MIN_CONCURRENCY,
} from '../../src/prepare/choose.ts';
import { BUSY_SLICE_BYTES, readInput } from '../../src/read/open.ts';
import type { ReadItem } from '../../src/read/types.ts';

/** The table's prepare.* defaults: workers auto, threads absent, chunkBytes. */
const PREPARE = defaultConfig().prepare;
const auto = PREPARE;

describe('choosePool (auto)', () => {
  it('sends at high concurrency on a 2-core machine inline, with more cores on the pool', () => {
    const run = { dryRun: false, concurrency: 32 };
    expect(choosePool(auto, run, 2).use).toBe('off');
    expect(choosePool(auto, run, SEND_POOL_MIN_CORES)).toEqual({
      use: 'large',
      threads: 1,
      chunkBytes: PREPARE.chunkBytes,
      sliceBytes: BUSY_SLICE_BYTES,
    });
    expect(choosePool(auto, { dryRun: false, concurrency: WORKER_MIN_CONCURRENCY - 1 }, 8).use).toBe('off');
  });

  it('a dry run prepares inline on 2 cores and on the pool with more; on/off decide alone', () => {
    expect(choosePool(auto, { dryRun: true, concurrency: 0 }, 2).use).toBe('off');
    expect(choosePool(auto, { dryRun: true, concurrency: 0 }, SEND_POOL_MIN_CORES).use).toBe('large');
    expect(choosePool({ ...PREPARE, workers: 'on' }, { dryRun: false, concurrency: 32 }, 2).use).toBe('on');
    expect(choosePool({ ...PREPARE, workers: 'off' }, { dryRun: true, concurrency: 0 }, 8).use).toBe('off');
  });

  it('a busy send hands its reader larger slices; a send at concurrency 8 and a dry run keep the default', () => {
    expect(choosePool(auto, { dryRun: false, concurrency: BUSY_SEND_CONCURRENCY }, 2).sliceBytes).toBe(
      BUSY_SLICE_BYTES,
    );
    expect(choosePool(auto, { dryRun: false, concurrency: 8 }, 2).sliceBytes).toBeUndefined();
    expect(choosePool(auto, { dryRun: true, concurrency: 32 }, 2).sliceBytes).toBeUndefined();
  });

  it('the slice size changes nothing a reader yields: records, lines and rejects are the same', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-slices-'));
    const path = join(dir, 'in.csv');
    const rows = ['id,note'];
    for (let i = 0; i < 3000; i++)
      rows.push(
        i % 97 === 0 ? `t${i},"two\nlines, quoted"` : i % 89 === 0 ? `t${i},ragged,row` : `t${i},n${i}`,
      );
    await writeFile(path, `${rows.join('\n')}\n`);
    const read = async (sliceBytes?: number) => {
      const out: ReadItem[] = [];
      const spec = { path, format: 'csv' as const, gzip: false };
      for await (const items of readInput(spec, sliceBytes === undefined ? {} : { sliceBytes }))
        out.push(...items);
      return out;
    };
    const small = await read();
    expect(small.filter((x) => x.kind === 'record')).toHaveLength(3000 - 33);
    expect(await read(BUSY_SLICE_BYTES)).toEqual(small);
    expect(await read(1000)).toEqual(small);
  });
});
