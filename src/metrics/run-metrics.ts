// The Prometheus metrics of one send run (prom-client): records, batches, retries, splits from the pipeline's
// counters; per-attempt request latency and requests in flight from around the client's post function.

import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { SvcHttpError, SvcRedirectError, SvcTimeoutError } from '../client/errors.ts';
import { SvcIngestError } from '../errors.ts';
import { refuseTypedCardNumbers } from '../mask/typed.ts';
import type { RunProgress } from '../record/counters.ts';

/** Prefix of every metric name. */
export const METRIC_PREFIX = 'svc_ingest_';

/** Request latency buckets in seconds: a loopback answer (ms) up to the default 30 s timeout. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** The client's post as the dispatcher calls it; any function answering with an HTTP status fits. */
type Post<A extends unknown[], R extends { httpStatus: number }> = (...args: A) => Promise<R>;

/**
 * What the pipeline and the CLI tell the metrics: the observer interface of a run. The counters are read from
 * the pipeline's own counter object (one set of counters for the summary, the progress line and the metrics).
 * @example const m = createRunMetrics(); const post = m.observePost(client.postTransactionsJson); m.track(run.progress)
 */
export interface RunMetrics {
  /** The same post, timed per call: each call is one HTTP attempt (latency histogram, requests in flight). */
  observePost<A extends unknown[], R extends { httpStatus: number }>(post: Post<A, R>): Post<A, R>;
  /** Where the record and batch counters come from: the run's progress snapshot. */
  track(progress: () => RunProgress): void;
  /**
   * The run ended with this exit status: final counters, `exit_status`, and `last_success_timestamp_seconds` when
   * the status is 0 or 2 (every valid record acknowledged).
   */
  finish(exitStatus: number, final?: RunProgress): void;
  /** The run stopped on this error code (exit 1 or 5 by an error): `run_error{code}` 1, for alerts (LEDGER_READ). */
  stoppedBy(code: string): void;
  /** Carries the last success over from an earlier run's file (seconds since the epoch). */
  setLastSuccess(seconds: number): void;
  /** Everything in the Prometheus text format (version 0.0.4). */
  text(): Promise<string>;
  readonly contentType: string;
}

/** Exit statuses after which every valid record is acknowledged: a successful run for alerting. */
const SUCCESS = new Set([0, 2]);

const INPUT_BYTES = `${METRIC_PREFIX}input_bytes`;
const PARTITIONS = `${METRIC_PREFIX}backfill_partitions_total`;

/** The labels the metrics' own series use: a --metrics-label may not take their names. */
const OWN_LABELS = new Set(['outcome', 'status', 'le', 'quantile']);

/**
 * `KEY=VALUE` pairs (--metrics-label, metrics.labels) as labels: a Prometheus label name (`[a-zA-Z_][a-zA-Z0-9_]*`,
 * not `__…`, reserved, nor one the metrics use), a non-empty value without control characters, each name once.
 * A bad one throws CONFIG_INVALID naming it.
 * @example parseMetricLabels(['feed=northwind', 'host=etl-1']) // { feed: 'northwind', host: 'etl-1' }
 */
export function parseMetricLabels(pairs: readonly string[]): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    const name = at === -1 ? pair : pair.slice(0, at);
    const value = at === -1 ? '' : pair.slice(at + 1);
    const bad = (why: string) =>
      new SvcIngestError('CONFIG_INVALID', `--metrics-label ${JSON.stringify(pair)}: ${why}`, {
        field: '--metrics-label',
      });
    if (at === -1) throw bad('expected KEY=VALUE');
    if (!/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(name))
      throw bad('a label name is letters, digits and _, not starting with a digit');
    if (name.startsWith('__')) throw bad('label names starting with __ are reserved by Prometheus');
    if (OWN_LABELS.has(name)) throw bad(`the metrics use the label ${name} themselves`);
    if (value === '') throw bad('the value is empty (Prometheus takes an empty label as no label)');
    if (/[\u0000-\u001f\u007f]/.test(value)) throw bad('the value holds a control character');
    refuseTypedCardNumbers([[`--metrics-label ${name}`, value]], 'CONFIG_INVALID');
    if (name in labels) throw bad(`label ${name} given twice`);
    labels[name] = value;
  }
  return labels;
}

