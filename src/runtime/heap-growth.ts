// V8's old generation held to twice what survived its last full collection (V8 lets it grow up to four times): a
// send's records wait for their answers long enough to be promoted, and that garbage piles up between collections
// (~20 MB more peak RSS at concurrency 32 on 1M rows without it: docs/performance.md).
// Set at run time, where a long run's records start (a send, a backfill worker: CliIo.holdHeap), and not as
// `--heap-growing-percent=100` on Node's command line: V8 stamps a code cache with a hash of its flags, and refuses one
// stamped under other flags, so that flag made Node refuse the code cache built into it for its own modules and
// compile each one it loads (undici, http, streams): ~30–40 ms more CPU for each start of a short command. Set once the
// run's modules are loaded, it costs none of that; V8 reads the limit at each collection, so it holds from there on.
// A cache written later (packaging/app-loader.ts, at exit) is made with the flag put back (startFlagsBack), as the
// next start reads it.
import { setFlagsFromString } from 'node:v8';

export const HEAP_GROWING_FLAG = '--heap-growing-percent=100';

/**
 * Holds the old generation to twice its live size, unless Node was started with its own `--heap-growing-percent`
 * (someone measuring). True when it set it.
 * @example holdOldGeneration() // true; V8's next full collections set their limit at twice the live set
 */
export function holdOldGeneration(execArgv: readonly string[] = process.execArgv): boolean {
  if (givenOnStart(execArgv)) return false;
  setFlagsFromString(HEAP_GROWING_FLAG);
  return true;
}

/** Whether Node was started with its own `--heap-growing-percent`. */
function givenOnStart(execArgv: readonly string[]): boolean {
  return execArgv.some((a) => /^--heap[-_]growing[-_]percent\b/.test(a));
}

/**
 * Puts the flag back as Node started (V8's default), for a code cache made now: call it last, the heap's limit
 * goes back to V8's own. Nothing when Node was started with its own.
 * @example startFlagsBack(); writeFileSync(file, script.createCachedData())
 */
export function startFlagsBack(execArgv: readonly string[] = process.execArgv): void {
  if (!givenOnStart(execArgv)) setFlagsFromString('--heap-growing-percent=0');
}
