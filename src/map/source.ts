// A rule's source: `from` (a column or path), `template` (several joined) or `hash` (a derived id).
import { createHash } from 'node:crypto';
import { holdsCardNumberId } from '../mask/index.ts';
import { type Getter, pathText } from './path.ts';
import {
  bad,
  type ColumnRef,
  type Env,
  getterAt,
  isEmpty,
  isObject,
  type Json,
  SOURCES,
  scalarToString,
} from './rule-kit.ts';

/** One hash part as text: objects as JSON, anything else trimmed. */
function hashPart(v: unknown): string {
  return typeof v === 'object' ? JSON.stringify(v) : String(v).trim();
}

export function compileSource(
  env: Env,
  path: string,
  rule: Record<string, Json>,
): { get: Getter; columns: ColumnRef[] } {
  const present = SOURCES.filter((k) => rule[k] !== undefined);
  if (present.length > 1) bad(env.source, path, 'one of from, template, const, hash', present);
  if (rule.from !== undefined) {
    const from = rule.from;
    if (typeof from !== 'string' || from === '')
      bad(env.source, `${path}.from`, 'a column name or dotted path', from);
    return {
      get: getterAt(env, `${path}.from`, from),
      columns: [{ column: pathText(from), rule: `${path}.from` }],
    };
  }
  if (rule.template !== undefined) {
    const t = rule.template;
    if (typeof t !== 'string') bad(env.source, `${path}.template`, 'a string like "{DATE} {TIME}"', t);
    const literals: string[] = [];
    const getters: Getter[] = [];
    const optional: boolean[] = [];
    const columns: ColumnRef[] = [];
    const re = /\{([^{}]+)\}/g;
    let last = 0;
    for (let m = re.exec(t); m !== null; m = re.exec(t)) {
      literals.push(t.slice(last, m.index));
      // `{A?}`: an optional part, left out with the text before it when empty.
      const opt = (m[1] as string).endsWith('?');
      const col = opt ? (m[1] as string).slice(0, -1) : (m[1] as string);
      if (col === '') bad(env.source, `${path}.template`, 'a column name in every {…}', t);
      optional.push(opt);
      columns.push({ column: pathText(col), rule: `${path}.template` });
      getters.push(getterAt(env, `${path}.template`, col));
      last = m.index + m[0].length;
    }
    if (getters.length === 0) bad(env.source, `${path}.template`, 'at least one {column}', t);
    const tail = t.slice(last);
    if (optional.includes(true)) return { columns, get: optionalTemplate(literals, getters, optional, tail) };
    return {
      columns,
      get: (rec) => {
        let out = literals[0] as string;
        for (let i = 0; i < getters.length; i++) {
          const v = (getters[i] as Getter)(rec);
          // Any missing part makes the whole value missing: "2025-10-09 " is not half a timestamp.
          if (isEmpty(v)) return undefined;
          out += scalarToString(v).trim() + (i + 1 < literals.length ? (literals[i + 1] as string) : tail);
        }
        return out;
      },
    };
  }
  if (rule.hash !== undefined) {
    const h = rule.hash;
    if (!isObject(h)) bad(env.source, `${path}.hash`, 'an object {"of": [columns], ...}', h);
    for (const k of Object.keys(h)) {
      if (!['of', 'separator', 'length', 'prefix'].includes(k))
        bad(env.source, `${path}.hash.${k}`, 'of, separator, length or prefix', k);
    }
    const of = h.of;
    if (!Array.isArray(of) || of.length === 0 || !of.every((c) => typeof c === 'string' && c !== '')) {
      bad(env.source, `${path}.hash.of`, 'a non-empty array of column names', of);
    }
    const sep = h.separator ?? '|';
    // One character (not the backslash, which escapes it): the encoding below needs both to be unambiguous.
    if (typeof sep !== 'string' || sep.length !== 1 || sep === '\\')
      bad(env.source, `${path}.hash.separator`, 'one character other than a backslash', sep);
    const length = h.length ?? 32;
    if (typeof length !== 'number' || !Number.isInteger(length) || length < 8 || length > 64) {
      bad(env.source, `${path}.hash.length`, 'integer 8..64', length);
    }
    const prefix = h.prefix ?? '';
    if (typeof prefix !== 'string' || !/^[A-Za-z0-9._:-]{0,31}$/.test(prefix)) {
      bad(env.source, `${path}.hash.prefix`, 'up to 31 characters of A-Z a-z 0-9 . _ : -', prefix);
    }
    const cols = of as string[];
    const getters = cols.map((c, i) => getterAt(env, `${path}.hash.of[${i}]`, c));
    const n = getters.length;
    const escapedSep = `\\${sep}`;
    return {
      columns: cols.map((c, i) => ({ column: pathText(c), rule: `${path}.hash.of[${i}]` })),
      get: (rec) => {
        // Parts joined by the separator, as before, while no part holds it (so ids made earlier stay the
        // same); otherwise every backslash and separator inside a part is escaped with a backslash. A plain
        // join holds exactly n-1 separators and an escaped one at least n, and each form decodes one way
        // only: two different tuples never hash the same text.
        let joined = '';
        let holdsSeparator = false;
        for (let i = 0; i < n; i++) {
          const v = (getters[i] as Getter)(rec);
          // Like a template, any empty part makes the id missing (never an id made of the other parts).
          if (isEmpty(v)) return undefined;
          const part = hashPart(v);
          if (part.includes(sep)) holdsSeparator = true;
          joined = i === 0 ? part : joined + sep + part;
        }
        if (holdsSeparator) {
          joined = '';
          for (let i = 0; i < n; i++) {
            const part = hashPart((getters[i] as Getter)(rec))
              .replaceAll('\\', '\\\\')
              .replaceAll(sep, escapedSep);
            joined = i === 0 ? part : joined + sep + part;
          }
        }
        let id = prefix + createHash('sha256').update(joined).digest('hex').slice(0, length);
        // Hex can hold a digit run that reads as a card number (~1 id in 1,000 at 32 characters), which
        // validation would refuse: hash again, deterministically, until it does not.
        for (let n = 1; n <= 8 && holdsCardNumberId(id); n++)
          id = prefix + createHash('sha256').update(`${joined}${sep}#${n}`).digest('hex').slice(0, length);
        return id;
      },
    };
  }
  return { get: () => undefined, columns: [] };
}

/**
 * A template with optional parts (`{A?}`): an empty optional part is left out with the text before it (the text
 * between it and the part before); the text before a part is written only once some part stands before it, so
 * `{A?}-{B}` with A empty is `B`, not `-B`. The text before the first part and after the last are always
 * kept; a required part empty, or every part empty, makes the value missing.
 */
function optionalTemplate(literals: string[], getters: Getter[], optional: boolean[], tail: string): Getter {
  const n = getters.length;
  return (rec) => {
    let out = literals[0] as string;
    let any = false;
    for (let i = 0; i < n; i++) {
      const v = (getters[i] as Getter)(rec);
      if (isEmpty(v)) {
        if (optional[i]) continue;
        return undefined;
      }
      if (any) out += literals[i] as string;
      out += scalarToString(v).trim();
      any = true;
    }
    return any ? out + tail : undefined;
  };
}
