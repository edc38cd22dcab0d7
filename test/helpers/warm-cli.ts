// vitest's globalSetup, after cli-build.ts: fills the compile cache of the CLI the tests start (BIN in cli.ts: the
// built CLI's node_modules/.cache/svc-ingest-test-compile, or with SVC_TEST_CLI=clone the sources',
// node_modules/.cache/svc-ingest-compile, set by the launcher) before the first test file starts. On a fresh clone,
// or once the build has changed, the cache is empty, and each CLI run compiles again until a run of the same command
// has exited and written it (the sources: ~0.65 s of CPU a `send` instead of ~0.32 s), and the files that start at
// once make dozens of such runs. Four runs here load what nearly every other one
// does: every command's declaration (`--help`), the read → map → validate → chain path (a dry run of a CSV
// sample), the HTTP client (a send to a closed port, which stops at the health check), and node-postgres with the
// backfill's modules (a `backfill work` on a PostgreSQL ledger at a closed port, which stops at its first
// connection): the process-bound fault files that start first run `backfill work` and PostgreSQL-ledger sends, and
// such a run costs ~0.45 s of CPU uncached against ~0.22 s cached. On a warm clone the four cost about 0.7 s of
// CPU. Their output is not looked at: a test that needs these to work says so itself.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, runCli } from './cli.ts';

export default async function setup(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-warm-'));
  try {
    await Promise.all([
      runCli(['--help']),
      runCli([
        'send',
        '--dry-run',
        '--ledger',
        join(dir, 'dry-ledger.ndjson'),
        '--rejects',
        join(dir, 'dry-rejects.ndjson'),
        join(ROOT, 'samples/canonical.csv'),
      ]),
      // runCli sets the health check's window to 0: the send stops at its first refused connection.
      runCli([
        'send',
        '--base-url',
        'http://127.0.0.1:9',
        '--new-destination',
        '--ledger',
        join(dir, 'ledger.ndjson'),
        '--rejects',
        join(dir, 'rejects.ndjson'),
        join(ROOT, 'samples/canonical.ndjson'),
      ]),
      // No wait for the database (SVC_LEDGER_WAIT_MS=0): it stops at its first refused connection.
      runCli(
        [
          'backfill',
          'work',
          '--ledger',
          'postgres://warm:warm@127.0.0.1:9/warm',
          '--worker-id',
          'warm',
          '--base-url',
          'http://127.0.0.1:9',
          '--rejects',
          join(dir, 'work-rejects.ndjson'),
        ],
        { env: { SVC_LEDGER_WAIT_MS: '0' } },
      ),
    ]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
