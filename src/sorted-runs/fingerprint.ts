// 64-bit fingerprints of ids: two 32-bit hashes (FNV-1a and a murmur-like mix), never both zero.

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
