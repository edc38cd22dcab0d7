// 64-bit fingerprints of ids (two 32-bit hashes) and a compact open-addressing set of them (8 bytes an id).

/**
 * Two 32-bit hashes of a string, written to out[0] (high) and out[1] (low); never both zero.
 * @example const fp = new Uint32Array(2); fingerprint('t-1', fp)
 */
export function fingerprint(s: string, out: Uint32Array): void {
  let a = 0x811c9dc5;
  let b = 0x9747b28c ^ s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 13;
  }
  a ^= a >>> 16;
  a = Math.imul(a, 0x85ebca6b);
  a ^= a >>> 13;
  a = Math.imul(a, 0xc2b2ae35);
  a ^= a >>> 16;
  b ^= b >>> 15;
  b = Math.imul(b, 0x2c1b3c6d);
  b ^= b >>> 12;
  b = Math.imul(b, 0x297a2d39);
  b ^= b >>> 15;
  out[0] = a >>> 0;
  out[1] = (b | 1) >>> 0; // a zero pair marks an empty slot
}

/**
 * A set of ids kept as 64-bit fingerprints (8-10 bytes an id instead of ~80 for a Set of strings).
 * Two different ids share a fingerprint with probability about n²/2^65 over n ids (3e-6 for 10M).
 * @example const s = createFingerprintSet(); s.add('t-1'); s.has('t-1') // true
 */
export interface FingerprintSet {
  has(id: string): boolean;
  /** Adds the id; false if (its fingerprint) was already there. */
  add(id: string): boolean;
  readonly size: number;
}

export function createFingerprintSet(initialCapacity = 1 << 16): FingerprintSet {
  let cap = initialCapacity;
  let slots = new Uint32Array(cap * 2);
  let size = 0;
  const fp = new Uint32Array(2);
  // Slot of a fingerprint by multiply-shift on the high hash: any capacity, not only powers of two.
  const home = (hi: number, c: number) => Math.floor((hi / 4294967296) * c);
  const find = (hi: number, lo: number): number => {
    let i = home(hi, cap);
    for (;;) {
      const h = slots[2 * i] as number;
      const l = slots[2 * i + 1] as number;
      if (l === 0) return -1 - i;
      if (h === hi && l === lo) return i;
      if (++i === cap) i = 0;
    }
  };
  const grow = () => {
    const old = slots;
    const oldCap = cap;
    cap = Math.ceil(cap * 1.5);
    slots = new Uint32Array(cap * 2);
    for (let k = 0; k < oldCap; k++) {
      const lo = old[2 * k + 1] as number;
      if (lo === 0) continue;
      const hi = old[2 * k] as number;
      let i = home(hi, cap);
      while (slots[2 * i + 1] !== 0) if (++i === cap) i = 0;
      slots[2 * i] = hi;
      slots[2 * i + 1] = lo;
    }
  };
  return {
    has(id) {
      fingerprint(id, fp);
      return find(fp[0] as number, fp[1] as number) >= 0;
    },
    add(id) {
      fingerprint(id, fp);
      const hi = fp[0] as number;
      const lo = fp[1] as number;
      const at = find(hi, lo);
      if (at >= 0) return false;
      if (size + 1 > cap * 0.8) {
        grow();
        return this.add(id);
      }
      const i = -1 - at;
      slots[2 * i] = hi;
      slots[2 * i + 1] = lo;
      size++;
      return true;
    },
    get size() {
      return size;
    },
  };
}
