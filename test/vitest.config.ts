import { defineConfig } from 'vitest/config';

// Test files run in parallel, several per core: most of the suite's time is spent waiting (on the CLI's child
// processes, the simulator's latency, a real PostgreSQL, timers), not computing, so one file per core (vitest's
// default: cores - 1, one worker on two cores) leaves the cores idle half the time. Measured on 2 cores
// (docs/testing.md): 4 workers. VITEST_MAX_WORKERS=N overrides it (vitest reads it), e.g. 1 to debug one file.
// Every file under test/ named *.test.ts is picked up; the longest run first (vitest keeps their durations, and
// on a fresh clone starts the largest files first).
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/bench/**', 'node_modules/**'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // One PostgreSQL server for the run, shared by the test files (test/helpers/postgres-server.ts).
    globalSetup: ['test/helpers/postgres-server.ts'],
    maxWorkers: 4,
  },
});
