// undici's HTTP parser (WebAssembly) is instantiated under a raised tiering budget, so a short run never pays for
// V8's optimizing compile of it (src/runtime/parser-tier.ts); the flag is V8's, so it must be back to V8's own value
// once the first connection is made, or every module loaded after would lose its code cache.
import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ownBudget, V8_TIERING_BUDGET } from '../../src/runtime/parser-tier.ts';
import { BIN, CLONE_BIN, ROOT, startCli, summaryOf } from '../helpers/cli.ts';
import { useSimulator } from '../helpers/simulator.ts';
import { makeTx, ndjsonOf, range } from '../helpers/transactions.ts';

const run = promisify(execFile);
const sim = useSimulator({ seed: 5 });

/** A code cache made before, tried while the budget is raised and after the agent's first connection. */
const CACHE_WINDOW = `
import vm from 'node:vm';
import { EventEmitter } from 'node:events';
import { holdParserTierUp } from ${JSON.stringify(join(ROOT, 'src/runtime/parser-tier.ts'))};
const src = 'function f() { return 1 } f();';
const data = new vm.Script(src).createCachedData();
const rejected = () => new vm.Script(src, { cachedData: data }).cachedDataRejected;
const agent = new EventEmitter();
const before = rejected();
holdParserTierUp(agent);
const held = rejected();
agent.emit('connect');
console.log(JSON.stringify({ before, held, after: rejected() }));
`;

describe("undici's parser under a raised tiering budget", () => {
  it("knows V8's own budget for this Node, and leaves one given on the command line alone", async () => {
    const { stdout } = await run(process.execPath, ['--v8-options']);
    const own = /--wasm-tiering-budget=(\d+)/.exec(
      stdout.slice(stdout.indexOf('--wasm-tiering-budget (')),
    )?.[1];
    expect(ownBudget()).toBe(Number(own));
    expect(ownBudget('13.6.233.17', ['--wasm-tiering-budget=5'])).toBeUndefined();
    expect(ownBudget('99.1.0.0', [])).toBeUndefined();
    expect(Object.keys(V8_TIERING_BUDGET)).toContain(process.versions.v8.split('.').slice(0, 2).join('.'));
  });

  it("changes V8's flags (a code cache made before is refused) only until the first connection", async () => {
    // Without V8's in-process compilation cache, which would answer each compile of the same source itself.
    const { stdout } = await run(process.execPath, [
      '--no-compilation-cache',
      '--input-type=module',
      '-e',
      CACHE_WINDOW,
    ]);
    expect(JSON.parse(stdout)).toEqual({ before: false, held: true, after: false });
  });

  it('a 50-row send never has V8 optimize the parser (its own trace of wasm compiles)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-tier-'));
    const node = join(dir, 'traced-node');
    await writeFile(
      node,
      `#!/bin/sh\nexec '${process.execPath}' --trace-wasm-inlining --trace-wasm-compilation-times "$@"\n`,
      { mode: 0o755 },
    );
    const input = ndjsonOf(range(50).map((i) => makeTx(i, 'tier')));
    const env = {
      SVC_BASE_URL: sim.url,
      SVC_LEDGER_PATH: join(dir, 'ledger.ndjson'),
      SVC_REJECTS_PATH: join(dir, 'rejects.ndjson'),
      SVC_INGEST_NODE: node,
    };
    const send = () =>
      startCli(['send', '--json', '--no-resume', '--format', 'ndjson', '-'], { env, input }).done;
    // The sources (SVC_TEST_CLI=clone) under a compile cache still cold for these flags: Node strips their types
    // with a WebAssembly module of its own, which V8 does optimize, in its trace too. One run first fills the cache.
    if (BIN === CLONE_BIN) await send();
    const r = await send();
    expect(r.code, r.stderr).toBe(0);
    expect(summaryOf(r)).toMatchObject({ read: 50, sent: 50 });
    // V8 prints a line per function it compiles with TurboFan, and its inlining decisions as that compile starts.
    const optimized = `${r.stdout}\n${r.stderr}`
      .split('\n')
      .filter((l) => /using TurboFan|^\[function \d+: /.test(l));
    expect(optimized).toEqual([]);
  });
});
