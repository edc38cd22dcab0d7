// The input formats a record can come in.

/** CSV (RFC 4180, a header line) or NDJSON (one JSON object a line). */
export type InputFormat = 'csv' | 'ndjson';
