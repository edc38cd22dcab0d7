// Prepare one input in order: read → map → validate, as chunks of sendable transactions and rejects.
import { SvcIngestError } from '../errors.ts';
import type { SilentErrors } from '../map/silent-errors.ts';
import type { CompiledProfile } from '../map/types.ts';
import { codeKey } from '../model/code-lists.ts';
import type { FieldError } from '../model/field-error.ts';
import type { TransactionNotification } from '../model/transaction.ts';
import { type InputSpec, type ReadOptions, readInput } from '../read/open.ts';
import type { RecordChunks } from '../read/types.ts';
import { checkForeign } from './foreign.ts';

/**
 * One record after mapping and validation: a transaction ready for dedupe and batching, or a reject
 * (with every error and the source record, card numbers masked).
 * @example { kind: 'tx', id: 't-1', json: '{"transactionId":"t-1",…}', source: 'a.csv', line: 2 }
 */
export type PreparedItem =
  | {
      kind: 'tx';
      id: string;
      json: string;
      source: string;
      line: number;
      /** Fields the profile made optional ("required": false) that this record goes without. */
      relaxed?: string[];
      /** Its code values (codeKey): counted per field in the summary once sent. */
      codes?: string;
      /** A notification `expand` made beyond the first of its source record (counted as expanded, not read). */
      expanded?: true;
      /** Where its bytes are once its batch's body is encoded (WireRecord of client/body.ts). */
      wire?: Buffer | undefined;
      at?: number | undefined;
      end?: number | undefined;
    }
  | {
      kind: 'reject';
      source: string;
      line: number;
      errors: FieldError[];
      record: unknown;
      expanded?: true;
    };

/** Prepared items of one input, in input order, in chunks (as the reader yields them). */
export type PreparedChunks = AsyncIterable<PreparedItem[]>;

/**
 * Read, map and validate one input on the calling thread.
 * @example for await (const items of prepareInput(spec, await loadProfile(), {})) …
 */
export function prepareInput(
  spec: InputSpec,
  profile: CompiledProfile,
  opts: ReadOptions,
  silent?: SilentErrors,
): PreparedChunks {
  return prepareRecords(readInput(spec, opts), profile, silent);
}

/**
 * Map and validate records as a reader yields them (the part of prepareInput after reading).
 * @example for await (const items of prepareRecords(readCsv(bytes, 'a.csv', opts), profile)) …
 */
export async function* prepareRecords(
  records: RecordChunks,
  profile: CompiledProfile,
  silent?: SilentErrors,
  /** These records start the input (the pool's later chunks do not): a foreign export is told from them. */
  inputStart = true,
): PreparedChunks {
  const relaxed = profile.relaxed;
  let first = inputStart;
  for await (const chunk of records) {
    // Another processor's export under a built-in profile: one line from its first records, not a reject a record.
    if (first) {
      checkForeign(profile, chunk);
      first = false;
    }
    const out: PreparedItem[] = [];
    for (let k = 0; k < chunk.length; k++) {
      const item = chunk[k] as (typeof chunk)[number];
      if (item.kind === 'reject') {
        const r = item.reject;
        out.push({
          kind: 'reject',
          source: r.source,
          line: r.line,
          errors: [{ field: '(record)', message: r.message }],
          record: r.raw === undefined ? undefined : { raw: r.raw },
        });
        continue;
      }
      const rec = item.record;
      const expand = profile.expand;
      if (expand === undefined) {
        out.push(prepareOne(profile, rec, rec.fields, relaxed, silent));
        continue;
      }
      const views = expand.expand(rec.fields);
      if (!Array.isArray(views)) {
        out.push({
          kind: 'reject',
          source: rec.source,
          line: rec.line,
          errors: [{ field: '(record)', message: views.none }],
          record: profile.maskRecord(rec.fields),
        });
        continue;
      }
      for (let v = 0; v < views.length; v++) {
        const prepared = prepareOne(profile, rec, views[v] as Record<string, unknown>, relaxed, silent);
        if (v > 0) prepared.expanded = true;
        out.push(prepared);
      }
    }
    yield out;
  }
}

/** Map and validate one record (or one element's view of it): a transaction ready to send, or a reject. */
function prepareOne(
  profile: CompiledProfile,
  rec: { source: string; line: number; invalidUtf8?: boolean },
  fields: Record<string, unknown>,
  relaxed: readonly string[],
  silent: SilentErrors | undefined,
): PreparedItem {
  let tx: TransactionNotification;
  try {
    const mapped = profile.mapValid(fields, rec.invalidUtf8 === true);
    if (!mapped.ok)
      return {
        kind: 'reject',
        source: rec.source,
        line: rec.line,
        errors: mapped.errors,
        record: profile.maskRecord(fields),
      };
    tx = mapped.tx;
    silent?.add(tx, fields, rec);
  } catch (err) {
    // Anything unexpected rejects that record alone.
    if (err instanceof SvcIngestError) throw err;
    const message = `could not process the record: ${err instanceof Error ? err.message : String(err)}`;
    return {
      kind: 'reject',
      source: rec.source,
      line: rec.line,
      errors: [{ field: '(record)', message }],
      record: undefined,
    };
  }
  // Serialised here, on the thread that prepared it: a string crosses threads far cheaper than an object.
  const prepared: PreparedItem = {
    kind: 'tx',
    id: tx.transactionId,
    json: JSON.stringify(tx),
    source: rec.source,
    line: rec.line,
    codes: codeKey(tx as unknown as Record<string, unknown>),
    // Set when its batch's body is encoded (client/body.ts, WireRecord): declared here, so every record keeps one
    // shape and the three fields need no backing store of their own then.
    wire: undefined,
    at: undefined,
    end: undefined,
  };
  if (relaxed.length > 0) {
    const without = relaxed.filter((f) => (tx as unknown as Record<string, unknown>)[f] === undefined);
    if (without.length > 0) prepared.relaxed = without;
  }
  return prepared;
}
