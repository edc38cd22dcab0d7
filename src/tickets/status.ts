// `tickets status`: the stored tickets in the groups support acts on — open, stale (no first update for too long),
// in Error (to correct and resubmit), closed by resolution type.
import type { TicketRecord } from './state.ts';

/**
 * The report.
 * @example { open: [...], stale: [...], error: [...], closed: { 'No Credit: Reward Received': [...] }, counts: {...} }
 */
export interface TicketsStatus {
  /** Acknowledged or in process, not closed (stale ones included). */
  open: TicketRecord[];
  /** Submitted or acknowledged, with no first update for longer than `staleAfterMs`. */
  stale: TicketRecord[];
  /** First update Error: not created; correct and resubmit. */
  error: TicketRecord[];
  /** By resolution type ('' = blank: too little information, recreate it). */
  closed: Record<string, TicketRecord[]>;
  counts: { tickets: number; open: number; stale: number; error: number; closed: number };
  staleAfterMs: number;
}

/** Waiting for its first update (a create sent, or acknowledged) since when. */
function waitingSince(t: TicketRecord): string | null {
  if (t.phase !== 'submitted' && t.phase !== 'received') return null;
  return t.acceptedAt ?? t.submittedAt;
}

/** Is this ticket stale at `now`? */
export function isStale(t: TicketRecord, now: number, staleAfterMs: number): boolean {
  const since = waitingSince(t);
  return since !== null && now - Date.parse(since) > staleAfterMs;
}

/**
 * Group the tickets.
 * @example ticketsStatus([...store], Date.now(), 86_400_000).stale
 */
export function ticketsStatus(
  tickets: Iterable<TicketRecord>,
  now: number,
  staleAfterMs: number,
): TicketsStatus {
  const out: TicketsStatus = {
    open: [],
    stale: [],
    error: [],
    closed: {},
    counts: { tickets: 0, open: 0, stale: 0, error: 0, closed: 0 },
    staleAfterMs,
  };
  for (const t of tickets) {
    out.counts.tickets++;
    if (t.phase === 'error') out.error.push(t);
    else if (t.phase === 'closed') {
      const key = t.resolutionType ?? '';
      const list = out.closed[key] ?? [];
      list.push(t);
      out.closed[key] = list;
      out.counts.closed++;
    } else {
      out.open.push(t);
      if (isStale(t, now, staleAfterMs)) out.stale.push(t);
    }
  }
  out.counts.open = out.open.length;
  out.counts.stale = out.stale.length;
  out.counts.error = out.error.length;
  return out;
}

function line(t: TicketRecord): string {
  const tx = t.transactions.length > 0 ? `, transactions ${t.transactions.join(' ')}` : '';
  return `  ${t.sourceTicketId}${t.svcTicketId !== null ? ` (svc ${t.svcTicketId})` : ''}: customer ${t.sourceCustomerId ?? '?'}, offer ${t.offerId ?? '?'}${tx}`;
}

/** The readable form. */
export function formatTicketsStatus(s: TicketsStatus): string[] {
  const out: string[] = [
    `tickets: ${s.counts.tickets}; open ${s.counts.open} (stale ${s.counts.stale}), Error ${s.counts.error}, closed ${s.counts.closed}`,
  ];
  if (s.open.length > 0) {
    out.push('open:');
    for (const t of s.open) {
      const stale = s.stale.includes(t)
        ? ` — STALE: no first update since ${waitingSince(t)} (over ${Math.round(s.staleAfterMs / 1000)} s; tickets status --refresh reads it back)`
        : '';
      const phase =
        t.phase === 'processing'
          ? `In Process since ${t.lastUpdateAt ?? '?'}`
          : t.phase === 'received'
            ? `acknowledged ${t.acceptedAt ?? '?'}, waiting for its first update`
            : `submitted ${t.submittedAt ?? '?'}, no acknowledgement yet (run tickets create again to resubmit)`;
      out.push(`${line(t)} — ${phase}${stale}`);
    }
  }
  if (s.error.length > 0) {
    out.push('Error (not created: correct and resubmit with tickets create):');
    for (const t of s.error) out.push(`${line(t)} — ${t.errorMessage ?? '?'}`);
  }
  for (const [resolution, list] of Object.entries(s.closed)) {
    out.push(
      `closed: ${resolution === '' ? '(blank: too little information, recreate the ticket)' : resolution}`,
    );
    for (const t of list) out.push(`${line(t)}${t.svcResponse ? ` — ${t.svcResponse}` : ''}`);
  }
  return out;
}
