// The two tiers of the suite. `make test` runs every file under test/ named *.test.ts but these; `make test-dist`
// (which .ci/run runs after `make test`) runs these with test/dist/. They run a shipped artefact the way its user
// runs it, with tools beyond Node, and cost the most CPU of any check: npm pack and `npm install -g` with the README's
// walk-through twice, the systemd unit and the CronJob's container under their schedulers' rules, the backfill's
// Indexed Job, and promtool on real runs' metrics. Together they were 12 % of `make test`'s CPU (docs/testing.md).
// The units' and manifests' text stays checked in `make test` (test/deploy/units.test.ts, manifests.test.ts), and
// the ledger rule they follow by every command (test/ledger/ledger-rule-cli.test.ts, ledger-url.test.ts).
export const ARTEFACT_RUNS: readonly string[] = [
  'test/install/package.test.ts',
  'test/deploy/systemd-run.test.ts',
  'test/deploy/cronjob-run.test.ts',
  'test/deploy/backfill-job-run.test.ts',
  'test/deploy/observability.test.ts',
];
