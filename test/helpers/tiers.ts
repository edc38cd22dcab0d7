// The two tiers of the suite. `make test` runs every file under test/ named *.test.ts but these; `make test-dist`
// (which .ci/run runs after `make test`) runs these with test/dist/. They run a shipped artefact the way its user
// runs it, with tools beyond Node, and cost the most CPU of any check: npm pack and `npm install -g` with the README's
// walk-through twice, the systemd unit and the CronJob's container under their schedulers' rules, the backfill's
// Indexed Job, and promtool on real runs' metrics (their share of the suite's CPU: docs/testing.md).
// The units' and manifests' text stays checked in `make test` (test/deploy/units.test.ts, manifests.test.ts), and
// the ledger rule they follow by every command (test/ledger/ledger-rule-cli.test.ts, ledger-url.test.ts).
export const ARTEFACT_RUNS: readonly string[] = [
  'test/install/package.test.ts',
  'test/deploy/systemd-run.test.ts',
  'test/deploy/cronjob-run.test.ts',
  'test/deploy/backfill-job-run.test.ts',
  'test/deploy/observability.test.ts',
];

/**
 * What both tiers set up before their first file: one temporary folder for the run (run-tmp.ts: TMPDIR), one
 * PostgreSQL server shared by the files (postgres-server.ts), the CLI the tests start as a process, built as the npm
 * package installs it (cli-build.ts), and its compile cache filled before the first file, which matters on a fresh
 * clone (warm-cli.ts).
 */
export const RUN_SETUP: readonly string[] = [
  'test/helpers/run-tmp.ts',
  'test/helpers/postgres-server.ts',
  'test/helpers/cli-build.ts',
  'test/helpers/warm-cli.ts',
];
