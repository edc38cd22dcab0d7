// `make demo`: start the embedded simulator with a few injected faults, send every sample through its
// mapping profile with the real CLI, show each run's summary, then resume once to show nothing is resent;
// then a ticket round trip whose webhook updates are signed with a shared secret, verified and stored by
// `tickets listen`; last, the support answers: a reconcile and a trace showing rewards paid, one pending, one
// unmatched, a rejected transaction, one never read and a disputed one.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { startSimulator } from '../simulator/index.ts';

const root = resolve(import.meta.dirname, '../..');
const bin = join(root, 'src/bin/svc-ingest');
// SVC_DEMO_DIR: where the demo's ledger, rejects and tickets go (a test runs it in a temp folder).
const outDir = process.env.SVC_DEMO_DIR ? resolve(process.env.SVC_DEMO_DIR) : join(root, 'ledger/demo');

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

await rm(outDir, { recursive: true, force: true });
await mkdir(outDir, { recursive: true });
/** The demo's ledger file, for every command it runs. */
const ledgerEnv = { SVC_LEDGER_PATH: join(outDir, 'transactions.ndjson') };

// The webhook receiver first (its URL goes to the simulator), with a shared secret from the environment; it stores
// the updates next to the demo's ledger.
const hookSecret = randomBytes(24).toString('hex');
const listener = spawn(bin, ['tickets', 'listen', '--port', '0', '--until-closed', 'DEMO-1'], {
  cwd: root,
  env: {
    ...process.env,
    SVC_WEBHOOK_SECRET_ENV: 'DEMO_HOOK_SECRET',
    DEMO_HOOK_SECRET: hookSecret,
    SVC_LOG_LEVEL: 'warn',
    ...ledgerEnv,
  },
  stdio: ['ignore', 'pipe', 'pipe'],
});
let listened = '';
listener.stdout.setEncoding('utf8').on('data', (d: string) => {
  listened += d;
});
const listenerDone = new Promise<number>((done) => listener.on('close', (code) => done(code ?? 1)));
const hookUrl = await new Promise<string>((resolve, reject) => {
  let err = '';
  listener.stderr.setEncoding('utf8').on('data', (d: string) => {
    err += d;
    const m = /listening on (\S+)/.exec(err);
    if (m?.[1]) resolve(m[1]);
  });
  listener.on('close', () => reject(new Error(`tickets listen did not start: ${err}`)));
});

/** Short retry waits for the demo's sends and its ticket (the simulator fails 15% of requests). */
const QUICK_RETRIES = ['--retry-base-ms', '50'];

const sim = await startSimulator({
  seed: 7,
  latencyMs: 15,
  jitterMs: 10,
  failRate: 0.15,
  rate429: 0.03,
  retryAfterS: 0,
  webhookUrl: hookUrl,
  webhookSecret: hookSecret,
  ticketDelayMs: 50,
});
try {
  const env = {
    ...process.env,
    SVC_BASE_URL: sim.url,
    ...ledgerEnv,
    SVC_REJECTS_PATH: join(outDir, 'rejects.ndjson'),
    SVC_LOG_LEVEL: 'warn',
  };
  process.stdout.write(`simulator on ${sim.url} (15% of requests answered 500, 3% answered 429)\n\n`);
  for (const r of runs) {
    // Small batches so the sample files make enough requests for the injected faults to show.
    const args = ['send', '--json', '--batch-size', '5', ...QUICK_RETRIES, ...r.args];
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

  // A transaction with a numeric id (a ticket names transactions by number), sent, then disputed.
  const first = JSON.parse(
    (await readFile(join(root, 'samples/canonical.ndjson'), 'utf8')).split('\n')[0] ?? '{}',
  );
  const disputed = join(outDir, 'dispute.ndjson');
  await writeFile(disputed, `${JSON.stringify({ ...first, transactionId: '7000001' })}\n`);
  const sent = await runCli(['send', '--json', ...QUICK_RETRIES, disputed], env);
  process.stdout.write(
    `\n== one more transaction, id 7000001 (numeric, so a ticket can name it): send exit ${sent.code}\n`,
  );
  const args = [
    'tickets',
    'create',
    '--ticket-id',
    'DEMO-1',
    '--customer',
    'cust-1000',
    '--offer',
    '100001',
    '--transaction',
    '7000001',
    '--description',
    'Reward not credited after purchase',
    ...QUICK_RETRIES,
  ];
  process.stdout.write(
    `\n== ticket round trip: webhook updates signed (HMAC-SHA256) by the simulator, verified and stored by tickets listen\n$ svc-ingest ${args.join(' ')}\n`,
  );
  const created = await runCli(args, env);
  process.stdout.write(`exit ${created.code}: ${created.stdout}`);
  const code = await Promise.race([
    listenerDone,
    new Promise<number>((done) => setTimeout(() => done(-1), 10_000)),
  ]);
  for (const line of listened.split('\n').filter(Boolean)) {
    const u = JSON.parse(line) as { status?: string; processingStatus?: string; resolutionType?: string };
    process.stdout.write(
      `  update: ${u.processingStatus} / ${u.status}${u.resolutionType ? ` (${u.resolutionType})` : ''}\n`,
    );
  }
  process.stdout.write(`tickets listen --until-closed DEMO-1: exit ${code}\n`);

  // The support answers (docs/support.md): rewards paid, one pending, one unmatched; then trace, id by id.
  const support: string[][] = [
    ['tickets', 'status'],
    ['reconcile', '--customer', 'cust-1000', '--customer', 'C70000'],
    ['trace', 'can-csv-0001', 'pos-2025-0999', '7000001', '--customer', 'cust-1000'],
    ['trace', 'NW20251011', '--customer', 'C70000'],
    ['trace', 'can-csv-0005', 'never-sent-0001'],
  ];
  for (const a of support) {
    process.stdout.write(`\n== $ svc-ingest ${a.join(' ')}\n`);
    const r = await runCli(a, env);
    process.stdout.write(`${r.stdout}exit ${r.code}\n`);
  }
} finally {
  listener.kill('SIGTERM');
  await sim.close();
}
