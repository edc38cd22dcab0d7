// Where a run prepares its input when `prepare.workers` is auto: the pool for a dry run, and for a send at high
// concurrency only on a machine with cores to spare (on 2 cores the send prepares inline).
import { describe, expect, it } from 'vitest';
import { choosePool, SEND_POOL_MIN_CORES, WORKER_MIN_CONCURRENCY } from '../../src/prepare/choose.ts';

const auto = { workers: 'auto' as const };

describe('choosePool (auto)', () => {
  it('sends at high concurrency on a 2-core machine inline, with more cores on the pool', () => {
    const run = { dryRun: false, concurrency: 32 };
    expect(choosePool(auto, run, 2).use).toBe('off');
    expect(choosePool(auto, run, SEND_POOL_MIN_CORES)).toEqual({ use: 'large', threads: 1 });
    expect(choosePool(auto, { dryRun: false, concurrency: WORKER_MIN_CONCURRENCY - 1 }, 8).use).toBe('off');
  });

  it('keeps the pool for a dry run on any machine, and on/off decide alone', () => {
    expect(choosePool(auto, { dryRun: true, concurrency: 0 }, 2).use).toBe('large');
    expect(choosePool({ workers: 'on' }, { dryRun: false, concurrency: 32 }, 2).use).toBe('on');
    expect(choosePool({ workers: 'off' }, { dryRun: true, concurrency: 0 }, 8).use).toBe('off');
  });
});
