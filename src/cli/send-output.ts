// What `send` shows a person: a live progress line on a TTY (with percent and ETA when the input's size is known),
// a progress log line every N seconds elsewhere, and a readable summary at the end.

import { cliIo } from '../io.ts';
import { type Logger, liveLine } from '../log.ts';
import { ambiguousText } from '../map/ambiguous-times.ts';
import { maskCardNumbers } from '../mask/index.ts';
import { type CodeCounts, codeProblem } from '../model/code-lists.ts';
import type { RunProgress, RunSummary } from '../record/counters.ts';

/** Seconds as a short duration: 45s, 3m20s, 2h05m. */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/**
 * How far a run is: records per second since it started, and, when the input's size is known, the share of it
 * consumed and the time left at the pace so far.
 * @example progressFigures(p, 12.5) // { ratePerSecond: 960, percent: 41.2, etaSeconds: 17.8 }
 */
export function progressFigures(
  p: RunProgress,
  elapsedSeconds: number,
): { ratePerSecond: number; percent: number | null; etaSeconds: number | null } {
  const ratePerSecond = elapsedSeconds > 0 ? Math.round(p.read / elapsedSeconds) : 0;
  if (p.bytesTotal === null || p.bytesTotal === 0) return { ratePerSecond, percent: null, etaSeconds: null };
  const share = Math.min(1, p.bytesRead / p.bytesTotal);
  const percent = Math.round(share * 1000) / 10;
  const etaSeconds =
    share > 0 && elapsedSeconds > 0 ? Math.round((elapsedSeconds * (1 - share)) / share) : null;
  return { ratePerSecond, percent, etaSeconds };
}

/** One progress line's text. */
export function progressText(p: RunProgress, elapsedSeconds: number): string {
  const f = progressFigures(p, elapsedSeconds);
  const where = f.percent === null ? '' : ` (${f.percent.toFixed(1)}%)`;
  const eta = f.etaSeconds === null ? '' : `  ETA ${formatDuration(f.etaSeconds)}`;
  return (
    `read ${p.read}${where}  sent ${p.sent}  skipped ${p.skipped}  rejected ${p.rejected}  failed ${p.failed}  ` +
    `retries ${p.retries}  ${f.ratePerSecond}/s  in flight ${p.inFlight}${eta}`
  );
}

/**
 * Shows progress until the returned function is called: on a TTY a live line redrawn every 250 ms (log lines go
 * above it, never onto it); elsewhere one `run.progress` log line every `intervalMs` (0 = none).
 */
