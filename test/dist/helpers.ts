// What the test/dist/ files share: where `make dist deb rpm image` put the builds, a child process's whole output, the
// embedded simulator started from a given command line, and the README's 50-row export.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { collectOutput, ROOT } from '../helpers/cli.ts';

export const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string })
  .version;
export const DIST = join(ROOT, '.out/dist');
export const EXE = join(DIST, `svc-ingest-${VERSION}-linux-x64`);

/** A build `make test-dist` makes first; a clear failure when it is missing. */
export function built(file: string): string {
  if (!existsSync(file)) throw new Error(`${file} is missing: run make test-dist (it builds first)`);
  return file;
}

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run a command to its end (killed after 90 s), with its whole output. */
export function run(
  cmd: string,
  args: string[],
  o: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      cwd: o.cwd,
      env: o.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.on('error', reject);
    void collectOutput(child).closed.then(({ code, stdout, stderr }) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** `why` for an assertion: the exit status and both outputs. */
export function why(r: Run): string {
  return `exit ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;
}

/** `svc-ingest simulate --port 0` started by `cmd args…`; its URL once it listens, and how to stop it. */
export async function startSimulator(
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  simArgs: string[] = [],
): Promise<{ url: string; stop: () => Promise<void>; child: ChildProcess }> {
  const child = spawn(cmd, [...args, 'simulate', '--port', '0', ...simArgs], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out = collectOutput(child);
  const deadline = Date.now() + 20_000;
  while (!/^http:\/\/\S+$/m.test(out.stdout())) {
    if (Date.now() > deadline || child.exitCode !== null)
      throw new Error(`simulator did not start:\n${out.stdout()}\n${out.stderr()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const url = /^(http:\/\/\S+)$/m.exec(out.stdout())![1]!;
  return {
    url,
    child,
    stop: async () => {
      child.kill('SIGTERM');
      await out.closed;
    },
  };
}

/** The README walk-through's export: 50 valid rows in the canonical columns. */
export async function writeExport(file: string, rows = 50, prefix = 'try'): Promise<void> {
  const head =
    'transactionId,transactionType,sourceCustomerId,sourceAccountId,paymentType,paymentMethodEntryType,transactionTimestamp,transactionPostingTimestamp,paymentNetworkMCC,paymentNetworkMerchantIdType,paymentNetworkMerchant,paymentNetworkMerchantCity,paymentNetworkMerchantState,paymentNetworkMerchantPostalCode,paymentNetworkMerchantCountryCode,paymentNetworkMerchantId,postedAmount,currencyCode';
  const lines = Array.from(
    { length: rows },
    (_, i) =>
      `${prefix}-${i + 1},AUTHORIZED,cust-${i + 1},acct-${i + 1},DEBIT,CHIP,2026-11-20T08:00:00.000Z,2026-11-21T06:00:00.000Z,5814,MID,Blue Bottle Coffee,San Francisco,CA,94102,US,445566000000000,${100 + i + 1},USD`,
  );
  await writeFile(file, `${[head, ...lines].join('\n')}\n`);
}

/** Every stderr line that is a JSON object with `event` = event, in order. */
export function events(stderr: string, event: string): Array<Record<string, unknown>> {
  return stderr
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((o) => o.event === event);
}
