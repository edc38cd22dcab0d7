// A CSV header's record builder: values → the fields object, one fixed shape per header.

/** Builds one record's fields object from its values (as many as the header has columns). */
export type FieldsBuilder = (values: readonly string[]) => Record<string, unknown>;

/** Widest header given a builder of its own; wider ones (rare) are built key by key. */
const MAX_LITERAL_COLUMNS = 256;

/**
 * The builder for one header. An object built key by key (`fields[column] = value`, ~30 keyed stores) drops into
 * V8's slow dictionary mode: ~0.5 µs and ~1.5 KB more per record than an object literal of the same keys, which
 * V8 allocates in one piece with a fixed shape. So the literal is generated, once per header. The column names
 * are input text: each enters the code only as a JSON string literal (JSON.stringify escapes quotes, backslashes,
 * line breaks and lone surrogates, and JSON text is valid JavaScript), never as an identifier or code. A header
 * with a `__proto__` column (a literal key `"__proto__"` would mean the prototype) or very many columns is built
 * key by key as before; both ways give the same own properties in the same order.
 * @example fieldsBuilder(['id', 'amount'])(['t-1', '500']) // { id: 't-1', amount: '500' }
 */
export function fieldsBuilder(columns: readonly string[]): FieldsBuilder {
  if (columns.length > MAX_LITERAL_COLUMNS || columns.includes('__proto__')) return keyByKey(columns);
  const body = columns.map((c, i) => `${JSON.stringify(c)}: v[${i}]`).join(',\n');
  return new Function('v', `return {\n${body}\n};`) as FieldsBuilder;
}

/** The generic builder: one keyed store per column. */
export function keyByKey(columns: readonly string[]): FieldsBuilder {
  const proto = columns.indexOf('__proto__');
  if (proto >= 0) {
    // `fields.__proto__ = v` would set (or, for text, ignore) the prototype: a column of that name is an own
    // property of an object without one, read like any other.
    return (values) => {
      const fields: Record<string, unknown> = Object.create(null);
      for (let i = 0; i < values.length; i++) fields[columns[i] as string] = values[i];
      return fields;
    };
  }
  return (values) => {
    const fields: Record<string, unknown> = {};
    for (let i = 0; i < values.length; i++) fields[columns[i] as string] = values[i];
    return fields;
  };
}
