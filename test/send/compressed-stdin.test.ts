// Compressed standard input told by its magic bytes: gzip and zstd (where the running Node's zlib has it)
// decompressed and sent; xz and bzip2 refused naming the command that decompresses them. And `"units": "minor"`
// amounts: zeros after the point are exact, any other fraction is a reject.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { toMinorUnits } from '../../src/map/amount.ts';
import { compressionOf } from '../../src/read/decompress.ts';
import { runCliHere, summaryOf } from '../helpers/cli.ts';
import { useSimulator } from '../helpers/simulator.ts';
import { csvOf, makeTx, range } from '../helpers/transactions.ts';

const sim = useSimulator({ seed: 54 }, 'reset');
const env = () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-zstd-'));
  return {
    SVC_BASE_URL: sim.url,
    SVC_LEDGER_PATH: join(dir, 'l.ndjson'),
    SVC_REJECTS_PATH: join(dir, 'r.ndjson'),
  };
};
const CSV = csvOf(range(30).map((i) => makeTx(i, 'z')));
const zstd = (zlib as { zstdCompressSync?: (b: Buffer) => Buffer }).zstdCompressSync;

describe('compressed standard input', () => {
  it('magic bytes: gzip, zstd, xz, bzip2; plain text is none (a CSV starting "BZh" is text)', () => {
    expect(compressionOf(zlib.gzipSync('a'))).toBe('gzip');
    expect(compressionOf(Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0]))).toBe('zstd');
    expect(compressionOf(Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00, 0]))).toBe('xz');
    expect(compressionOf(Buffer.from('BZh91AY&SY\u0000'))).toBe('bzip2');
    expect(compressionOf(Buffer.from('BZh,amount\n'))).toBeUndefined();
    expect(compressionOf(Buffer.from('transactionId,x\n'))).toBeUndefined();
  });

  it.runIf(zstd !== undefined)('zstd on stdin (Node 22.15+/24): decompressed and sent', async () => {
    const r = await runCliHere(['send', '--json', '-'], { env: env(), input: zstd!(Buffer.from(CSV)) });
    expect(r.code, r.stderr).toBe(0);
    expect(summaryOf(r)).toMatchObject({ read: 30, sent: 30 });
  });

  it('xz on stdin: refused, naming `xz -dc`; nothing sent', async () => {
    const xz = Buffer.concat([Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]), Buffer.alloc(64, 1)]);
    const r = await runCliHere(['send', '--json', '-'], { env: env(), input: xz });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      'stdin: xz-compressed, which this Node cannot decompress: decompress with `xz -dc`',
    );
    expect(sim.stats().transactions.distinct).toBe(0);
  });
});

describe('"units": "minor"', () => {
  const minor = { units: 'minor' as const, abs: false };
  it('zeros after the point are exact; another fraction is a reject, never rounded', () => {
    expect(toMinorUnits('927.00', 2, minor)).toBe('927');
    expect(toMinorUnits('927', 2, minor)).toBe('927');
    expect(() => toMinorUnits('927.50', 2, minor)).toThrow(
      'expected an integer number of minor units, got "927.50"',
    );
    expect(() => toMinorUnits('927.001', 2, minor)).toThrow('expected an integer number of minor units');
  });
});
