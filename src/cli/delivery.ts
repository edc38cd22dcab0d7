// What `send` and `backfill work` share: the delivery, rejects and progress options and their config keys, the
// dispatch settings, signal handling (SIGINT/SIGTERM drain, a second one exits), the run's metrics (file, port) and
// the exit status a summary means.

import type { Command } from 'commander';
import type { DispatchSettings } from '../chain/options.ts';
import type { ChainRunEnd } from '../chain/run.ts';
import type { Config, ConfigFlags } from '../config/index.ts';
import { EXIT, exitStatusOf, SvcIngestError } from '../errors.ts';
import { cliIo } from '../io.ts';
import { destinationOf, NEW_DESTINATION_FLAG } from '../ledger/destination.ts';
import type { Logger } from '../log.ts';
import { maskDeep } from '../mask/index.ts';
import type { MetricsExposure } from '../metrics/expose.ts';
import type { RunMetrics } from '../metrics/run-metrics.ts';
import type { RunProgress, RunSummary } from '../record/counters.ts';
import type { PostTransactions } from '../send/attempt.ts';
import { retriedHealthCheck } from '../send/health-check.ts';
import { addSettingOptions, settingFlags } from './settings.ts';

/**
 * The delivery, rejects and progress flags as commander parses them: those that are settings are read by the
 * table (src/cli/settings.ts settingFlags); these are the others.
 */
export interface DeliveryFlags {
  /** --new-destination */
  newDestination?: boolean;
  progress?: boolean;
}

/** The table's dispatch and backoff settings (--concurrency, --retry-base-ms, …) and --new-destination. */
export function addDispatchOptions(cmd: Command): Command {
  return addSettingOptions(cmd, 'dispatch', 'backoff').option(
    NEW_DESTINATION_FLAG,
    'start sending to a destination (base URL, institution) this ledger has no acknowledgements from; ' +
      'without it such a run is refused (exit 1): acknowledgements count only for the destination that gave them',
  );
}

/**
 * Where the run sends, as the ledger records it (base URL origin + path, institution), and whether it may be new.
 * @example ledgerDestination(config, { newDestination: true }) // { destination: 'https://svc.example/api', newDestination: true }
 */
export function ledgerDestination(
  config: Config,
  f: { newDestination?: boolean },
): { destination: string; newDestination: boolean } {
  return {
    destination: destinationOf(config.baseUrl, config.institutionId),
    newDestination: f.newDestination === true,
  };
}

/** --rejects, and --max-rejects … --reject-sample: the rejects file and the reject caps (the table's). */
export function addRejectCapOptions(cmd: Command): Command {
  return addSettingOptions(cmd, 'rejectsFile', 'rejectCaps');
}

/** --progress-interval, --metrics-file, --metrics-port, --metrics-label (the table's), and --no-progress. */
export function addProgressOptions(cmd: Command): Command {
  return addSettingOptions(cmd, 'progress').option(
    '--no-progress',
    'no live progress line on a TTY and no progress log lines',
  );
}

/** The delivery flags that are configuration keys. */
export function deliveryFlags(f: DeliveryFlags): ConfigFlags {
  return settingFlags(f, 'dispatch', 'backoff', 'rejectsFile', 'rejectCaps', 'progress');
}

/** The service sink's settings from the configuration (its slice of send.*), posting through `post`. */
export function dispatchSettings(config: Config, post: PostTransactions): DispatchSettings {
  return { post, settings: config.send };
}

/** The check before reading that the service answers, retried for send.healthCheckWindowMs (each try logged). */
export function healthCheck(
  config: Config,
  logger: Logger,
  check: (signal?: AbortSignal) => Promise<void>,
): (signal?: AbortSignal) => Promise<void> {
  return retriedHealthCheck(check, { windowMs: config.send.healthCheckWindowMs, logger });
}

/**
 * SIGINT / SIGTERM stop the run: nothing more is read (standard input is closed), batches in flight settle; a
 * second signal exits at once. The returned signal is aborted with the signal's name.
 */
export function stopOnSignals(readsStdin: boolean, logger: Logger): { signal: AbortSignal; off(): void } {
  const stop = new AbortController();
  const io = cliIo();
  const onSignal = (sig: NodeJS.Signals) => {
    if (stop.signal.aborted) {
      logger.error(
        { event: 'run.abort', signal: sig },
        'second signal: exiting without waiting for requests in flight',
      );
      io.exit(sig === 'SIGINT' ? EXIT.SIGINT : EXIT.SIGTERM);
    }
    logger.warn(
      { event: 'run.stopping', signal: sig },
      'stopping: no more input is read; waiting for batches in flight',
    );
    stop.abort(sig);
    if (readsStdin) io.stdin.destroy?.();
  };
  const off = io.onSignal(onSignal);
  return { signal: stop.signal, off };
}

/**
 * Runs `run` with the run's metrics when `metrics.file` or `metrics.port` is set (null otherwise): a port that is
 * taken stops the run before anything is sent; a file that cannot be written is logged at error and the run goes
 * on (its summary says `metricsWritten: false`); the exit status is recorded.
 */
