// The outage breaker as a pure state machine: a clock in the test's hand, no server.
import { describe, expect, it } from 'vitest';
import { createBreaker } from '../../src/send/breaker.ts';
import type { FailureClass } from '../../src/send/classify.ts';

const down: FailureClass = { retry: true, httpStatus: 503, message: 'HTTP 503' };
const refused: FailureClass = { retry: false, httpStatus: 400, message: 'HTTP 400' };

function clocked(threshold = 3, outageMaxMs = 10_000) {
  let t = 1000;
  const b = createBreaker({
    threshold,
    settings: { outageMaxMs },
    probe: { baseDelayMs: 100, maxDelayMs: 1000 },
    now: () => t,
  });
  return { b, at: (ms: number) => (t = ms), later: (ms: number) => (t += ms) };
}

describe('outage breaker (pure)', () => {
  it('opens after `threshold` batches fail in a row, and an ack closes it', () => {
    const { b, later } = clocked(3);
    expect([b.open, b.quiet]).toEqual([false, true]);
    b.onFail(down, 1000);
    expect(b.settle(false, false)).toBeNull();
    expect(b.quiet).toBe(false);
    later(10);
    expect(b.settle(false, false)).toBeNull();
    expect(b.settle(false, false)).toBe('opened');
    expect(b.open).toBe(true);
    expect(b.settle(false, false)).toBeNull(); // already open
    b.onAck();
    expect(b.settle(true, false)).toBe('closed');
    expect([b.open, b.quiet]).toEqual([false, true]);
    expect(b.settle(true, false)).toBeNull();
  });

  it('does not open while the run stops for another reason', () => {
    const { b } = clocked(1);
    expect(b.settle(false, true)).toBeNull();
    expect(b.open).toBe(false);
  });

  it('probe waits double from the base, capped, and restart at the base when it opens again', () => {
    const { b } = clocked(1, 1_000_000);
    b.settle(false, false);
    const waits: number[] = [];
    for (let i = 0; i < 6; i++) {
      waits.push(b.nextWait());
      b.probed();
    }
    expect(waits).toEqual([100, 200, 400, 800, 1000, 1000]);
    b.settle(true, false);
    b.probed(); // closed: no change
    b.settle(false, false);
    expect(b.nextWait()).toBe(100);
  });

  it('counts the outage from the first retryable failure since the last ack, and says when it is spent', () => {
    const { b, at } = clocked(3, 10_000);
    expect(b.spent(1_000_000)).toBe(false); // not failing
    expect(b.retryBudget()).toBe(10_000);
    at(5000);
    b.onFail(refused, 4000); // a 4xx does not start the clock
    expect(b.spent(1_000_000)).toBe(false);
    b.onFail(down, 4500);
    at(12_000);
    expect(b.failing()).toEqual({ ms: 7500, last: 'HTTP 503' });
    expect(b.retryBudget()).toBe(2500);
    expect(b.untilLimit()).toBe(2500);
    expect(b.spent(2000)).toBe(false);
    expect(b.spent(3000)).toBe(true);
    b.onAck();
    expect(b.spent(1_000_000)).toBe(false);
    expect(b.lastAckAt).toBe(12_000);
    // A failure that started before the last ack counts from the ack.
    b.onFail(down, 11_000);
    at(13_000);
    expect(b.failing().ms).toBe(1000);
  });

  it('batches refused without a retryable failure start the clock when the breaker opens', () => {
    const { b, at } = clocked(2, 10_000);
    b.onFail(refused, 1000);
    b.settle(false, false);
    at(3000);
    expect(b.settle(false, false)).toBe('opened');
    at(14_000);
    expect(b.spent(0)).toBe(true);
    expect(b.failing().ms).toBe(11_000);
  });
});
