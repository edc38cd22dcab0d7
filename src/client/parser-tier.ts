// undici's HTTP parser is llhttp compiled to WebAssembly, instantiated once per process at the first connection. V8
// runs it in its baseline compiler (Liftoff) and, once a budget of executed bytes is spent (after the first two
// answers), recompiles its main function with its optimizing one (TurboFan): ~110 ms of a helper thread's CPU and
// ~40 MB of its memory (`--trace-wasm-compilation-times`), as much as the rest of a 50-row send, and ~10 MB more peak
// RSS for a long run (the allocator keeps part of the compile's memory). The optimized parser buys nothing that
// shows: 5,000 requests cost the same CPU with the parser kept in Liftoff (docs/performance.md). So the instance
// is made with V8's tier-up limited to a function index no module has (`--wasm-tier-up-filter`): the parser stays in
// the baseline compiler for the life of the process.
//
// The filter is read as V8 compiles each of the module's functions, on its first call: so it is set from just before
// the client's first request until that request has its answer (or its error), the parse of which compiles the
// parser's functions; a filter put back before that (at the connection) left them free to tier up. The flag is V8's,
// and V8 stamps a code cache with a hash of its flags (it refuses one stamped under other flags: src/heap-growth.ts),
// so it is put back to V8's own value then: modules loaded before or after (Node's own, ours) keep their caches. A
// module that loads while the first request is out pays (none does on a command's path: ky and Node's fetch classes
// are loaded before it, `node:tls` too for an `https` service).
import { setFlagsFromString } from 'node:v8';

const FLAG = 'wasm-tier-up-filter';

/** V8's own value of the flag (every function may tier up), by V8 version: Node 22 (12.4) and Node 24 (13.6). */
export const V8_TIER_UP_FILTER: Readonly<Record<string, number>> = { '12.4': -1, '13.6': -1 };

/** A function index no module has: nothing of the parser's module tiers up. */
export const NO_FUNCTION = 1 << 30;

let settled = false;
/** Puts V8's value back while the filter is set (the first request not settled yet), else nothing. */
let putBack: () => void = () => {};

/** V8's own value for this Node, or undefined when it is not known here or Node was started with its own. */
export function ownFilter(
  v8Version: string = process.versions.v8,
  execArgv: readonly string[] = process.execArgv,
): number | undefined {
  if (execArgv.some((a) => a.replace(/_/g, '-').startsWith(`--${FLAG}`))) return undefined;
  const [major, minor] = v8Version.split('.');
  return V8_TIER_UP_FILTER[`${major}.${minor}`];
}

/**
 * `fetch` whose first call, the process's first through any client, is made with the filter set; V8's value is put
 * back once that call settles. Later calls go straight through.
 * @example ky.create({ fetch: parserTierHeld(dispatcherFetch(agent)) })
 */
export function parserTierHeld(fetchImpl: typeof fetch): typeof fetch {
  let first = true;
  return (input, init) => {
    if (!first || settled) return fetchImpl(input, init);
    first = false;
    const back = holdParserTierUp();
    try {
      return fetchImpl(input, init).finally(back);
    } catch (err) {
      back();
      throw err;
    }
  };
}

/** Sets the filter, once per process (the parser's instance is the process's); returns what puts V8's value back. */
export function holdParserTierUp(): () => void {
  const own = ownFilter();
  if (settled || own === undefined) return () => {};
  settled = true;
  setFlagsFromString(`--${FLAG}=${NO_FUNCTION}`);
  let held = true;
  const back = (): void => {
    if (!held) return;
    held = false;
    setFlagsFromString(`--${FLAG}=${own}`);
  };
  putBack = back;
  return back;
}

/**
 * V8's value back, if the first request has not settled yet: for a code cache made now (packaging/app-loader.ts, at
 * exit), which V8 stamps with the flags as they are.
 * @example parserFlagBack(); writeFileSync(file, script.createCachedData())
 */
export function parserFlagBack(): void {
  putBack();
}
