// Prometheus metrics of a send run: the --metrics-file parses as the text format and its counters equal the
// --json summary's; it is written atomically, keeps the last success across failed runs, and records exit
// statuses; --metrics-port answers on 127.0.0.1 while the run lasts.
import { mkdtemp, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { beforeEach, describe, expect, it } from 'vitest';
import { runCliHere, startCli, summaryOf, waitFor } from '../helpers/cli.ts';
import { useSimulator } from '../helpers/simulator.ts';
import { csvOf, makeTx, range } from '../helpers/transactions.ts';

const sim = useSimulator({ seed: 21 }, 'reset');
let dir: string;
const env = (extra: NodeJS.ProcessEnv = {}) => ({
  SVC_BASE_URL: sim.url,
  SVC_LEDGER_PATH: join(dir, 'ledger.ndjson'),
  SVC_REJECTS_PATH: join(dir, 'rejects.ndjson'),
  ...extra,
});
const fast = ['--json', '--retry-base-ms', '1', '--retry-max-ms', '20'];
const sends = () => sim.stats().requests.byPath['/v2/data/transactions'] ?? 0;

interface Family {
  name: string;
  type: string;
  metrics: Array<{
    value?: string;
    labels?: Record<string, string>;
    count?: string;
    sum?: string;
    buckets?: Record<string, string>;
  }>;
}

/** The file parsed by a Prometheus text-format parser, as name → family. */
function parse(text: string): Map<string, Family> {
  const families = parsePrometheusTextFormat(text) as Family[];
  return new Map(families.map((f) => [f.name, f]));
}
function value(m: Map<string, Family>, name: string, labels: Record<string, string> = {}): number {
  const fam = m.get(`svc_ingest_${name}`);
  if (!fam) throw new Error(`no metric svc_ingest_${name}`);
  const hit = fam.metrics.find((s) => Object.entries(labels).every(([k, v]) => s.labels?.[k] === v));
  if (!hit) throw new Error(`no sample of svc_ingest_${name} with ${JSON.stringify(labels)}`);
  return Number(hit.value);
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-metrics-'));
});

/** 120 valid records and 3 that are rejected (bad amount). */
async function mixedInput(prefix: string): Promise<string> {
  const txs = range(123).map((i) => makeTx(i, prefix));
  for (const i of [5, 60, 100]) txs[i]!.postedAmount = '12.50';
  const file = join(dir, 'in.csv');
  await writeFile(file, csvOf(txs));
  return file;
}

describe('send --metrics-file', () => {
  it('parses as the Prometheus text format and its counters equal the --json summary', async () => {
    sim.setFaults({ failFirst: 1 }); // every batch needs one retry
    const file = await mixedInput('mf');
    const prom = join(dir, 'svc_ingest.prom');
    const before = Date.now() / 1000;
    const r = await runCliHere(['send', ...fast, '--metrics-file', prom, file], { env: env() });
    expect(r.code, r.stderr).toBe(2);
    const s = summaryOf(r);
    const m = parse(await readFile(prom, 'utf8'));
    for (const outcome of ['read', 'sent', 'skipped', 'failed', 'rejected'])
      expect(value(m, 'records_total', { outcome }), outcome).toBe(s[outcome]);
    expect(s).toMatchObject({ read: 123, sent: 120, rejected: 3, retries: 3 });
    expect(value(m, 'batches_total', { outcome: 'acked' })).toBe(
      (s.batches as number) - (s.failedBatches as number),
    );
    expect(value(m, 'batches_total', { outcome: 'failed' })).toBe(s.failedBatches);
    expect(value(m, 'retries_total')).toBe(s.retries);
    expect(value(m, 'splits_total')).toBe(s.splits);
    expect(m.get('svc_ingest_records_total')?.type).toBe('COUNTER');
    // One latency sample per HTTP attempt, as counted by the server; the answers by status.
    const hist = m.get('svc_ingest_request_duration_seconds')!;
    expect(hist.type).toBe('HISTOGRAM');
    expect(Number(hist.metrics[0]!.count)).toBe(sends());
    expect(Number(hist.metrics[0]!.buckets!['+Inf'])).toBe(sends());
    expect(Number(hist.metrics[0]!.sum)).toBeGreaterThan(0);
    expect(value(m, 'requests_total', { status: '500' })).toBe(3);
    expect(value(m, 'requests_total', { status: '200' })).toBe(3);
    expect(sends()).toBe(6);
    expect(value(m, 'requests_in_flight')).toBe(0);
    expect(value(m, 'exit_status')).toBe(2);
    expect(value(m, 'last_success_timestamp_seconds')).toBeGreaterThanOrEqual(Math.floor(before));
    expect(value(m, 'input_bytes')).toBe((await stat(file)).size);
    expect(value(m, 'input_bytes_read')).toBe((await stat(file)).size);
    // Written by rename: readable by the collector, no temp file left beside it.
    expect((await stat(prom)).mode & 0o777).toBe(0o644);
    expect((await readdir(dir)).filter((f) => f.includes('.tmp'))).toEqual([]);
  });

  it('a failed run keeps the last success of the run before and records its own exit status', async () => {
    const prom = join(dir, 'svc_ingest.prom');
    const file = join(dir, 'a.csv');
    await writeFile(file, csvOf(range(40).map((i) => makeTx(i, 'ls'))));
    const ok = await runCliHere(['send', ...fast, '--metrics-file', prom, file], { env: env() });
    expect(ok.code).toBe(0);
    const success = value(parse(await readFile(prom, 'utf8')), 'last_success_timestamp_seconds');
    expect(success).toBeGreaterThan(0);

    sim.setFaults({ failRate: 1 });
    const other = join(dir, 'b.csv');
    await writeFile(other, csvOf(range(40).map((i) => makeTx(i, 'lf'))));
    const failed = await runCliHere(['send', ...fast, '--max-retries', '0', '--metrics-file', prom, other], {
      env: env(),
    });
    expect(failed.code).toBe(3);
    const m = parse(await readFile(prom, 'utf8'));
    expect(value(m, 'exit_status')).toBe(3);
    expect(value(m, 'last_success_timestamp_seconds')).toBe(success);
    expect(value(m, 'records_total', { outcome: 'failed' })).toBe(40);

    // A run that cannot run at all (a missing input) says exit 1, and still keeps the last success.
    const broken = await runCliHere(['send', '--json', '--metrics-file', prom, join(dir, 'missing.csv')], {
      env: env(),
    });
    expect(broken.code).toBe(1);
    const after = parse(await readFile(prom, 'utf8'));
    expect(value(after, 'exit_status')).toBe(1);
    expect(value(after, 'last_success_timestamp_seconds')).toBe(success);

    // Exit 4 (no records) is not a success either; with --allow-empty it is.
    const empty = join(dir, 'empty.csv');
    await writeFile(empty, '');
    await runCliHere(['send', '--json', '--metrics-file', prom, empty], { env: env() });
    expect(value(parse(await readFile(prom, 'utf8')), 'exit_status')).toBe(4);
    expect(value(parse(await readFile(prom, 'utf8')), 'last_success_timestamp_seconds')).toBe(success);
  });

  it('a metrics file that cannot be written is logged at error; the run goes on with its own exit status', async () => {
    const file = join(dir, 'a.csv');
    await writeFile(file, csvOf(range(10).map((i) => makeTx(i, 'mw'))));
    const r = await runCliHere(['send', '--json', '--metrics-file', join(dir, 'no/such/dir/x.prom'), file], {
      env: env({ SVC_LOG_FORMAT: 'json' }),
    });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ sent: 10, exitStatus: 0, metricsWritten: false });
    const errors = r.stderr
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { level: number; event: string; code?: string; msg: string })
      .filter((l) => l.event === 'metrics.write');
    // Once, at error, however many times the file was tried.
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ level: 50, code: 'METRICS_WRITE' });
    expect(errors[0]!.msg).toMatch(
      /metrics not written \(the run goes on\): .*no\/such\/dir does not exist$/,
    );
    expect(sends()).toBe(1);
  });

  it('is also set by env SVC_METRICS_FILE', async () => {
    const prom = join(dir, 'env.prom');
    const file = join(dir, 'a.csv');
    await writeFile(file, csvOf(range(10).map((i) => makeTx(i, 'me'))));
    const r = await runCliHere(['send', '--json', file], { env: env({ SVC_METRICS_FILE: prom }) });
    expect(r.code).toBe(0);
    expect(value(parse(await readFile(prom, 'utf8')), 'records_total', { outcome: 'sent' })).toBe(10);
  });
});

