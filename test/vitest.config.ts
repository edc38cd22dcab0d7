import { defineConfig } from 'vitest/config';
import { COVERAGE_FLOOR } from './helpers/coverage-floor.ts';
import WaitingAndWorking from './helpers/sequencer.ts';
import { ARTEFACT_RUNS, RUN_SETUP } from './helpers/tiers.ts';

// Test files run in parallel, several per core: most of the suite's time is spent waiting (on the CLI's child
// processes, the simulator's latency, a real PostgreSQL, timers), not computing, so one file per core (vitest's
// default: cores - 1, one worker on two cores) leaves the cores idle half the time. Measured on 2 cores: 4 workers
// keep both cores 95–100 % busy; 3 (139 s) leave them idle, 5 (141 s, 269 s of CPU against ~220–257 s with 4) stretch
// the waits and cost CPU in polls, and leave the tests timed between two events less margin (docs/testing.md).
// VITEST_MAX_WORKERS=N overrides it
// (vitest reads it), e.g. 1 to debug one file.
// Every file under test/ named *.test.ts is picked up; the longest run first (vitest keeps their durations, and
// on a fresh clone starts the largest files first).

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // test/dist/ (the single executable, the .deb, the .rpm and the image) and the shipped artefacts' runs
    // (test/helpers/tiers.ts): `make test-dist`.
    exclude: ['test/bench/**', 'test/dist/**', ...ARTEFACT_RUNS, 'node_modules/**'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // The worker processes run file after file, each keeping what it has loaded: a file does not pay for a new
    // process and its imports (measured on the whole suite, docs/history/testing.md: 353 → 337 s of CPU, 181 → 174 s). The
    // tests leave no state behind them (the environment variables they set are restored; servers, folders and
    // databases are their own); a shuffled order (`--sequence.shuffle.files`) passes as well.
    isolate: false,
    // The test files and the sources they import are loaded by Node itself (its type stripping, as the clone's CLI
    // runs them), not by Vite's module runner: the runner reaches every import through a getter and costs the
    // in-process tests 2-3x their CPU (the false-positive corpus: 12.4 s -> 9.0 s alone; the suite 258 -> 228 s of
    // CPU, docs/testing.md). No test uses vi.mock or import.meta.vitest, the two things that need a loader.
    experimental: { viteModuleRunner: false, nodeLoader: false },
    // What both tiers set up (test/helpers/tiers.ts: the run's temporary folder, its PostgreSQL server, the built
    // CLI and its compile cache), and the workers' compile cache, in memory for the run and its lasting entries saved
    // when it ends (test/helpers/compile-cache-run.ts).
    globalSetup: [...RUN_SETUP, 'test/helpers/compile-cache-run.ts'],
    // Node's compile cache in each worker (test/helpers/compile-cache.ts); with SVC_TEST_CPU_PROBE=<file>, each test
    // file's CPU appended to that file (test/helpers/cpu-probe.ts).
    setupFiles: [
      'test/helpers/compile-cache.ts',
      ...(process.env.SVC_TEST_CPU_PROBE ? ['test/helpers/cpu-probe.ts'] : []),
    ],
    // Planned so that at most two files that mostly wait run at once, longest first (test/helpers/sequencer.ts).
    sequence: { sequencer: WaitingAndWorking },
    maxWorkers: 4,
    // `make coverage` (--coverage): src/ as the suite's own processes run it (in-process CLI runs included; the
    // CLI's child processes are not measured), a summary, and the floor below checked (docs/testing.md).
    coverage: {
      provider: 'v8',
      include: ['src/**/*.ts'],
      reporter: ['text-summary'],
      reportsDirectory: '.out/coverage',
      reportOnFailure: true,
      // The floor (test/helpers/coverage-floor.ts), checked by `make coverage`; CI checks it with `make coverage-gate`.
      thresholds: { ...COVERAGE_FLOOR },
    },
  },
});
