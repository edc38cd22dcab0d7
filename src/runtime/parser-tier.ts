// undici's HTTP parser is llhttp compiled to WebAssembly, instantiated once per process at the first connection. V8
// runs it in its baseline compiler (Liftoff) and recompiles its main function with its optimizing one (TurboFan)
// once a budget of executed bytes is spent: with V8's budget, after the first one or two answers. That compile is
// ~100 ms of a helper thread's CPU and ~40 MB of its memory (`--trace-wasm-compilation-times`), as much as the rest of
// a short command (a 50-row send: docs/performance.md). So the instance is made under a budget a hundred times V8's: a
// run of up to ~100 requests never pays for the compile, a longer one pays it as before, after 100–200 answers. Until
// then each answer is parsed by the baseline parser, ~27 µs slower a request at concurrency 32 (docs/performance.md,
// where keeping it there for good was tried and not kept): a few ms over those answers.
//
// The budget is a V8 flag, read when the instance is made, and V8 stamps a code cache with a hash of its flags (it
// refuses one stamped under other flags: src/runtime/heap-growth.ts). So the flag is set only from just before the first
// request until the first connection is made (the Agent's `connect` or `connectionError`), and then put back to V8's
// own value: modules loaded before or after (Node's own, ours) keep their caches.
import { setFlagsFromString } from 'node:v8';

/** V8's own budget, by V8 version (major.minor): Node 22 (12.4) and Node 24 (13.6). Elsewhere nothing is changed. */
export const V8_TIERING_BUDGET: Readonly<Record<string, number>> = { '12.4': 13_000_000, '13.6': 13_000_000 };

/** How many times V8's budget the parser's instance is made under. */
export const BUDGET_FACTOR = 100;

const FLAG = 'wasm-tiering-budget';

/** What can tell when the first connection is made: an undici Agent (its events). */
export interface ConnectionEvents {
  once(event: 'connect' | 'connectionError', listener: () => void): unknown;
  off(event: 'connect' | 'connectionError', listener: () => void): unknown;
}

let settled = false;
/** Puts V8's budget back while it is raised (the first connection not made yet), else nothing. */
let putBack: () => void = () => {};

/** V8's budget for this Node, or undefined when it is not known here or Node was started with its own. */
export function ownBudget(
  v8Version: string = process.versions.v8,
  execArgv: readonly string[] = process.execArgv,
): number | undefined {
  if (execArgv.some((a) => a.replace(/_/g, '-').startsWith(`--${FLAG}`))) return undefined;
  const [major, minor] = v8Version.split('.');
  return V8_TIERING_BUDGET[`${major}.${minor}`];
}

/**
 * Raises the budget until the first connection of `agent` is made, once per process (the parser's instance is the
 * process's); returns the function that puts it back (called by the agent's first `connect` or `connectionError`,
 * and safe to call again).
 * @example const back = holdParserTierUp(agent); // … the first request connects: V8's budget is back
 */
export function holdParserTierUp(agent: ConnectionEvents): () => void {
  const own = ownBudget();
  if (settled || own === undefined) return () => {};
  settled = true;
  setFlagsFromString(`--${FLAG}=${own * BUDGET_FACTOR}`);
  let held = true;
  const back = (): void => {
    if (!held) return;
    held = false;
    agent.off('connect', back);
    agent.off('connectionError', back);
    setFlagsFromString(`--${FLAG}=${own}`);
  };
  putBack = back;
  agent.once('connect', back);
  agent.once('connectionError', back);
  return back;
}

/**
 * V8's budget back, if a first connection is still awaited: for a code cache made now (packaging/app-loader.ts, at
 * exit), which V8 stamps with the flags as they are.
 * @example parserBudgetBack(); writeFileSync(file, script.createCachedData())
 */
export function parserBudgetBack(): void {
  putBack();
}
