// vitest's setupFiles: each worker keeps what Node compiled of the test files and the sources they import (their types
// stripped, then compiled) in node_modules/.cache/svc-ingest-vitest-compile, and finds it there on the next file and
// the next run: four workers otherwise strip and compile the same ~400 modules each, every run (docs/testing.md).
// Written after each file, so that the workers of a fresh clone find what another has compiled before them.
// The CLI's own runs keep theirs elsewhere (cli.ts: compileCacheEnv); nothing here reaches a child process. During a
// run the folder is a copy in the run's memory folder, saved back when the run ends (compile-cache-run.ts).
import module from 'node:module';
import { afterAll } from 'vitest';
import { RUN_CACHE_ENV, WORKER_COMPILE_CACHE } from './compile-cache-run.ts';

module.enableCompileCache(process.env[RUN_CACHE_ENV] ?? WORKER_COMPILE_CACHE);
afterAll(() => module.flushCompileCache());
