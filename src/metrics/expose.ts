// Where a run's metrics go: a file in the node_exporter textfile-collector way (a temp file in the same folder,
// mode 0644 whatever the umask, renamed over the target, every few seconds and at the end) and/or GET /metrics
// on 127.0.0.1 while it runs. A file that cannot be written never costs the run: logged at error, and said in
// the summary (`metricsWritten: false`).

import { lstat, open, readFile, rename, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { basename, dirname, join, resolve } from 'node:path';
import { SvcIngestError } from '../errors.ts';
import type { Logger } from '../log.ts';
import { METRIC_PREFIX, type RunMetrics } from './run-metrics.ts';

/** How often the file is rewritten while the run lasts. */
export const METRICS_FILE_INTERVAL_MS = 5000;

/**
 * The metrics of a run made visible; `close()` writes the file one last time and stops the server.
 * @example const out = await exposeMetrics(metrics, { file: '/var/lib/prometheus/node-exporter/svc_ingest.prom', logger })
 */
export interface MetricsExposure {
  /** The URL of the /metrics endpoint, when a port was asked for. */
  readonly url: string | null;
  /** Writes the file now (it is also written every few seconds); a failure is logged, never thrown. */
  flush(): Promise<void>;
  /** Whether the file's last write succeeded (undefined when no file was asked for). */
  written(): boolean | undefined;
  /** Final write, then the server stops answering. */
  close(): Promise<void>;
}

function writeError(file: string, err: unknown): SvcIngestError {
  const code = (err as NodeJS.ErrnoException)?.code ?? String(err);
  // A missing folder is not created (a textfile collector's folder exists; a missing one is most likely a typo).
  const why =
    code === 'ENOENT'
      ? `its folder ${dirname(resolve(file))} does not exist`
      : code === 'EACCES'
        ? `permission denied in ${dirname(resolve(file))}`
        : code;
  return new SvcIngestError('METRICS_WRITE', `cannot write the metrics file ${resolve(file)}: ${why}`, {
    source: file,
  });
}

/**
 * The metrics file is replaced by rename, so it may only name a file a run may replace: none yet, an empty one, or
 * one svc-ingest wrote (it starts with its own `# HELP svc_ingest_` line). A ledger, an export or any other file
 * named there by mistake is refused, never replaced.
 */
async function checkReplaceable(file: string): Promise<void> {
  const st = await lstat(file).catch(() => null);
  if (st === null) return;
  const refuse = (what: string) =>
    new SvcIngestError(
      'METRICS_WRITE',
      `the metrics file ${resolve(file)} ${what}; it would be replaced: name a new file (e.g. svc_ingest.prom)`,
      { source: file },
    );
  if (!st.isFile()) throw refuse('exists and is not a regular file');
  const ours = `# HELP ${METRIC_PREFIX}`;
  const head = Buffer.alloc(ours.length);
  const fh = await open(file, 'r').catch((err: unknown) => {
    throw writeError(file, err);
  });
  try {
    const { bytesRead } = await fh.read(head, 0, head.length, 0);
    if (bytesRead > 0 && !ours.startsWith(head.toString('utf8', 0, bytesRead)))
      throw refuse('holds something other than the metrics svc-ingest writes');
  } finally {
    await fh.close();
  }
}

/** The last success timestamp an earlier run left in the file, if any (so a failed run does not reset it). */
async function previousLastSuccess(file: string): Promise<number | undefined> {
  const text = await readFile(file, 'utf8').catch(() => '');
  const m = new RegExp(`^${METRIC_PREFIX}last_success_timestamp_seconds(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(
    text,
  );
  const n = m ? Number(m[1]) : Number.NaN;
  return Number.isFinite(n) && n > 0 ? n : undefined;
}

/** Writes `text` to `file` through a temp file in the same folder (the collector reads *.prom only), 0644. */
async function writeAtomically(file: string, text: string): Promise<void> {
  const tmp = join(dirname(file), `.${basename(file)}.${process.pid}.tmp`);
  try {
    const fh = await open(tmp, 'w', 0o644);
    try {
      await fh.writeFile(text);
      // The metrics hold no secret and node_exporter runs as another user: readable whatever the umask (a
      // unit's UMask=0077 would make it 0600).
      await fh.chmod(0o644);
    } finally {
      await fh.close();
    }
    await rename(tmp, file);
  } catch (err) {
    await rm(tmp, { force: true }).catch(() => {});
    throw writeError(file, err);
  }
}

/**
 * Starts writing `file` and/or serving `port`. A file that cannot be written (no folder, no permission, a file
 * that is not svc-ingest's) is logged at error and the run goes on: metrics never cost the night's data. A port
 * that is taken refuses the run at once (one line, exit 1).
 */
export async function exposeMetrics(
  metrics: RunMetrics,
  o: { file?: string; port?: number; logger: Logger; intervalMs?: number },
): Promise<MetricsExposure> {
  const { file, port, logger } = o;
  let writing: Promise<void> = Promise.resolve();
  let written: boolean | undefined = file ? false : undefined;
  let lastError = '';
  // Never written over: a file svc-ingest did not write (checked once, at the start).
  let refused = false;
  const writeOnce = async (): Promise<void> => {
    if (!file || refused) return;
    try {
      await writeAtomically(file, await metrics.text());
      written = true;
      lastError = '';
    } catch (err) {
      written = false;
      const message = (err as Error).message;
      // Once per distinct failure, not every few seconds.
      if (message !== lastError)
        logger.error(
          { event: 'metrics.write', code: 'METRICS_WRITE', file: resolve(file) },
          `metrics not written (the run goes on): ${message}`,
        );
      lastError = message;
    }
  };
  // One write at a time: the timer's and the final one never interleave on the temp file.
  const flush = (): Promise<void> => {
    writing = writing.then(writeOnce, writeOnce);
    return writing;
  };

  if (file) {
    try {
      await checkReplaceable(file);
    } catch (err) {
      refused = true;
      logger.error(
        { event: 'metrics.write', code: 'METRICS_WRITE', file: resolve(file) },
        `metrics not written (the run goes on): ${(err as Error).message}`,
      );
    }
    if (!refused) {
      const last = await previousLastSuccess(file);
      if (last !== undefined) metrics.setLastSuccess(last);
      await flush();
    }
  }
  let server: Server | null = null;
  let url: string | null = null;
  if (port !== undefined) {
    server = createServer((req, res) => {
      if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: try /metrics\n');
        return;
      }
      metrics.text().then(
        (body) => res.writeHead(200, { 'content-type': metrics.contentType }).end(body),
        (err: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`${err.message}\n`),
      );
    });
    const srv = server;
    await new Promise<void>((resolve, reject) => {
      srv.once('error', (err: NodeJS.ErrnoException) =>
        reject(
          new SvcIngestError(
            'METRICS_LISTEN',
            `cannot serve metrics on 127.0.0.1:${port}: ${err.code ?? err.message}`,
          ),
        ),
      );
      srv.listen(port, '127.0.0.1', () => resolve());
    });
    const address = srv.address();
    url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : port}/metrics`;
    // Never keeps the process alive on its own.
    srv.unref();
    logger.info({ event: 'metrics.listening', url }, `metrics at ${url}`);
  }
  const timer = file
    ? setInterval(() => {
        void flush();
      }, o.intervalMs ?? METRICS_FILE_INTERVAL_MS)
    : null;
  timer?.unref();

  return {
    url,
    flush,
    written: () => written,
    async close() {
      if (timer) clearInterval(timer);
      try {
        await flush();
      } finally {
        if (server) {
          server.closeAllConnections();
          await new Promise<void>((r) => server.close(() => r()));
        }
      }
    },
  };
}
