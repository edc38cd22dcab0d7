// `make demo`: start the embedded simulator with a few injected faults, send every sample through its
// mapping profile with the real CLI, show each run's summary, then resume once to show nothing is resent.
import { spawn } from 'node:child_process';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { startSimulator } from '../simulator/index.ts';

const root = resolve(import.meta.dirname, '../..');
const bin = join(root, 'src/bin/svc-ingest');
const outDir = join(root, 'ledger/demo');

const runs: Array<{ title: string; args: string[] }> = [
  { title: 'canonical CSV', args: ['samples/canonical.csv'] },
  { title: 'canonical NDJSON', args: ['samples/canonical.ndjson'] },
  {
    title: 'Northwind processor CSV (cents, America/Chicago, PAN, Y/N)',
    args: ['--mapping', 'northwind-csv', 'samples/northwind.csv'],
  },
  {
    title: 'Harbor processor NDJSON (nested merchant, signed decimals, derived ids)',
    args: ['--mapping', 'harbor-ndjson', 'samples/harbor.ndjson'],
  },
  {
    title: 'Stripe Issuing Transaction objects (built-in profile stripe-issuing)',
    args: ['--mapping', 'stripe-issuing', 'samples/stripe-issuing.ndjson'],
  },
  {
    title: 'Lithic Transaction objects (built-in profile lithic: events[type=CLEARING])',
    args: ['--mapping', 'lithic', 'samples/lithic.ndjson'],
  },
  {
    title: 'rerun of the canonical CSV (resume: everything already acknowledged is skipped)',
    args: ['samples/canonical.csv.gz'],
  },
];

function runCli(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string }> {
  return new Promise((done, fail) => {
    const child = spawn(bin, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
    });
    child.on('error', fail);
    child.on('close', (code) => done({ code: code ?? 1, stdout }));
  });
}

const sim = await startSimulator({
  seed: 7,
  latencyMs: 15,
  jitterMs: 10,
  failRate: 0.15,
  rate429: 0.03,
  retryAfterS: 0,
});
try {
  await rm(outDir, { recursive: true, force: true });
  await mkdir(outDir, { recursive: true });
  const env = {
    ...process.env,
    SVC_BASE_URL: sim.url,
    SVC_LEDGER_PATH: join(outDir, 'transactions.ndjson'),
    SVC_REJECTS_PATH: join(outDir, 'rejects.ndjson'),
    SVC_LOG_LEVEL: 'warn',
  };
  process.stdout.write(`simulator on ${sim.url} (15% of requests answered 500, 3% answered 429)\n\n`);
  for (const r of runs) {
    // Small batches so the sample files make enough requests for the injected faults to show.
    const args = ['send', '--json', '--batch-size', '5', '--retry-base-ms', '50', ...r.args];
    process.stdout.write(`== ${r.title}\n$ svc-ingest ${args.join(' ')}\n`);
    const { code, stdout } = await runCli(args, env);
    const s = JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as Record<string, number>;
    process.stdout.write(
      `exit ${code}: read ${s.read}, rejected ${s.rejected}, skipped ${s.skipped}, sent ${s.sent}, failed ${s.failed}, ` +
        `batches ${s.batches}, retries ${s.retries}, ${s.durationMs} ms\n\n`,
    );
  }
  const st = sim.stats();
  process.stdout.write(
    `simulator: ${st.requests.total} requests, ${st.faults.fail500} answered 500, ${st.faults.rate429} answered 429; ` +
      `${st.transactions.distinct} distinct transactions delivered, ${st.transactions.duplicates} duplicates\n`,
  );
  const ledger = join(outDir, 'transactions.ndjson');
  const rejects = join(outDir, 'rejects.ndjson');
  const firstLine = async (path: string) => (await readFile(path, 'utf8')).split('\n')[0] ?? '';
  process.stdout.write(`\nledger:  ${ledger}\n  first line: ${await firstLine(ledger)}\n`);
  process.stdout.write(`rejects: ${rejects}\n  first line: ${await firstLine(rejects)}\n`);
} finally {
  await sim.close();
}
