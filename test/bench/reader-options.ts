// The options src/read/csv.ts gives csv-parse (its default record cap), for the bench's csv-parse-only measurements.
import type { Options } from 'csv-parse';

export const READER: Options = {
  bom: true,
  delimiter: ',',
  relax_column_count: true,
  relax_quotes: true,
  skip_empty_lines: true,
  skip_records_with_error: true,
  max_record_size: 4 << 20,
};
