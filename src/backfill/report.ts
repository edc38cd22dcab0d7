// `backfill status` as text: partitions by state, records, bytes, rate and ETA, then one line per worker.
import type { BackfillStatus } from '../ledger/postgres/backfill/status.ts';

/** 1536 → '1.5 KB' (powers of 1024, one decimal). */
export function formatBytes(n: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${v} B` : `${v.toFixed(1)} ${units[u]}`;
}

/** 3725 → '1h 2m 5s'. */
export function formatSeconds(s: number): string {
  const t = Math.round(s);
  const h = Math.floor(t / 3600);
  const m = Math.floor((t % 3600) / 60);
  const sec = t % 60;
  return h > 0 ? `${h}h ${m}m ${sec}s` : m > 0 ? `${m}m ${sec}s` : `${sec}s`;
}

/** 1234567 → "1,234,567". By hand: the first toLocaleString of a process loads ICU's number formats (~13 ms of CPU). */
const int = (n: number): string => String(Math.round(n)).replace(/\B(?=(\d{3})+$)/g, ',');

/**
 * The lines `backfill status` prints.
 * @example formatStatus(await backfillStatus(db)).join('\n')
 */
export function formatStatus(s: BackfillStatus): string[] {
  const p = s.partitions;
  const r = s.records;
  const pct = s.bytes.total > 0 ? ` (${((100 * s.bytes.done) / s.bytes.total).toFixed(1)}%)` : '';
  const lines = [
    `backfill in ${s.ledger}: ${s.done ? 'done' : p.total === 0 ? 'nothing planned' : 'in progress'}`,
    `partitions: ${p.total} in ${s.inputs} input(s) · ${p.done} done · ${p.working} working · ${p.stale} stale (worker's lease ran out) · ${p.pending} pending`,
    `takeovers: ${p.takenOver === 0 ? 'none' : `${p.takenOver} partition(s) taken over from a worker whose lease ran out (${p.takeovers} time(s)); each was read again from its start, its acknowledged records skipped`}`,
    `records: read ${int(r.read)} · sent ${int(r.sent)} · skipped ${int(r.skipped)} · failed ${int(r.failed)} · rejected ${int(r.rejected)} (by partition; a taken-over partition counts what its earlier holder sent as skipped)`,
    `acknowledged by the workers: ${int(s.acked.records)} records in ${int(s.acked.batches)} batches`,
    `bytes: ${formatBytes(s.bytes.done)} of ${formatBytes(s.bytes.total)}${pct}`,
  ];
  if (s.startedAt) {
    const eta = s.done
      ? 'done'
      : s.etaSeconds === null
        ? 'ETA unknown'
        : `ETA ${formatSeconds(s.etaSeconds)}`;
    lines.push(
      `rate: ${int(s.rate.recordsPerSecond)} records/s · ${formatBytes(s.rate.bytesPerSecond)}/s over ${formatSeconds(s.elapsedSeconds)} · ${eta}`,
    );
  }
  if (s.workers.length > 0) lines.push('workers:');
  for (const w of s.workers) {
    const c = w.records;
    const state = w.state === 'gone' ? 'gone: its lease ran out' : w.state;
    lines.push(
      `  ${w.workerId} (${state}): claimed ${w.claimed}, ${w.done} done, ${w.working} working · acknowledged ${int(w.acked.records)} · ` +
        `in its partitions: sent ${int(c.sent)} · skipped ${int(c.skipped)} · failed ${int(c.failed)} · rejected ${int(c.rejected)}`,
    );
  }
  return lines;
}
