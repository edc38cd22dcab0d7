// vitest's setupFiles: each worker keeps what Node compiled of the test files and the sources they import (their types
// stripped, then compiled) in node_modules/.cache/svc-ingest-vitest-compile, and finds it there on the next file and
// the next run: four workers otherwise strip and compile the same ~400 modules each, every run (docs/testing.md).
// Written after each file, so that the workers of a fresh clone find what another has compiled before them.
// The CLI's own runs keep theirs elsewhere (cli.ts: compileCacheEnv); nothing here reaches a child process.
import module from 'node:module';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { ROOT } from './cli.ts';

module.enableCompileCache(join(ROOT, 'node_modules/.cache/svc-ingest-vitest-compile'));
afterAll(() => module.flushCompileCache());
