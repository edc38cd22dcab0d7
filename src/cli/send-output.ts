// What `send` shows a person: a live progress line on a TTY and a readable summary at the end.
import type { RunProgress, RunSummary } from '../pipeline.ts';

/** Redraw one progress line on stderr every 250 ms; returns a function that clears it. */
export function startProgress(read: () => RunProgress): () => void {
  const t0 = performance.now();
  const draw = () => {
    const p = read();
    const secs = (performance.now() - t0) / 1000;
    const rate = secs > 0 ? Math.round(p.sent / secs) : 0;
    process.stderr.write(
      `\r\x1b[Kread ${p.read}  sent ${p.sent}  skipped ${p.skipped}  rejected ${p.rejected}  failed ${p.failed}  ` +
        `retries ${p.retries}  ${rate}/s  in flight ${p.inFlight}`,
    );
  };
  const timer = setInterval(draw, 250);
  timer.unref();
  return () => {
    clearInterval(timer);
    process.stderr.write('\r\x1b[K');
  };
}

export function formatSummary(s: RunSummary): string {
  const secs = (s.durationMs / 1000).toFixed(1);
  const lines = [
    s.dryRun
      ? `dry run: read ${s.read}, valid ${s.valid}, rejected ${s.rejected}, would skip ${s.skipped}, would send ${s.batched} in ${s.batches} batches (${secs} s)`
      : `read ${s.read}, valid ${s.valid}, rejected ${s.rejected}, skipped ${s.skipped}, sent ${s.sent}, failed ${s.failed} ` +
        `(${s.batches} batches, ${s.failedBatches} failed, ${s.retries} retries) in ${secs} s`,
  ];
  if (s.ledger) lines.push(`ledger:  ${s.ledger}`);
  if (s.rejects && s.rejected > 0)
    lines.push(
      `rejects: ${s.rejects}${s.rejectedKnown > 0 ? ` (${s.rejectedNew} new, ${s.rejectedKnown} recorded by an earlier run)` : ''}`,
    );
  if (s.interrupted) lines.push(`interrupted by ${s.interrupted}: rerun the same command to resume`);
  else if (s.outage)
    lines.push(
      'the service looked down; sending stopped. Rerun later: failed and unread records are sent then',
    );
  else if (s.failed > 0)
    lines.push(`${s.failed} records failed after retries; rerun the same command to resend them`);
  return `${lines.join('\n')}\n`;
}