export async function withRunMetrics(
  settings: Config['metrics'],
  logger: Logger,
  run: (metrics: RunMetrics | null, exposure: MetricsExposure | null) => Promise<number>,
): Promise<number> {
  const { file, port, labels: given = [] } = settings;
  const wanted = file !== undefined || port !== undefined;
  if (!wanted && given.length === 0) return run(null, null);
  const [{ createRunMetrics, parseMetricLabels }, { exposeMetrics }] = await Promise.all([
    import('../metrics/run-metrics.ts'),
    import('../metrics/expose.ts'),
  ]);
  // Checked also when no metrics are written: a bad label is a mistake in the job's definition either way.
  const labels = parseMetricLabels(given);
  if (!wanted) return run(null, null);
  const metrics = createRunMetrics({ labels });
  const exposure = await exposeMetrics(metrics, { file, port, logger });
  const finish = async (code: number): Promise<void> => {
    metrics.finish(code);
    await exposure
      .close()
      .catch((err: Error) => logger.error({ event: 'metrics.write' }, `metrics not written: ${err.message}`));
  };
  let code: number;
  try {
    code = await run(metrics, exposure);
  } catch (err) {
    if (err instanceof SvcIngestError) metrics.stoppedBy(err.code);
    await finish(exitStatusOf(err));
    throw err;
  }
  await finish(code);
  return code;
}

/**
 * The exit status a finished run's summary means (the most severe wins: 1, 130/143, 5, 3, 2; 4 when nothing was
 * read and that is not allowed). A run that stopped itself (too many rejects) says why on stderr.
 */
export async function exitStatusOfRun(
  summary: RunSummary & Partial<Pick<ChainRunEnd, 'tooManyRejects'>>,
  o: { allowEmpty: boolean; allowRejects?: boolean; logger: Logger },
): Promise<number> {
  const code = runExitStatus(summary, o.allowEmpty, o.allowRejects);
  if (summary.error) {
    // The run stopped itself (too many rejects): the summary says what was done, this line why.
    const { stderrLine } = await import('../log.ts');
    stderrLine('error', 'cli.error', `svc-ingest: ${summary.error.code}: ${summary.error.message}`, {
      code: summary.error.code,
      exitStatus: code,
    });
  } else if (code === EXIT.EMPTY) {
    o.logger.warn(
      { event: 'run.empty', inputs: summary.emptyInputs },
      'no records: the input was empty or only a header (exit 4; --allow-empty accepts that)',
    );
  }
  return code;
}

/**
 * The exit status a finished run's summary means, and nothing else (exitStatusOfRun also says why on stderr).
 * `allowRejects` (--allow-rejects): a run whose only trouble is rejects under the caps exits 0, not 2, for the
 * schedulers that cannot be told that 2 is a success (a Kubernetes Job, a shell's `&&`).
 */
export function runExitStatus(summary: RunSummary, allowEmpty: boolean, allowRejects = false): number {
  if (summary.error) return EXIT.USAGE;
  if (summary.interrupted === 'SIGINT') return EXIT.SIGINT;
  if (summary.interrupted) return EXIT.SIGTERM;
  if (summary.outage) return EXIT.UNAVAILABLE;
  if (summary.failed > 0) return EXIT.FAILED;
  if (summary.rejected > 0 && !allowRejects) return EXIT.REJECTED;
  if (summary.read === 0 && !allowEmpty) return EXIT.EMPTY;
  return EXIT.OK;
}

/**
 * The level of a run's `run.end` line: error when the run could not finish (it stopped itself, the service stayed
 * down, a signal stopped it), warn when records were rejected or batches failed (or nothing was read), else info.
 */
export function runEndLevel(exitStatus: number): 'info' | 'warn' | 'error' {
  if (([EXIT.USAGE, EXIT.UNAVAILABLE, EXIT.SIGINT, EXIT.SIGTERM] as number[]).includes(exitStatus))
    return 'error';
  return exitStatus === EXIT.OK ? 'info' : 'warn';
}

/**
 * Follows a run to its end: its metrics track it, progress shows (a live line on a TTY, else log lines) unless
 * `--no-progress`, and `after` runs however it ends (close the client, stop listening for signals). Then the
 * summary: one JSON line on stdout with `--json`, else `text` on stderr; and the `run.end` log line.
 */
export async function followRun<S extends object>(
  run: { progress(): RunProgress; done: Promise<S> },
  o: {
    progress: boolean | undefined;
    json: boolean | undefined;
    config: Config;
    logger: Logger;
    metrics: RunMetrics | null;
    text: (summary: S) => string;
    after: () => Promise<void>;
    /** The run's exit status, for the summary and the `run.end` line (runExitStatus). */
    exitStatus: (summary: S) => number;
    /** The metrics file's writer: written once more before the summary, which says whether that worked. */
    exposure?: MetricsExposure | null;
  },
): Promise<S> {
  const [{ stderrLine, logFormat }, { startProgress }] = await Promise.all([
    import('../log.ts'),
    import('./send-output.ts'),
  ]);
  o.metrics?.track(run.progress);
  const stopProgress =
    o.progress === false
      ? () => {}
      : startProgress(run.progress, {
          tty: Boolean(cliIo().stderr.isTTY) && logFormat() === 'text',
          intervalMs: o.config.send.progressIntervalMs,
          logger: o.logger,
        });
  let summary: S;
  try {
    summary = await run.done;
  } finally {
    stopProgress();
    await o.after();
  }
  const exitStatus = o.exitStatus(summary);
  await o.exposure?.flush();
  const metricsWritten = o.exposure?.written();
  if (metricsWritten !== undefined) Object.assign(summary, { metricsWritten });
  const level = runEndLevel(exitStatus);
  if (o.json) cliIo().stdout.write(`${JSON.stringify(maskDeep({ ...summary, exitStatus }))}\n`);
  else stderrLine(level, 'run.summary', o.text(summary), { exitStatus });
  // On a terminal the readable summary above says it all; elsewhere the log line is for log collectors.
  const endLevel = logFormat() === 'text' && cliIo().stderr.isTTY && !o.json ? 'debug' : level;
  o.logger[endLevel](
    { event: 'run.end', ...(summary as Record<string, unknown>), exitStatus },
    'run finished',
  );
  return summary;
}
