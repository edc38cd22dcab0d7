// Masking keeps what the rule allows and never more: a seeded fuzz of 100,000 digit contexts (test/helpers/
// digit-fuzz.ts) leaves no 12 digits of a card number in a row; `make bench BENCH_ARGS="--only pan"` runs 1,000,000.
import { describe, expect, it } from 'vitest';
import { holdsCardNumberId, maskCardNumbers, maskPan } from '../../src/mask/index.ts';
import { report } from '../faults/helpers.ts';
import { digitFuzz, piecesLeft } from '../helpers/digit-fuzz.ts';

describe('masking in digit contexts', () => {
  it('100,000 seeded cases: no 12 digits of any card number in a row in the output', () => {
    const N = 100_000;
    const cpu0 = process.cpuUsage();
    let leaks = 0;
    const examples: string[] = [];
    for (const c of digitFuzz(N)) {
      const out = maskCardNumbers(c.text);
      if (piecesLeft(out, c.cards).length > 0) {
        leaks++;
        if (examples.length < 5) examples.push(`${JSON.stringify(c.text)} → ${JSON.stringify(out)}`);
      }
    }
    const cpuMs = Math.round(process.cpuUsage(cpu0).user / 1000);
    report('pan digit-context fuzz', { cases: N, leaks, cpuMs });
    expect(examples).toEqual([]);
    expect(leaks).toBe(0);
    expect(cpuMs).toBeLessThan(10_000);
  });

  it('an 18/19-digit card number inside a longer run is masked whole, however other matches overlap it', () => {
    const out = maskCardNumbers('REF 648061-4862451303434548245 48666');
    expect(out).toBe('REF 648061-486245*********8245 48666');
    expect(piecesLeft(out, ['4862451303434548245'])).toEqual([]);
  });

  it('widths: first 6 + last 4 of every length; a card number zero-padded to a fixed width is still one', () => {
    expect(maskPan('4222222222222')).toBe('422222***2222');
    expect(maskPan('378282246310005')).toBe('378282*****0005');
    expect(holdsCardNumberId(`0000000${'4539578763621486'}`, 23)).toBe(true);
    expect(holdsCardNumberId('4.539578763621486E+15')).toBe(true);
    expect(holdsCardNumberId('4.53957876362E+15')).toBe(true);
    expect(holdsCardNumberId('1.5E+15')).toBe(false);
  });
});
