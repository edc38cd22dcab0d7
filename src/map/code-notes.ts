// Values a profile or an export gives a code field (transactionType, paymentType, …) outside the code lists of
// src/model/code-lists.ts: found in the profile's own output values at load, and counted in mapped records by
// `map` and `mapping check FILE`. They are reported, never refused (the lists are partly our choices).
import { type CodeCounts, codeProblem, isCodeField } from '../model/code-lists.ts';
import { isObject, type Json } from './rule-kit.ts';

/**
 * The output values of a profile's code-field rules (const, default, else, enum outputs) outside the code lists,
 * each as `JSON path: problem`.
 * @example profileCodeNotes({ paymentMethodEntryType: { const: 'ECOM' } }) // ['fields.paymentMethodEntryType.const: "ECOM" is not a known …']
 */
export function profileCodeNotes(fields: Record<string, Json>): string[] {
  const notes: string[] = [];
  for (const field of Object.keys(fields)) {
    if (!isCodeField(field)) continue;
    const rule = fields[field];
    if (!isObject(rule)) continue;
    const check = (path: string, v: Json | undefined) => {
      if (v === undefined || v === null) return;
      const problem = codeProblem(field, v);
      if (problem !== undefined) notes.push(`fields.${field}.${path}: ${problem}`);
    };
    check('const', rule.const);
    check('default', rule.default);
    check('else', rule.else);
    if (isObject(rule.enum)) for (const [k, v] of Object.entries(rule.enum)) check(`enum.${k}`, v);
  }
  return notes;
}

/**
 * The values counted in mapped records that are outside the code lists, as report lines with their record counts.
 * @example unknownCodeLines({ paymentMethodEntryType: { ECOM: 3, CHIP: 9 } }) // (with total 12) ['paymentMethodEntryType: "ECOM" is not a known … (3 of 12 records)']
 */
export function unknownCodeLines(counts: CodeCounts, total: number): string[] {
  const out: string[] = [];
  for (const [field, values] of Object.entries(counts)) {
    for (const [value, n] of Object.entries(values as Record<string, number>)) {
      const problem = codeProblem(field, value);
      if (problem !== undefined) out.push(`${field}: ${problem} (${n} of ${total} records)`);
    }
  }
  return out;
}
