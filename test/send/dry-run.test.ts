// The dry run's sink: nothing sent, every batch handed over (or abandoned at a reject cap) counted as one it
// would send.
import { describe, expect, it } from 'vitest';
import { createDryRunSink } from '../../src/send/dry-run.ts';

const batch = (id: string, n: number) => ({
  id,
  items: Array.from({ length: n }, (_, i) => ({
    id: `${id}-${i}`,
    json: '{}',
    source: 'in.csv',
    line: i + 2,
  })),
});

describe('dry-run sink', () => {
  it('counts batches and their records, sends nothing, has nothing in flight', async () => {
    const counts = { batches: 0, batched: 0 };
    const sink = createDryRunSink(counts);
    await sink.submit(batch('a', 50));
    await sink.abandon(batch('b', 7), 'not sent: stopped, too many rejects');
    sink.stop();
    await sink.drain();
    expect(counts).toEqual({ batches: 2, batched: 57 });
    expect(sink.inFlight).toBe(0);
  });
});
