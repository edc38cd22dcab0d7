// The raw text a reject carries, shared by the CSV and NDJSON readers (its own module, so reading NDJSON does not
// load csv-parse).
import { maskExcerpt } from '../mask/index.ts';

/** The raw text of a rejected piece: 200 characters, masked before it is cut so no card number half survives. */
export function rejectText(text: string): string {
  return maskExcerpt(text, 200);
}
