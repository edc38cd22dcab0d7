// deploy/prometheus/ and deploy/grafana/ against what svc-ingest really writes: real runs (the CLI against the
// simulator, --metrics-file): a night with rejects, a night with the service down, a night whose ledger is out of
// reach, and a backfill worker against PostgreSQL. The alert rules pass `promtool check rules` and `promtool test
// rules` on input series made from those textfiles (their metric names and labels, as node_exporter's textfile
// collector exposes them); every metric the rules and the dashboard's queries name is in them.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { plan, runWorker } from '../helpers/backfill.ts';
import { ROOT, runCli } from '../helpers/cli.ts';
import { usePostgres } from '../helpers/postgres.ts';
import {
  metricNames,
  needPromtool,
  promtool,
  type Sample,
  samplesOf,
  seriesOf,
} from '../helpers/promtool.ts';
import { useSimulator } from '../helpers/simulator.ts';
import { makeTx, ndjsonOf, range } from '../helpers/transactions.ts';

const pgs = usePostgres();
const sim = useSimulator({ seed: 48 });
const RULES = join(ROOT, 'deploy/prometheus/svc-ingest-alerts.yaml');
const DASHBOARD = join(ROOT, 'deploy/grafana/svc-ingest-dashboard.json');
/** The labels a scrape of node_exporter adds to a textfile's series. */
const SCRAPE = { instance: 'etl-1:9100', job: 'node' };
/** Minutes of input series: past 27 h. */
const MINUTES = 1700;

type Runs = Record<'night' | 'down' | 'ledger' | 'worker', Sample[]>;
let dir = '';
let runs: Runs;

/** Runs `send` with a metrics textfile; its exit status and the samples of the file. */
async function night(name: string, env: Record<string, string>, ledger?: string) {
  const file = join(dir, `${name}.prom`);
  const r = await runCli(
    [
      'send',
      '--mapping',
      'northwind-csv',
      '--ledger',
      ledger ?? join(dir, `${name}.ndjson`),
      '--rejects',
      join(dir, `${name}-rejects.ndjson`),
      '--metrics-file',
      file,
      '--metrics-label',
      'feed=northwind',
      join(ROOT, 'samples/northwind.csv'),
    ],
    { env: { SVC_BASE_URL: sim.url, ...env } },
  );
  return { code: r.code, stderr: r.stderr, samples: samplesOf(await readFile(file, 'utf8')) };
}

// Installed here when missing (apt-get, as root): the download may take a while on a fresh machine.
beforeAll(() => {
  needPromtool();
}, 600_000);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-observability-'));
  const good = await night('night', {});
  expect(good.code, good.stderr).toBe(2); // 27 sent, 3 rejected
  const down = await night('down', { SVC_BASE_URL: 'http://127.0.0.1:9' });
  expect(down.code, down.stderr).toBe(5);
  const ledger = await night('ledger', { SVC_LEDGER_WAIT_MS: '200' }, 'postgres://svc@127.0.0.1:9/ledger');
  expect(ledger.code, ledger.stderr).toBe(1);
  // A backfill worker, its own metrics file and label.
  const url = await pgs.createDatabase();
  const input = join(dir, 'backfill.ndjson');
  await writeFile(input, ndjsonOf(range(300).map((i) => makeTx(i, 'obs'))));
  await plan(url, [input], 10_000_000, ['--base-url', sim.url]);
  const workerFile = join(dir, 'worker.prom');
  const w = await runWorker(url, 'w0', {
    sim,
    dir,
    args: ['--metrics-file', workerFile, '--metrics-label', 'worker=w0'],
  });
  expect(w.code, w.stderr).toBe(0);
  runs = {
    night: good.samples,
    down: down.samples,
    ledger: ledger.samples,
    worker: samplesOf(await readFile(workerFile, 'utf8')),
  };
}, 120_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

const value = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;

/** An alert rule as the rules file writes it. */
interface Rule {
  alert: string;
  expr: string;
  annotations: { summary: string; description?: string };
}

/** What the rules file says. */
async function rules(): Promise<Rule[]> {
  const doc = parse(await readFile(RULES, 'utf8')) as { groups: Array<{ rules: Rule[] }> };
  return doc.groups.flatMap((g) => g.rules);
}