export function createRunMetrics(o: { labels?: Record<string, string> } = {}): RunMetrics {
  const registry = new Registry();
  // Every series carries them: two feeds writing to one textfile folder do not collide.
  if (o.labels && Object.keys(o.labels).length > 0) registry.setDefaultLabels(o.labels);
  const registers = [registry];
  let progress: (() => RunProgress) | null = null;
  let final: RunProgress | null = null;
  const snapshot = (): RunProgress | null => final ?? progress?.() ?? null;

  const follow = followCounters(registers, snapshot);
  // Unlabelled, so that every text-format parser reads it; the answers by status are a counter of their own.
  const latency = new Histogram({
    name: `${METRIC_PREFIX}request_duration_seconds`,
    help: 'Duration of each HTTP attempt to POST /v2/data/transactions (answered or not).',
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const requests = new Counter({
    name: `${METRIC_PREFIX}requests_total`,
    help: 'HTTP attempts to POST /v2/data/transactions by answer: the HTTP status, or network or timeout.',
    labelNames: ['status'],
    registers,
  });
  const requestsInFlight = new Gauge({
    name: `${METRIC_PREFIX}requests_in_flight`,
    help: 'HTTP requests to the service under way.',
    registers,
  });
  new Gauge({
    name: `${METRIC_PREFIX}batches_in_flight`,
    help: 'Batches handed to the dispatcher and not yet settled (sending, or waiting to retry).',
    registers,
    collect() {
      this.set(final ? 0 : (progress?.().inFlight ?? 0));
    },
  });
  new Gauge({
    name: `${METRIC_PREFIX}input_bytes_read`,
    help: 'Input bytes consumed so far (compressed bytes for a .gz file).',
    registers,
    collect() {
      this.set(snapshot()?.bytesRead ?? 0);
    },
  });
  // Registered only while the size is known: an unlabelled gauge cannot be absent otherwise (prom-client shows 0).
  const inputBytes = new Gauge({
    name: INPUT_BYTES,
    help: 'Size of all inputs together; absent when one has no known size (a pipe).',
    registers: [],
    collect() {
      this.set(snapshot()?.bytesTotal ?? 0);
    },
  });
  const showInputBytes = (): void => {
    const known = typeof snapshot()?.bytesTotal === 'number';
    const shown = registry.getSingleMetric(INPUT_BYTES) !== undefined;
    if (known && !shown) registry.registerMetric(inputBytes);
    if (!known && shown) registry.removeSingleMetric(INPUT_BYTES);
  };
  const startedAt = Date.now() / 1000;
  new Gauge({
    name: `${METRIC_PREFIX}run_start_timestamp_seconds`,
    help: 'When this run started, in seconds since the epoch.',
    registers,
  }).set(startedAt);
  const exitStatus = new Gauge({
    name: `${METRIC_PREFIX}exit_status`,
    help: 'Exit status of the run (0 ok, 1 could not run, 2 rejects, 3 failed batches, 4 no records, 5 service unavailable, 130/143 interrupted); -1 while it runs.',
    registers,
  });
  exitStatus.set(-1);
  const outcome = runOutcomeMetrics(registers, startedAt, snapshot, follow);
  const lastSuccess = new Gauge({
    name: `${METRIC_PREFIX}last_success_timestamp_seconds`,
    help: 'When a run last ended with every valid record acknowledged (exit 0 or 2), in seconds since the epoch; carried over from the previous file.',
    registers,
  });

  return {
    observePost<A extends unknown[], R extends { httpStatus: number }>(post: Post<A, R>): Post<A, R> {
      return async (...args: A) => {
        const end = latency.startTimer();
        requestsInFlight.inc();
        try {
          const answer = await post(...args);
          requests.inc({ status: String(answer.httpStatus) });
          return answer;
        } catch (err) {
          requests.inc({ status: failureStatus(err) });
          throw err;
        } finally {
          end();
          requestsInFlight.dec();
        }
      };
    },
    track(p) {
      progress = p;
    },
    finish(status, last) {
      final = last ?? progress?.() ?? null;
      outcome.ended(Date.now() / 1000);
      exitStatus.set(status);
      if (SUCCESS.has(status)) lastSuccess.set(Date.now() / 1000);
    },
    stoppedBy(code) {
      outcome.runError.set({ code }, 1);
    },
    setLastSuccess(seconds) {
      lastSuccess.set(seconds);
    },
    text: () => {
      showInputBytes();
      if (snapshot()?.partitions && !registry.getSingleMetric(PARTITIONS))
        registry.registerMetric(outcome.partitions);
      return registry.metrics();
    },
    contentType: registry.contentType,
  };
}

/**
 * How the run went, for alerts: its duration (until now while it runs), the error code that stopped it, and a
 * backfill worker's partitions (registered by the caller once its progress has partitions, as input_bytes is).
 */
function runOutcomeMetrics(
  registers: Registry[],
  startedAt: number,
  snapshot: () => RunProgress | null,
  follow: Follow,
) {
  let endedAt: number | null = null;
  new Gauge({
    name: `${METRIC_PREFIX}run_duration_seconds`,
    help: 'How long the run has lasted: until now while it runs, until its end once it ended.',
    registers,
    collect() {
      this.set((endedAt ?? Date.now() / 1000) - startedAt);
    },
  });
  const runError = new Gauge({
    name: `${METRIC_PREFIX}run_error`,
    help: 'The error code that stopped the run (1; e.g. LEDGER_READ: the ledger unreachable); absent when none did.',
    labelNames: ['code'],
    registers,
  });
  // A backfill worker's only (registered when its progress has partitions), as input_bytes is.
  const partitions = new Counter({
    name: PARTITIONS,
    help: 'Partitions of a backfill worker: done, released (given back on a stop), lost (taken while its lease had run out), taken_over (from a worker whose lease had run out).',
    labelNames: ['outcome'],
    registers: [],
    collect() {
      const parts = snapshot()?.partitions;
      if (!parts) return;
      for (const [outcome, value] of [
        ['done', parts.done],
        ['released', parts.released],
        ['lost', parts.lost],
        ['taken_over', parts.takenOver],
      ] as const) {
        this.inc({ outcome }, 0);
        follow(this, `partitions.${outcome}`, value, { outcome });
      }
    },
  });
  return {
    runError,
    partitions,
    ended(at: number) {
      endedAt = at;
    },
  };
}

/** The `status` label of a failed attempt: the HTTP status, else timeout or network. */
function failureStatus(err: unknown): string {
  if (err instanceof SvcHttpError || err instanceof SvcRedirectError) return String(err.status);
  if (err instanceof SvcTimeoutError) return 'timeout';
  return 'network';
}

/**
 * The counters that follow the pipeline's totals (records, batches, retries, splits): each collection adds what
 * they moved since the last one.
 */
function followCounters(registers: Registry[], snapshot: () => RunProgress | null): Follow {
  const seen = new Map<string, number>();
  const follow: Follow = (counter, key, value, labels) => {
    const before = seen.get(key) ?? 0;
    if (value > before) counter.inc(labels, value - before);
    seen.set(key, Math.max(before, value));
  };
  new Counter({
    name: `${METRIC_PREFIX}records_total`,
    help: 'Records by outcome: read, and each read record as sent, skipped (acknowledged before), failed or rejected.',
    labelNames: ['outcome'],
    registers,
    collect() {
      const p = snapshot();
      for (const outcome of ['read', 'sent', 'skipped', 'failed', 'rejected'] as const) {
        this.inc({ outcome }, 0); // every outcome is shown, also at 0
        if (p) follow(this, `records.${outcome}`, p[outcome], { outcome });
      }
    },
  });
  new Counter({
    name: `${METRIC_PREFIX}batches_total`,
    help: 'Batches by outcome as written to the ledger: acked or failed (failed includes batches not sent).',
    labelNames: ['outcome'],
    registers,
    collect() {
      const p = snapshot();
      this.inc({ outcome: 'acked' }, 0);
      this.inc({ outcome: 'failed' }, 0);
      if (!p) return;
      follow(this, 'batches.acked', p.batches - p.failedBatches, { outcome: 'acked' });
      follow(this, 'batches.failed', p.failedBatches, { outcome: 'failed' });
    },
  });
  /** A counter without labels that follows one pipeline counter. */
  const total = (name: string, help: string, pick: (p: RunProgress) => number) =>
    new Counter({
      name: `${METRIC_PREFIX}${name}`,
      help,
      registers,
      collect() {
        const p = snapshot();
        if (p) follow(this, name, pick(p), {});
      },
    });
  total(
    'retries_total',
    'Retries of a batch request scheduled after a retryable failure (500, 502-504, 429, network, timeout).',
    (p) => p.retries,
  );
  total('splits_total', 'Batches split in halves to isolate a record the service refuses.', (p) => p.splits);
  return follow;
}

/** Adds to `counter` what the pipeline counter `key` moved since the last collection (its value now: `value`). */
type Follow = (counter: Counter<string>, key: string, value: number, labels: Record<string, string>) => void;
