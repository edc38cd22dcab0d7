import { defineConfig } from 'vitest/config';

// `make test-dist`: the tests of the install ways that need a build first (make dist deb rpm image, which the target
// runs before): the single executable, the .deb, the .rpm, the container image. Two files at a time: each runs a
// walk-through of its own, mostly waiting on child processes.
export default defineConfig({
  test: {
    include: ['test/dist/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    pool: 'forks',
    globalSetup: ['test/helpers/run-tmp.ts', 'test/helpers/postgres-server.ts'],
    maxWorkers: 2,
  },
});