describe('deploy/prometheus/svc-ingest-alerts.yaml', () => {
  it('promtool check rules passes; the five alerts are there and name only metrics a real run writes', async () => {
    const r = promtool(['check', 'rules', RULES]);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toMatch(/SUCCESS: 5 rules found/);
    const all = await rules();
    expect(all.map((x) => x.alert)).toEqual([
      'SvcIngestNoSuccessfulRun',
      'SvcIngestRunFailed',
      'SvcIngestRejectsOver1Percent',
      'SvcIngestLedgerUnreachable',
      'SvcIngestBackfillStalled',
    ]);
    const written = new Set(Object.values(runs).flatMap((s) => s.map((x) => x.name)));
    for (const x of all)
      for (const name of metricNames(x.expr)) expect(written, `${x.alert}: ${name}`).toContain(name);
  });

  it('the real runs wrote what the rules read', () => {
    expect(value(runs.night, 'svc_ingest_records_total', { outcome: 'rejected' })).toBe(3);
    expect(value(runs.night, 'svc_ingest_exit_status')).toBe(2);
    expect(value(runs.down, 'svc_ingest_exit_status')).toBe(5);
    expect(value(runs.ledger, 'svc_ingest_run_error', { code: 'LEDGER_READ' })).toBe(1);
    expect(value(runs.worker, 'svc_ingest_backfill_partitions_total', { outcome: 'done' })).toBe(1);
    expect(value(runs.worker, 'svc_ingest_records_total', { outcome: 'sent' })).toBe(300);
    expect(value(runs.worker, 'svc_ingest_backfill_partitions_total', { outcome: 'taken_over' })).toBe(0);
    // A night's file has no backfill metric; no error stopped the good night; each run's duration was measured.
    expect(runs.night.filter((s) => s.name.startsWith('svc_ingest_backfill_'))).toEqual([]);
    expect(runs.night.filter((s) => s.name === 'svc_ingest_run_error')).toEqual([]);
    expect(value(runs.down, 'svc_ingest_run_error', { code: 'SEND_UNAVAILABLE' })).toBe(1);
    for (const r of Object.values(runs)) {
      const d = value(r, 'svc_ingest_run_duration_seconds')!;
      expect(d).toBeGreaterThan(0);
      expect(d).toBeLessThan(60);
    }
  });

  it('promtool test rules: each alert fires on the runs it is for, and on no other', async () => {
    const tests = scenarios(runs, new Map((await rules()).map((x) => [x.alert, x])));
    const file = join(dir, 'alerts.test.yaml');
    await writeFile(file, stringify({ rule_files: [RULES], evaluation_interval: '1m', tests }));
    const r = promtool(['test', 'rules', file]);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toMatch(/SUCCESS/);
  });
});

// biome-ignore lint/suspicious/noExplicitAny: promtool's test file, written as YAML
type Json = any;

/**
 * A textfile's samples as promtool input series: the scrape's labels added, each value held for MINUTES (a run's
 * timestamps put at minute 1 of the test's clock, which starts at 0); `change` overrides a sample's values.
 */
function inputOf(samples: Sample[], change: (s: Sample) => string | undefined = () => undefined) {
  return samples.map((s) => ({
    series: seriesOf(s.name, { ...s.labels, ...SCRAPE }),
    values: change(s) ?? `${s.name.endsWith('_timestamp_seconds') ? 60 : s.value}+0x${MINUTES}`,
  }));
}

/** An alert expected at `at`: each firing one as its labels and its rendered summary (the description as written). */
type Expected = [labels: Record<string, string>, summary: string];

