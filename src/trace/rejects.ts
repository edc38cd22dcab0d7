// The rejects file, searched for a few transaction ids: one streaming pass, a line parsed only when its text holds
// one of the ids; a reject names an id when its record holds it (as transactionId, or as any value of the source
// record: a profile's id column such as TXN_REF or id).
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { SvcIngestError } from '../errors.ts';

/**
 * One reject line naming a sought id.
 * @example { transactionId: 'tx-9', source: 'exports/a.csv', line: 17, errors: [{ field: 'postedAmount', message: '…' }], runId: '…', rejectsLine: 3 }
 */
export interface RejectHit {
  transactionId: string;
  source: string | null;
  line: number | null;
  errors: Array<{ field: string; message: string }>;
  runId: string | null;
  sourceCustomerId: string | null;
  /** 1-based line of the rejects file. */
  rejectsLine: number;
}

/** Does a record hold `id` as a value (to depth 3: nested merchant/card objects are not ids, but a raw line is)? */
function holds(v: unknown, id: string, depth = 0): boolean {
  if (typeof v === 'string') return v === id || (depth > 0 && v.trim() === id);
  if (typeof v === 'number') return String(v) === id;
  if (depth >= 3 || v === null || typeof v !== 'object') return false;
  return Object.values(v as Record<string, unknown>).some((x) => holds(x, id, depth + 1));
}

function customerOf(record: unknown): string | null {
  const c = (record as { sourceCustomerId?: unknown } | null)?.sourceCustomerId;
  return typeof c === 'string' ? c : null;
}

/**
 * Every reject of the file naming one of `ids`, in file order. A missing file holds none (`exists: false`).
 * @example const { hits } = await findRejects('ledger/rejects.ndjson', new Set(['tx-9']))
 */
export async function findRejects(
  path: string,
  ids: ReadonlySet<string>,
): Promise<{ exists: boolean; hits: RejectHit[] }> {
  try {
    const st = await stat(path);
    if (!st.isFile()) throw new Error('not a regular file');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { exists: false, hits: [] };
    throw new SvcIngestError('LEDGER_READ', `cannot read rejects file ${path}: ${(err as Error).message}`, {
      source: path,
    });
  }
  const hits: RejectHit[] = [];
  let n = 0;
  try {
    for await (const text of createInterface({
      input: createReadStream(path, { encoding: 'utf8' }),
      crlfDelay: Number.POSITIVE_INFINITY,
    })) {
      n++;
      const candidates = [...ids].filter((id) => text.includes(id));
      if (candidates.length === 0) continue;
      let r: { source?: unknown; line?: unknown; errors?: unknown; record?: unknown; runId?: unknown };
      try {
        r = JSON.parse(text);
      } catch {
        continue;
      }
      for (const id of candidates) {
        if (!holds(r.record, id)) continue;
        hits.push({
          transactionId: id,
          source: typeof r.source === 'string' ? r.source : null,
          line: typeof r.line === 'number' ? r.line : null,
          errors: Array.isArray(r.errors) ? (r.errors as RejectHit['errors']) : [],
          runId: typeof r.runId === 'string' ? r.runId : null,
          sourceCustomerId: customerOf(r.record),
          rejectsLine: n,
        });
      }
    }
  } catch (err) {
    throw new SvcIngestError('LEDGER_READ', `cannot read rejects file ${path}: ${(err as Error).message}`, {
      source: path,
    });
  }
  return { exists: true, hits };
}
