// vitest's setupFiles when SVC_TEST_CPU_PROBE names a file (test/vitest.config.ts): each test file's CPU, read from
// /proc/self/stat before its first test and after its last, appended to that file as one tab-separated line: CPU
// seconds in all, of the worker itself, of the child processes it waited for (the CLI, npm, a PostgreSQL of its
// own), wall seconds, the file. Linux only; docs/testing.md ("Where the time goes").
// @example SVC_TEST_CPU_PROBE=$PWD/cpu.tsv make test; sort -rn cpu.tsv | head
import { appendFileSync, readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { ROOT } from './cli.ts';

/** [own, children] CPU seconds of this process: utime + stime, cutime + cstime (fields 14-17 of /proc/self/stat). */
function cpu(): [number, number] {
  const f = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ').map(Number);
  return [((f[11] ?? 0) + (f[12] ?? 0)) / 100, ((f[13] ?? 0) + (f[14] ?? 0)) / 100];
}

let start: [number, number] = [0, 0];
let wall = 0;
beforeAll(() => {
  start = cpu();
  wall = performance.now();
});
afterAll(() => {
  const [own, children] = cpu();
  const o = own - start[0];
  const c = children - start[1];
  const file = relative(ROOT, expect.getState().testPath ?? '?');
  const row = [o + c, o, c, (performance.now() - wall) / 1000].map((n) => n.toFixed(2));
  appendFileSync(process.env.SVC_TEST_CPU_PROBE as string, `${row.join('\t')}\t${file}\n`);
});
