// Every setting of the table (src/config/schema.ts) is named on at most five lines of src/, and none has a default
// of its own below src/config/ (a `?? 90` where the table says something else). A line names a setting when it
// holds, outside a comment: its dotted path (`send.maxRetries`), its env variable, its flag (`--max-retries`), or
// its key's last part as a word (`maxRetries`) — unless that word is a plain lower-case word or the last part of
// two keys (`url`, `concurrency`, `timeoutMs`), which a line names as `group.word` (`ledger.url`), or for a
// top-level key as `config.word` / `cfg.word`. Code only: a string literal of more than one word (a message, a
// help text, an example command line) names the setting to a reader and is not read, but for its template's
// `${…}` expressions; a string that is one word or key (`'ledger.url'`, `'batchSize'`) is a key in use and counts.
// A value copied field by field (`leaseMs: o.leaseMs`) is on one more line each time, so it still counts. Another
// concept that shares a key's word is named for what it is (the breaker's probe wait probeInMs, retried.ts's
// baseDelayMs, the splitter's pieceBytes, a file ledger's ledgerFile and a run's rejectsFile from whichever source
// named them, destinationOf's url and scope, which a --destination gives too).
// src/simulator/ plays the service and is not counted.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG_KEYS, type KeySpec } from '../../src/config/index.ts';
import { ROOT } from '../helpers/cli.ts';

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return relative(ROOT, path) === 'src/simulator' ? [] : sources(path);
    return e.name.endsWith('.ts') ? [path] : [];
  });
}

/** The end of the `${…}` opened at `from` (the index of its `}`), braces counted. */
function closingBrace(text: string, from: number): number {
  let depth = 0;
  for (let j = from; j < text.length; j++) {
    if (text[j] === '{') depth++;
    else if (text[j] === '}' && --depth === 0) return j;
  }
  return text.length;
}

/**
 * A line's code as the count reads it: a trailing `//` comment dropped, and each string literal that is more than
 * one word (a message, a help text, an example) emptied but for its template's `${…}` expressions; a string that
 * is one word or key (`'ledger.url'`, `'batchSize'`, `'SVC_LEDGER_URL'`) is a key in use and stays.
 */
function codeOf(text: string): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
    if (c === '/' && text[i + 1] === '/') break;
    if (c !== "'" && c !== '"' && c !== '`') {
      out += c;
      i++;
      continue;
    }
    let body = '';
    const exprs: string[] = [];
    let j = i + 1;
    while (j < text.length && text[j] !== c) {
      if (text[j] === '\\') {
        body += text.slice(j, j + 2);
        j += 2;
      } else if (c === '`' && text[j] === '$' && text[j + 1] === '{') {
        const end = closingBrace(text, j + 1);
        exprs.push(codeOf(text.slice(j + 2, end)));
        body += ' ';
        j = end + 1;
      } else body += text[j++];
    }
    out += /^[\w.-]+$/.test(body) ? `${c}${body}${c}` : `${c}${exprs.join(' ')}${c}`;
    i = j + 1;
  }
  return out;
}

/** Each line of code of src/ (comment lines left out, the rest as codeOf reads it), with where it is. */
const LINES = sources(join(ROOT, 'src')).flatMap((file) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .map((text, i) => ({ at: `${relative(ROOT, file)}:${i + 1}`, text, code: codeOf(text) }))
    .filter((l) => !/^\s*(\/\/|\/\*|\*)/.test(l.text)),
);

const leafOf = (k: KeySpec): string => k.path.split('.').pop() as string;
const LEAVES = CONFIG_KEYS.map(leafOf);
const literal = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The patterns that name setting `k` on a line (the header says which). */
function namesOf(k: KeySpec): { patterns: RegExp[]; word: RegExp } {
  const leaf = leafOf(k);
  const plain = /^[a-z]+$/.test(leaf) || LEAVES.filter((l) => l === leaf).length > 1;
  const flag = k.flag ? `--${k.flag.name ?? leaf.replace(/([A-Z])/g, '-$1').toLowerCase()}` : undefined;
  const word = plain
    ? new RegExp(k.path.includes('.') ? `\\b${literal(k.path)}\\b` : `\\b(config|cfg)\\.${leaf}\\b`)
    : new RegExp(`\\b${leaf}\\b`);
  const patterns = [new RegExp(`\\b${k.env}\\b`), word];
  if (k.path.includes('.')) patterns.push(new RegExp(`\\b${literal(k.path)}\\b`));
  if (flag) patterns.push(new RegExp(`${flag}\\b`));
  return { patterns, word };
}

describe('the settings in src/', () => {
  it('each setting of the table is named on at most five lines of src/', () => {
    const over: string[] = [];
    for (const k of CONFIG_KEYS) {
      const { patterns } = namesOf(k);
      const lines = LINES.filter((l) => patterns.some((p) => p.test(l.code)));
      if (lines.length > 5)
        over.push(`${k.path}: ${lines.length} lines (at most 5)\n  ${lines.map((l) => l.at).join('\n  ')}`);
    }
    expect(over).toEqual([]);
  });

  it('no setting that has a default in the table gets another one below src/config/ (`?? 60_000`)', () => {
    const found: string[] = [];
    for (const k of CONFIG_KEYS.filter((k) => k.default !== undefined)) {
      const { word } = namesOf(k);
      const fallback = new RegExp(`${word.source}\\s*(\\?\\?|\\|\\|)`);
      for (const l of LINES)
        if (!l.at.startsWith('src/config/') && fallback.test(l.code))
          found.push(`${k.path}: ${l.at}: ${l.text.trim()}`);
    }
    expect(found).toEqual([]);
  });
});