export function startProgress(
  read: () => RunProgress,
  o: { tty: boolean; intervalMs: number; logger: Logger },
): () => void {
  const t0 = performance.now();
  const elapsed = () => (performance.now() - t0) / 1000;
  if (o.tty) {
    const draw = () => {
      const cols = cliIo().stderr.columns || 0;
      const text = progressText(read(), elapsed());
      // A line wider than the terminal would wrap, and the redraw could no longer erase it.
      liveLine.show(cols > 1 && text.length >= cols ? text.slice(0, cols - 1) : text);
    };
    const timer = setInterval(draw, 250);
    timer.unref();
    return () => {
      clearInterval(timer);
      liveLine.clear();
    };
  }
  if (o.intervalMs <= 0) return () => {};
  const timer = setInterval(() => {
    const p = read();
    const secs = elapsed();
    const f = progressFigures(p, secs);
    o.logger.info(
      {
        event: 'run.progress',
        read: p.read,
        sent: p.sent,
        skipped: p.skipped,
        rejected: p.rejected,
        failed: p.failed,
        retries: p.retries,
        inFlight: p.inFlight,
        ratePerSecond: f.ratePerSecond,
        bytesRead: p.bytesRead,
        bytesTotal: p.bytesTotal,
        percent: f.percent,
        etaSeconds: f.etaSeconds,
        elapsedSeconds: Math.round(secs),
      },
      `progress: ${progressText(p, secs)}`,
    );
  }, o.intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * One line per code field: its values, most frequent first, with counts; a value outside the code lists marked.
 * @example codeLines({ paymentMethodEntryType: { ECOMMERCE: 3, ECOM: 1 } }, false) // ['codes sent: paymentMethodEntryType ECOMMERCE 3, ECOM 1 (unknown)']
 */
export function codeLines(codes: CodeCounts | undefined, dryRun: boolean): string[] {
  if (codes === undefined) return [];
  const out: string[] = [];
  for (const [field, values] of Object.entries(codes)) {
    const parts = Object.entries(values as Record<string, number>)
      // Ties by code unit order: localeCompare's first call loads ICU's collation (~8 ms of CPU a run).
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
      .map(
        ([v, n]) => `${maskCardNumbers(v)} ${n}${codeProblem(field, v) === undefined ? '' : ' (unknown)'}`,
      );
    out.push(`${dryRun ? 'codes to send' : 'codes sent'}: ${field} ${parts.join(', ')}`);
  }
  return out;
}

export function formatSummary(s: RunSummary, allowEmpty = false): string {
  const secs = (s.durationMs / 1000).toFixed(1);
  const lines = [
    s.dryRun
      ? `dry run: read ${s.read}${expandedText(s)}, valid ${s.valid}, rejected ${s.rejected}, would skip ${s.skipped}, would send ${s.batched} in ${s.batches} batches (${secs} s)`
      : `read ${s.read}${expandedText(s)}, valid ${s.valid}, rejected ${s.rejected}, skipped ${s.skipped}, sent ${s.sent}, failed ${s.failed} ` +
        `(${s.batches} batches, ${s.failedBatches} failed, ${s.retries} retries) in ${secs} s`,
  ];
  if (s.emptyInputs.length > 0 && s.read > 0)
    lines.push(`no records in: ${s.emptyInputs.join(', ')} (the other inputs were read)`);
  if (s.ownNumericIds)
    lines.push(`own numeric ids (sent without the card-number check): ${s.ownNumericIds.join(', ')}`);
  lines.push(...codeLines(s.codes, s.dryRun));
  if (s.ambiguousTimes) lines.push(ambiguousText(s.ambiguousTimes));
  if (s.ledger) lines.push(`ledger:  ${s.ledger}`);
  if (s.rejects && s.rejected > 0)
    lines.push(
      `rejects: ${s.rejects}${s.rejectedKnown > 0 ? ` (${s.rejectedNew} new, ${s.rejectedKnown} recorded by an earlier run)` : ''}`,
    );
  if (s.metricsWritten === false)
    lines.push('metrics: not written (see the metrics.write error above); the run went on');
  if (s.interrupted) lines.push(`interrupted by ${s.interrupted}: rerun the same command to resume`);
  else if (s.read === 0 && !s.outage)
    lines.push(
      allowEmpty
        ? 'no records: the input was empty (accepted: --allow-empty)'
        : 'no records: the input was empty or only a header (exit 4; --allow-empty accepts that)',
    );
  else if (s.outage)
    lines.push(
      'the service looked down; sending stopped. Rerun later: failed and unread records are sent then',
    );
  else if (s.failed > 0 && s.error !== undefined && s.error.code !== 'INPUT_TOO_MANY_REJECTS')
    lines.push(
      `${s.failed} ${s.failed === 1 ? 'record' : 'records'} read and not sent (the input broke); once the input is whole, rerun to send them`,
    );
  else if (s.failed > 0)
    lines.push(
      `${s.failed} ${s.failed === 1 ? 'record' : 'records'} failed after retries; rerun the same command to resend them`,
    );
  return `${lines.join('\n')}\n`;
}

/** `, expanded N`: notifications a profile's `expand` made beyond one per record (nothing when none). */
function expandedText(s: RunSummary): string {
  return s.expanded ? ` (+${s.expanded} expanded)` : '';
}