function scenarios(r: Runs, byName: Map<string, Rule>): Json[] {
  const alert = (name: string, at: string, firing: Expected[] = []) => ({
    eval_time: at,
    alertname: name,
    exp_alerts: firing.map(([labels, summary]) => {
      const description = byName.get(name)?.annotations.description;
      return { exp_labels: labels, exp_annotations: { summary, ...(description ? { description } : {}) } };
    }),
  });
  const feed = { feed: 'northwind', ...SCRAPE };
  const NO_NIGHT = 'svc-ingest: no successful night in 26 h on etl-1:9100, feed northwind';
  const failed = (status: number) =>
    `svc-ingest: the last run on etl-1:9100 ended with exit status ${status}`;
  const quiet = (at: string, ...names: string[]) => names.map((n) => alert(n, at));
  // A backfill worker still running (-1) whose counters stand still; or that reads 50 records a minute.
  const running = (s: Sample) => (s.name === 'svc_ingest_exit_status' ? `-1+0x${MINUTES}` : undefined);
  const reading = (s: Sample) =>
    s.name === 'svc_ingest_records_total' && s.labels.outcome === 'read' ? `0+50x${MINUTES}` : running(s);
  return [
    {
      name: 'a night with 3 rejects in 30 records, then no night for 27 h',
      interval: '1m',
      input_series: inputOf(r.night),
      alert_rule_test: [
        alert('SvcIngestRejectsOver1Percent', '10m', [
          [
            { ...feed, severity: 'warning' },
            "svc-ingest: 10% of the last run's records on etl-1:9100 were rejected; see the rejects file",
          ],
        ]),
        ...quiet('10m', 'SvcIngestRunFailed', 'SvcIngestNoSuccessfulRun', 'SvcIngestLedgerUnreachable'),
        alert('SvcIngestNoSuccessfulRun', '25h', []),
        alert('SvcIngestNoSuccessfulRun', '27h', [[{ ...feed, severity: 'critical' }, NO_NIGHT]]),
      ],
    },
    {
      name: 'a night that found the service down (exit 5)',
      interval: '1m',
      input_series: inputOf(r.down),
      alert_rule_test: [
        alert('SvcIngestRunFailed', '10m', [[{ ...feed, severity: 'warning' }, failed(5)]]),
        ...quiet(
          '10m',
          'SvcIngestRejectsOver1Percent',
          'SvcIngestLedgerUnreachable',
          'SvcIngestBackfillStalled',
        ),
      ],
    },
    {
      name: 'a night whose ledger is out of reach (exit 1, LEDGER_READ)',
      interval: '1m',
      input_series: inputOf(r.ledger),
      alert_rule_test: [
        alert('SvcIngestLedgerUnreachable', '10m', [
          [
            { ...feed, code: 'LEDGER_READ', severity: 'critical' },
            'svc-ingest: the last run on etl-1:9100 stopped on LEDGER_READ: the ledger out of reach',
          ],
        ]),
        alert('SvcIngestRunFailed', '10m', [[{ ...feed, severity: 'warning' }, failed(1)]]),
      ],
    },
    {
      name: 'a backfill worker that stops reading, beside a nightly feed on the same host',
      interval: '1m',
      input_series: [...inputOf(r.worker, running), ...inputOf(r.night)],
      alert_rule_test: [
        alert('SvcIngestBackfillStalled', '20m', []),
        alert('SvcIngestBackfillStalled', '70m', [
          [
            { severity: 'warning' },
            'svc-ingest: a backfill has read no record for 30 min or more while 1 worker(s) run',
          ],
        ]),
        // The nightly rule is the feed's alone: the worker's own last success does not count as a night.
        alert('SvcIngestNoSuccessfulRun', '27h', [[{ ...feed, severity: 'critical' }, NO_NIGHT]]),
        ...quiet('70m', 'SvcIngestRunFailed'),
      ],
    },
    {
      name: 'a backfill worker that reads',
      interval: '1m',
      input_series: inputOf(r.worker, reading),
      alert_rule_test: [...quiet('70m', 'SvcIngestBackfillStalled', 'SvcIngestRunFailed')],
    },
    {
      name: 'no svc-ingest metrics at all',
      interval: '1m',
      input_series: [{ series: seriesOf('up', SCRAPE), values: `1+0x${MINUTES}` }],
      alert_rule_test: [
        alert('SvcIngestNoSuccessfulRun', '10m', [
          [{ severity: 'critical' }, 'svc-ingest: no successful night in 26 h'],
        ]),
      ],
    },
  ];
}

describe('deploy/grafana/svc-ingest-dashboard.json', () => {
  it('every query names only metrics a real night or backfill worker wrote; the panels the issue lists are there', async () => {
    const dash = JSON.parse(await readFile(DASHBOARD, 'utf8')) as Json;
    const written = new Set(Object.values(runs).flatMap((s) => s.map((x) => x.name)));
    const queries: string[] = [];
    for (const p of dash.panels) for (const t of p.targets ?? []) queries.push(t.expr);
    for (const v of dash.templating.list) if (v.type === 'query') queries.push(v.definition);
    expect(queries.length).toBeGreaterThan(15);
    const named = new Set<string>();
    for (const q of queries) {
      const label = /^label_values\(([^,]+),/.exec(q);
      const names = label ? [label[1]!.trim()] : metricNames(q);
      expect(names.length, q).toBeGreaterThan(0);
      for (const n of names) {
        expect(written, `${q}: ${n}`).toContain(n);
        named.add(n);
      }
    }
    // Nights: sent, skipped, rejected, failed, duration; the service's latency and retries; backfill progress.
    for (const n of [
      'svc_ingest_records_total',
      'svc_ingest_run_duration_seconds',
      'svc_ingest_exit_status',
      'svc_ingest_request_duration_seconds_bucket',
      'svc_ingest_requests_total',
      'svc_ingest_retries_total',
      'svc_ingest_backfill_partitions_total',
    ])
      expect(named, n).toContain(n);
    const outcomes = queries.join('\n');
    for (const o of ['sent', 'skipped', 'rejected', 'failed']) expect(outcomes).toContain(o);
  });
});