describe('send --metrics-port', () => {
  it('serves /metrics on 127.0.0.1 while the run lasts, and stops with it', async () => {
    sim.setFaults({ latencyMs: 60 });
    const file = join(dir, 'in.csv');
    await writeFile(file, csvOf(range(1500).map((i) => makeTx(i, 'mp'))));
    const prom = join(dir, 'live.prom');
    const run = startCli(
      ['send', ...fast, '--concurrency', '1', '--metrics-port', '0', '--metrics-file', prom, file],
      {
        env: env({ SVC_LOG_LEVEL: 'info' }),
      },
    );
    let err = '';
    run.child.stderr!.on('data', (d: Buffer | string) => {
      err += d.toString();
    });
    await waitFor(() => /"event":"metrics.listening"/.test(err), run.child);
    const url = /"url":"(http:\/\/127\.0\.0\.1:\d+\/metrics)"/.exec(err)![1]!;
    await waitFor(() => sim.stats().transactions.accepted >= 300, run.child);
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const m = parse(await res.text());
    expect(value(m, 'records_total', { outcome: 'sent' })).toBeGreaterThanOrEqual(200);
    expect(value(m, 'exit_status')).toBe(-1);
    expect(value(m, 'batches_in_flight')).toBeLessThanOrEqual(1);
    expect((await fetch(url.replace('/metrics', '/other'))).status).toBe(404);
    // The file is there from the start too, saying the run is under way.
    expect(value(parse(await readFile(prom, 'utf8')), 'exit_status')).toBe(-1);
    const r = await run.done;
    expect(r.code, r.stderr).toBe(0);
    expect(summaryOf(r)).toMatchObject({ sent: 1500 });
    await expect(fetch(url)).rejects.toThrow();
    expect(value(parse(await readFile(prom, 'utf8')), 'records_total', { outcome: 'sent' })).toBe(1500);
  });

  it('a port already taken stops the run before anything is sent', async () => {
    const { createServer } = await import('node:net');
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    const port = (blocker.address() as { port: number }).port;
    const file = join(dir, 'a.csv');
    await writeFile(file, csvOf(range(10).map((i) => makeTx(i, 'pt'))));
    const r = await runCliHere(['send', '--metrics-port', String(port), file], { env: env() });
    blocker.close();
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      new RegExp(`METRICS_LISTEN: cannot serve metrics on 127\\.0\\.0\\.1:${port}: EADDRINUSE`),
    );
    expect(sends()).toBe(0);
  });
});
