// Source paths of a mapping profile: a column name, a dotted path into nested NDJSON objects, and array
// selectors ([n], [key=value]); parsed once at load, compiled into a getter.

/** A getter compiled from one path: source record → the value there, or undefined. */
export type Getter = (rec: Record<string, unknown>) => unknown;

/**
 * One step of a parsed path: an object key, an array position (negative counts from the end), or the
 * first array element whose `key` reads as `equals`.
 * @example parsePath('events[type=CLEARING].created') // [{key:'events'}, {where:'type', equals:'CLEARING'}, {key:'created'}]
 */
export type PathStep = { key: string } | { index: number } | { where: string; equals: string };

/** A path the language does not understand; the message says what was expected. */
export class PathError extends Error {}

/** `\[`, `\]`, `\.` and `\\` stand for the character itself (a CSV header such as `Amount [USD]`). */
const ESCAPABLE = '[].\\';

/**
 * The text a path names as one key: escapes removed. Looked up first, as a whole, in every record (a
 * CSV header `merchant.city` or `Amount [USD]`), and the column name checked against CSV headers.
 * @example pathText('Amount \\[USD\\]') // 'Amount [USD]'
 */
export function pathText(path: string): string {
  return path.includes('\\') ? path.replace(/\\([[\].\\])/g, '$1') : path;
}

const INDEX = /^-?\d{1,9}$/;
const SELECTOR_HELP = 'a selector [n] or [key=value]';

function parseSelector(path: string, inner: string): PathStep {
  const text = inner.trim();
  if (INDEX.test(text)) return { index: Number(text) };
  const eq = text.indexOf('=');
  if (eq <= 0) throw new PathError(`${SELECTOR_HELP}, got [${inner}] in ${JSON.stringify(path)}`);
  const key = text.slice(0, eq).trim();
  let equals = text.slice(eq + 1).trim();
  if (equals.startsWith('=')) throw new PathError(`one "=" in [${inner}] of ${JSON.stringify(path)}`);
  // Quotes are optional: [type="CLEARING"] and [type=CLEARING] mean the same.
  if (equals.length >= 2 && (equals[0] === '"' || equals[0] === "'") && equals.at(-1) === equals[0])
    equals = equals.slice(1, -1);
  if (key === '' || equals === '' || /[.[\]]/.test(key))
    throw new PathError(`${SELECTOR_HELP}, got [${inner}] in ${JSON.stringify(path)}`);
  return { where: key, equals };
}

/**
 * Parse a path. Dots separate keys (outside brackets); `[n]` picks an array element by position,
 * `[key=value]` the first element whose `key` is `value` (compared as text; quotes optional); a
 * backslash before `[`, `]`, `.` or another backslash makes it part of the key.
 * Throws PathError for anything else: a stray or unclosed bracket, an empty selector, a selector not
 * after a key, `[*]`, a `*` key, or a JSONPath `$` root.
 * @example parsePath('merchant.city') // [{ key: 'merchant' }, { key: 'city' }]
 */
export function parsePath(path: string): PathStep[] {
  if (path.startsWith('$.') || path.startsWith('$['))
    throw new PathError(`a path without the JSONPath root "$", got ${JSON.stringify(path)}`);
  const steps: PathStep[] = [];
  let name = '';
  // True right after a selector: only "." or another selector may follow.
  let afterSelector = false;
  const endKey = (): void => {
    if (name === '*') throw new PathError(`a key, got the wildcard "*" in ${JSON.stringify(path)}`);
    steps.push({ key: name });
    name = '';
  };
  for (let i = 0; i < path.length; i++) {
    const ch = path[i] as string;
    const next = path[i + 1];
    if (ch === '\\' && next !== undefined && ESCAPABLE.includes(next)) {
      if (afterSelector)
        throw new PathError(
          `"." or a selector after "]", got ${JSON.stringify(ch)} in ${JSON.stringify(path)}`,
        );
      name += next;
      i++;
    } else if (ch === '[') {
      const close = path.indexOf(']', i + 1);
      const inner = close < 0 ? '' : path.slice(i + 1, close);
      if (close < 0 || inner.includes('['))
        throw new PathError(`a closed selector [n] or [key=value] in ${JSON.stringify(path)}`);
      if (!afterSelector) {
        if (name === '')
          throw new PathError(`a key before the selector [${inner}] in ${JSON.stringify(path)}`);
        endKey();
      }
      steps.push(parseSelector(path, inner));
      afterSelector = true;
      i = close;
    } else if (ch === ']') {
      throw new PathError(`a "]" only to close a selector, in ${JSON.stringify(path)}`);
    } else if (ch === '.') {
      if (!afterSelector) endKey();
      afterSelector = false;
    } else {
      if (afterSelector)
        throw new PathError(
          `"." or a selector after "]", got ${JSON.stringify(ch)} in ${JSON.stringify(path)}`,
        );
      name += ch;
    }
  }
  if (!afterSelector) endKey();
  return steps;
}

/**
 * `o[k]` when `o` holds `k` itself, else undefined: a path never reads what an object inherits (`constructor`,
 * `__proto__`, `toString` of a record that has no such key). Text and numbers, the common values, cost one typeof:
 * nothing inherited from Object.prototype or Array.prototype is one.
 * @example own({}, 'constructor') // undefined
 */
export function own(o: Record<string, unknown>, k: string): unknown {
  const v = o[k];
  if (v === undefined || (typeof v !== 'object' && typeof v !== 'function')) return v;
  return Object.hasOwn(o, k) ? v : undefined;
}

function step(o: unknown, s: PathStep): unknown {
  if ('key' in s) {
    if (typeof o !== 'object' || o === null) return undefined;
    return own(o as Record<string, unknown>, s.key);
  }
  if (!Array.isArray(o)) return undefined;
  if ('index' in s) return o[s.index < 0 ? o.length + s.index : s.index];
  for (let i = 0; i < o.length; i++) {
    const el = o[i];
    if (typeof el !== 'object' || el === null) continue;
    const v = own(el as Record<string, unknown>, s.where);
    if (v === s.equals || ((typeof v === 'number' || typeof v === 'boolean') && String(v) === s.equals))
      return el;
  }
  return undefined;
}

/**
 * Getter of a column or a path into nested NDJSON objects. A key that holds the whole path literally
 * wins (a CSV header `merchant.city`, a flattened export). Throws PathError for a path parsePath refuses.
 * @example compileGetter('events[type=CLEARING].created')({ events: [{ type: 'CLEARING', created: 't' }] }) // 't'
 */
export function compileGetter(path: string): Getter {
  const steps = parsePath(path);
  const text = pathText(path);
  if (steps.length === 1 && 'key' in (steps[0] as PathStep)) return (rec) => own(rec, text);
  if (steps.every((s) => 'key' in s)) {
    const parts = steps.map((s) => (s as { key: string }).key);
    return (rec) => {
      const literal = own(rec, text);
      if (literal !== undefined) return literal;
      let o: unknown = rec;
      for (let i = 0; i < parts.length; i++) {
        if (typeof o !== 'object' || o === null) return undefined;
        o = own(o as Record<string, unknown>, parts[i] as string);
      }
      return o;
    };
  }
  return (rec) => {
    const literal = own(rec, text);
    if (literal !== undefined) return literal;
    let o: unknown = rec;
    for (let i = 0; i < steps.length; i++) {
      o = step(o, steps[i] as PathStep);
      if (o === undefined) return undefined;
    }
    return o;
  };
}
