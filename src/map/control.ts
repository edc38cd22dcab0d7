// A profile's `controlTotals`: which column (or path) holds the amount a control total sums, and the export's
// trailer row, when it has one: how it is told (its last row, optionally with a marker value) and which of its
// columns hold the record count and the amount total. Checked by src/send/control-totals.ts.
import { SvcIngestError } from '../errors.ts';
import { compileGetter, type Getter, PathError } from './path.ts';
import type { ColumnUse, CompiledControl, CompiledTrailer } from './types.ts';

export type { CompiledControl, CompiledTrailer } from './types.ts';

function bad(source: string, at: string, expected: string, got: unknown): never {
  throw new SvcIngestError(
    'MAPPING_INVALID',
    `${source}: controlTotals${at}: expected ${expected}, got ${JSON.stringify(got)}`,
    { source },
  );
}

function getter(source: string, at: string, path: unknown): Getter {
  if (typeof path !== 'string' || path === '') bad(source, at, 'a column name or JSON path', path);
  try {
    return compileGetter(path);
  } catch (err) {
    if (err instanceof PathError) bad(source, at, 'a column name or JSON path', path);
    throw err;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Compile `controlTotals` (undefined when the profile has none: the amount is then the postedAmount column, and
 * there is no trailer). `columns`: the profile's column uses, for the default amount column.
 * @example compileControl('p.json', { trailer: { when: { column: 'type', equals: 'T' }, count: 'id', total: 'amount' } }, cols)
 */
export function compileControl(
  source: string,
  doc: unknown,
  columns: readonly ColumnUse[],
): CompiledControl | undefined {
  const fallback = columns.find((c) => c.field === 'postedAmount')?.column ?? 'postedAmount';
  if (doc === undefined) return undefined;
  if (!isObject(doc)) bad(source, '', 'an object: { "amount"?, "trailer"? }', doc);
  for (const k of Object.keys(doc))
    if (k !== 'amount' && k !== 'trailer') bad(source, '', 'amount, trailer', k);
  const amountColumn = doc.amount === undefined ? fallback : (doc.amount as string);
  const control: CompiledControl = { amount: getter(source, '.amount', amountColumn), amountColumn };
  const t = doc.trailer;
  if (t === undefined) return control;
  if (!isObject(t)) bad(source, '.trailer', 'an object: { "when"?, "count", "total"? }', t);
  for (const k of Object.keys(t))
    if (!['when', 'count', 'total'].includes(k)) bad(source, '.trailer', 'when, count, total', k);
  const trailer: CompiledTrailer = {
    count: getter(source, '.trailer.count', t.count),
    countColumn: t.count as string,
  };
  if (t.total !== undefined) {
    trailer.total = getter(source, '.trailer.total', t.total);
    trailer.totalColumn = t.total as string;
  }
  if (t.when !== undefined) {
    const w = t.when;
    if (!isObject(w) || typeof w.equals !== 'string')
      bad(source, '.trailer.when', '{ "column": NAME, "equals": "TEXT" }', w);
    trailer.when = {
      get: getter(source, '.trailer.when.column', w.column),
      column: w.column as string,
      equals: w.equals,
    };
  }
  control.trailer = trailer;
  return control;
}

/** The control of a profile without `controlTotals`: the amount is what its postedAmount reads, no trailer. */
export function defaultControl(columns: readonly ColumnUse[]): CompiledControl {
  const amountColumn = columns.find((c) => c.field === 'postedAmount')?.column ?? 'postedAmount';
  return { amount: compileGetter(amountColumn), amountColumn };
}
