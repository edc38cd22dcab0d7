// What a compiled mapping profile is: the types the compiler builds and the rest of the tool uses.
import type { FieldError } from '../model/field-error.ts';
import type { InputFormat } from '../model/input.ts';
import type { TransactionField, TransactionNotification } from '../model/transaction.ts';
import type { CompiledExpand } from './expand.ts';
import type { ProfileNotes } from './rule-kit.ts';

/**
 * A mapping profile compiled into closures: source record → TransactionNotification.
 * @example const p = await loadProfile('northwind-csv'); const r = p.map(record.fields); if (r.ok) send(r.tx);
 */
export interface CompiledProfile {
  name: string;
  description?: string;
  /** A hint the profile may declare. */
  format?: InputFormat;
  delimiter?: string;
  /** CSV columns the profile reads for a required field without a default (checked against headers). */
  requiredColumns: string[];
  /** Every column a rule names, with the rule's JSON path (checked against CSV headers: see columns.ts). */
  columns: readonly ColumnUse[];
  /** Fields a record must have (validateTransaction's list): REQUIRED_FIELDS, less what the profile relaxed. */
  required: readonly TransactionField[];
  /** Required fields the profile lets a record go without (`"required": false`): warned about once a run. */
  relaxed: readonly TransactionField[];
  /** The profile's own output values of code fields outside the code lists (`JSON path: problem`): reported. */
  codeNotes: readonly string[];
  /** Fields required only for merchants in some countries (`"required": "where-states"`): the state abroad. */
  requiredWhere: ReadonlyArray<{ field: string; countries: readonly string[] }>;
  /**
   * Id fields declared the bank's own numeric ids (`ownNumericIds`): an all-digit value is sent as it is, not
   * checked for card numbers. Logged at the start of every run and shown in the summary.
   */
  ownIds: readonly string[];
  /** `expand`: each record becomes one notification per matching element of an array (prepare.ts applies it). */
  expand?: CompiledExpand;
  /** `controlTotals`: the amount column a control total sums, and the export's trailer row (map/control.ts). */
  control?: CompiledControl;
  /** A profile shipped in config/mappings/ (loaded by name): run on another processor's export, it says so at once. */
  builtIn?: boolean;
  /** What the profile fixes that records may contradict (a zone, an amount's currency): silent-errors.ts. */
  notes: ProfileNotes;
  /**
   * Source record → TransactionNotification (empty optional fields left out, never null), or the
   * conversion errors of every field. Pure. Run validateTransaction on an ok result before sending.
   */
  map(
    fields: Record<string, unknown>,
  ): { ok: true; tx: TransactionNotification } | { ok: false; errors: FieldError[] };
  /**
   * map, then validateTransaction's checks (with the profile's `required`) on the mapped values: the transaction
   * ready to send, or the conversion errors (when mapping failed) or else the validation errors. What the record
   * path runs per record: the same answer as map + validateTransaction, without building the object first. Its
   * transaction holds every field, an absent one as undefined (JSON.stringify gives map's text).
   * `invalidUtf8`: the record's bytes were not all valid UTF-8 (validateTransaction's flag).
   */
  mapValid(
    fields: Record<string, unknown>,
    invalidUtf8: boolean,
  ): { ok: true; tx: TransactionNotification } | { ok: false; errors: FieldError[] };
  /** The source record with every card number masked (PAN column and any Luhn-valid 13-19 digit run). */
  maskRecord(fields: Record<string, unknown>): Record<string, unknown>;
}

/**
 * A column (CSV) or path (NDJSON) a rule reads.
 * @example { column: 'ARN', rule: 'fields.acquirerReferenceNumber.from', field: 'acquirerReferenceNumber', required: false }
 */
export interface ColumnUse {
  column: string;
  /** JSON path of the profile key that names it. */
  rule: string;
  field: TransactionField;
  /** Its field is required and has no default: a header without it cannot be mapped. */
  required: boolean;
}

/** The trailer row a profile declares: the input's last row, carrying the producer's count and total. */
export interface CompiledTrailer {
  /** The row is a trailer only when this column holds this value (no marker: the last row is the trailer). */
  when?: { get: (rec: Record<string, unknown>) => unknown; column: string; equals: string };
  count: (rec: Record<string, unknown>) => unknown;
  total?: (rec: Record<string, unknown>) => unknown;
  /** As declared, for messages. */
  countColumn: string;
  totalColumn?: string;
}

/** What a control total reads of each record, and the trailer. */
export interface CompiledControl {
  /** The column or path summed for the amount total (default: the one the profile's postedAmount reads). */
  amount: (rec: Record<string, unknown>) => unknown;
  amountColumn: string;
  trailer?: CompiledTrailer;
}
