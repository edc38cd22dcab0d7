import { defineConfig } from 'vitest/config';
import { ARTEFACT_RUNS, RUN_SETUP } from './helpers/tiers.ts';

// `make test-dist`: the tests of the install ways that need a build first (make dist deb rpm image, which the target
// runs before): the single executable, the .deb, the .rpm, the container image; and the shipped artefacts run the
// way their users run them (test/helpers/tiers.ts), which need no build of those but the CLI as the npm package
// installs it (test/helpers/cli-build.ts, as in `make test`). Two files at a time: each runs a walk-through of its
// own, mostly waiting on child processes. The artefact runs alone, without the builds:
// npx vitest run --config test/vitest.dist.config.ts test/install test/deploy
export default defineConfig({
  test: {
    include: ['test/dist/**/*.test.ts', ...ARTEFACT_RUNS],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    pool: 'forks',
    // Loaded by Node itself, as in `make test` (test/vitest.config.ts says why).
    experimental: { viteModuleRunner: false, nodeLoader: false },
    globalSetup: [...RUN_SETUP],
    maxWorkers: 2,
  },
});
