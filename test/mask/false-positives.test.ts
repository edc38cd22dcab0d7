// The card-number rule measured the other way: valid values refused as card numbers. A seeded corpus of
// 1,000,000 values of each kind real exports carry (UUIDs, Stripe-style ids, 32-character hex ids, ARNs, merchant ids, approval codes,
// timestamps, phone numbers, postal codes, declared 16-digit ids) run through the validator: zero refused. Random
// undeclared 13-19-digit numbers: refused at the brands' share of the number space × 1/10 (reported).
// `make bench BENCH_ARGS="--only pan"` runs the same corpus at 10,000,000 a kind.
import { describe, expect, it } from 'vitest';
import { report } from '../faults/helpers.ts';
import { KINDS, RANDOM_NUMBER, refusals, rng } from '../helpers/false-positives.ts';
import { isBrandCard, luhnDigit } from '../helpers/pans.ts';

const N = 1_000_000;

describe('false positives: valid values the rule must not refuse', () => {
  for (const kind of KINDS) {
    it(`${kind.name} (${kind.field}${kind.own ? ', declared own' : ''}): none of ${N.toLocaleString('en')} refused`, () => {
      const t0 = performance.now();
      const cpu0 = process.cpuUsage();
      const r = refusals(kind, N);
      const ms = Math.round(performance.now() - t0);
      const cpuMs = Math.round(process.cpuUsage(cpu0).user / 1000);
      report(`pan false positives: ${kind.name}`, { values: N, refused: r.refused, ms, cpuMs });
      expect(r.examples).toEqual([]);
      expect(r.refused).toBe(0);
      // A pure-function loop (the values generated into one buffer, test/helpers/false-positives.ts): under a
      // second of CPU a kind; the bound is on CPU time, as the machine may be shared.
      expect(cpuMs).toBeLessThan(5_000);
    });
  }

  it("random undeclared 13-19-digit numbers: refused at the brands' share × 1/10, not 1/10", () => {
    const r = refusals(RANDOM_NUMBER, N);
    // The brands' share of the same space, by the independent patterns of test/helpers/pans.ts: the share of
    // numbers whose prefix and length are a brand's, over 200,000 of the same numbers with their check digit made valid.
    const next = rng(7);
    let brand = 0;
    const M = 200_000;
    for (let i = 0; i < M; i++) {
      const v = RANDOM_NUMBER.make(next);
      // Any check digit: the share of the space a brand covers does not depend on it. Of the ten last digits,
      // the one that passes Luhn (luhnDigit) is the one a brand's number can end in.
      const body = v.slice(0, -1);
      if (isBrandCard(body + luhnDigit(body))) brand++;
    }
    const rate = r.refused / N;
    const share = brand / M;
    report('pan random 13-19-digit numbers', {
      values: N,
      refused: r.refused,
      rate: Number(rate.toFixed(5)),
      brandShare: Number(share.toFixed(4)),
      expected: Number((share / 10).toFixed(5)),
    });
    expect(rate).toBeGreaterThan((share / 10) * 0.9);
    expect(rate).toBeLessThan((share / 10) * 1.1);
    expect(rate).toBeLessThan(0.05);
  });
});
