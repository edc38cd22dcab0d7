// A problem with one field of one record: what validation, mapping and the reader report.

/**
 * One problem with one field of a record.
 * @example { field: 'postedAmount', message: 'expected minor units (digits, no leading zero, at most 15), got "12.34"' }
 */
export interface FieldError {
  field: string;
  message: string;
}
