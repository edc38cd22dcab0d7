// Types shared by the readers: a raw source record and a line that could not be parsed.

/**
 * One record as read from a source, before mapping. CSV values are strings (never cast);
 * NDJSON values are whatever JSON.parse gave (nested objects kept).
 * @example { source: 'exports/a.csv', line: 2, fields: { transactionId: 't-1', postedAmount: '500' } }
 */
export interface RawRecord {
  source: string;
  /** 1-based line in the source where the record starts (a CSV header is line 1). */
  line: number;
  fields: Record<string, unknown>;
  /**
   * Set when the record's bytes are not all valid UTF-8: the decoder put U+FFFD where they were, and
   * validation rejects a field holding one rather than send it. Absent on the common path.
   */
  invalidUtf8?: boolean;
}

/** A piece of input that could not be parsed into a record (bad JSON line, ragged CSV row...). */
export interface ParseReject {
  source: string;
  line: number;
  message: string;
  /** The raw text, truncated and with any card number masked, when available. */
  raw?: string;
}

export type ReadItem = { kind: 'record'; record: RawRecord } | { kind: 'reject'; reject: ParseReject };

/** Readers yield items in input order, in chunks (arrays), so per-item async overhead stays low. */
export type RecordChunks = AsyncIterable<ReadItem[]>;
