// The old generation's limit the CLI sets at run time (src/heap-growth.ts); its effect on a real send is held by
// test/send/send-cli.test.ts (V8's own trace of its collections), and the code cache a send writes with the flag put
// back by test/install/package.test.ts.
import { describe, expect, it } from 'vitest';
import { HEAP_GROWING_FLAG, holdOldGeneration, startFlagsBack } from '../../src/heap-growth.ts';

describe('holdOldGeneration', () => {
  it('sets --heap-growing-percent=100 unless Node was started with its own', () => {
    expect(HEAP_GROWING_FLAG).toBe('--heap-growing-percent=100');
    expect(holdOldGeneration(['--heap-growing-percent=300'])).toBe(false);
    expect(holdOldGeneration(['--max-semi-space-size=16', '--heap_growing_percent=50'])).toBe(false);
    expect(holdOldGeneration(['--min-semi-space-size=8', '--max-semi-space-size=16'])).toBe(true);
    expect(holdOldGeneration([])).toBe(true);
    // This test's process as it was (V8's default).
    startFlagsBack([]);
  });
});
