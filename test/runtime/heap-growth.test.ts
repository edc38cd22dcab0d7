// The old generation's limit the CLI sets at run time (src/runtime/heap-growth.ts); its effect on a real send is held by
// test/send/send-cli.test.ts (V8's own trace of its collections), and the code cache a send writes with the flag put
// back by test/install/package.test.ts. And the launcher's own V8 flags leave the code caches valid: V8 refuses a
// cache made under flags that enter its hash, so a hashed flag there costs every start Node's and our code caches.
import { execFileSync } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { launcherHeapFlags } from '../../packaging/heap-flags.ts';
import { HEAP_GROWING_FLAG, holdOldGeneration, startFlagsBack } from '../../src/runtime/heap-growth.ts';
import { ROOT } from '../helpers/cli.ts';

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

describe("the launcher's V8 flags", () => {
  /** Whether a code cache V8 made with no flag is refused by a Node started with `flags`. */
  const refusedUnder = (flags: string[], file: string): boolean => {
    const script = `const vm = require('node:vm'), fs = require('node:fs');
const src = 'function f() { return 1 } f()';
if (process.argv[1] === 'make') fs.writeFileSync(${JSON.stringify(file)}, new vm.Script(src).createCachedData());
else process.stdout.write(String(new vm.Script(src, { cachedData: fs.readFileSync(${JSON.stringify(file)}) }).cachedDataRejected));`;
    execFileSync(process.execPath, ['-e', script, 'make']);
    return execFileSync(process.execPath, [...flags, '-e', script, 'take'], { encoding: 'utf8' }) === 'true';
  };

  it('leave a code cache made without them valid (a hashed flag would not: checked with the growing limit)', async () => {
    const file = join(await mkdtemp(join(tmpdir(), 'svc-v8-hash-')), 'cache.bin');
    expect(refusedUnder([], file)).toBe(false);
    expect(refusedUnder(launcherHeapFlags(ROOT), file)).toBe(false);
    expect(refusedUnder(launcherHeapFlags(ROOT, 'small'), file)).toBe(false);
    expect(refusedUnder([HEAP_GROWING_FLAG], file)).toBe(true);
  });
});
