// Seeded, order-free randomness for the simulator: string hashes, keyed uniform draws and UUIDs.

/**
 * FNV-1a 32-bit hash of a string's UTF-16 code units (equal to its bytes for ASCII ids).
 * @example fnv1a('t-1') % 10 === 0 // decides whether transaction t-1 earns a redemption
 */
export function fnv1a(text: string, basis = 0x811c9dc5): number {
  let h = basis >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** Avalanche mixer (the murmur3 finaliser) for combining integers into a well-spread 32-bit value. */
export function mix32(x: number): number {
  let h = x >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b) >>> 0;
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35) >>> 0;
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * A uniform draw in [0, 1) that depends only on its inputs, never on call order.
 * @example draw(1, 'fail', 'batch-key', 2) // same value every run for seed 1
 */
export function draw(seed: number, salt: string, key: string, n = 0): number {
  const h = mix32(fnv1a(key, fnv1a(salt, mix32(seed))) ^ mix32(n + 0x9e3779b9));
  return h / 0x1_0000_0000;
}

/**
 * A seeded sequence of UUIDs (version-4 layout) and integers: deterministic for a seed and a call order.
 * @example const ids = createIdSource(1); ids.uuid() // same first UUID for every simulator with seed 1
 */
export interface IdSource {
  uuid(): string;
  /** Uniform in [0, 1). */
  next(): number;
}

export function createIdSource(seed: number, salt = 'ids'): IdSource {
  let counter = 0;
  const base = fnv1a(salt, mix32(seed));
  const word = (): number => mix32(base ^ mix32(++counter * 0x9e3779b1));
  const hex8 = (n: number): string => n.toString(16).padStart(8, '0');
  return {
    uuid() {
      const a = hex8(word());
      const b = hex8(word());
      const c = hex8(word());
      const d = hex8(word());
      const variant = ((Number.parseInt(c[0] ?? '0', 16) & 0x3) | 0x8).toString(16);
      return `${a}-${b.slice(0, 4)}-4${b.slice(5, 8)}-${variant}${c.slice(1, 4)}-${c.slice(4)}${d}`;
    },
    next() {
      return word() / 0x1_0000_0000;
    },
  };
}

/**
 * A small seeded PRNG (mulberry32) for building fixture data in a fixed order.
 * @example const r = createPrng(7); r() // a number in [0, 1)
 */
export type Prng = () => number;

export function createPrng(seed: number): Prng {
  let a = mix32(seed ^ 0x6d2b79f5);
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 0x1_0000_0000;
  };
}
