// Documented examples as tests: each `svc-ingest …  # exit N` line of a markdown file's fenced `sh` blocks is run,
// in order, through the real CLI against a fresh simulator, with a ledger and rejects file of its own, and must
// end with that exit status.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, runCliHere } from './cli.ts';
import { useSimulator } from './simulator.ts';

/**
 * One documented command and the exit status written after it.
 * @example { line: 212, command: 'svc-ingest trace can-csv-0001 --customer cust-1000', args: ['trace', …], exit: 0 }
 */
export interface DocExample {
  line: number;
  command: string;
  args: string[];
  exit: number;
}

/** Words of a command line as a POSIX shell splits them (quotes and backslashes; no expansions). */
export function shellWords(text: string): string[] {
  const words: string[] = [];
  let word: string | null = null;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (quote === "'") {
      if (c === "'") quote = null;
      else word += c;
    } else if (quote === '"') {
      if (c === '"') quote = null;
      else if (c === '\\' && /["\\$`]/.test(text[i + 1] ?? '')) word = (word ?? '') + (text[++i] ?? '');
      else word += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      word ??= '';
    } else if (c === '\\') {
      word = (word ?? '') + (text[++i] ?? '');
    } else if (/\s/.test(c)) {
      if (word !== null) words.push(word);
      word = null;
    } else word = (word ?? '') + c;
  }
  if (quote) throw new Error(`unterminated quote in: ${text}`);
  if (word !== null) words.push(word);
  return words;
}

/** The `svc-ingest … # exit N` lines of the fenced sh blocks of a markdown file, in order. */
export function docExamples(path: string): DocExample[] {
  const out: DocExample[] = [];
  const lines = readFileSync(path, 'utf8').split('\n');
  let inSh = false;
  for (let i = 0; i < lines.length; i++) {
    let text = lines[i] as string;
    if (/^```/.test(text)) {
      inSh = !inSh && /^```(sh|bash|shell)\s*$/.test(text);
      continue;
    }
    if (!inSh) continue;
    const start = i;
    while (text.endsWith('\\') && i + 1 < lines.length) text = `${text.slice(0, -1)} ${lines[++i]}`;
    const m = /^\s*(svc-ingest\s.*?)\s+#\s*exit\s+(\d+)\s*$/.exec(text);
    if (!m) continue;
    const words = shellWords(m[1] as string);
    out.push({ line: start + 1, command: m[1] as string, args: words.slice(1), exit: Number(m[2]) });
  }
  return out;
}

/** A test per example of `path`, run in order against one simulator, ledger and rejects file. */
export function describeDocExamples(path: string): void {
  const examples = docExamples(path);
  describe(`the examples of ${path.slice(ROOT.length + 1)}`, () => {
    const sim = useSimulator({ seed: 1, ticketDelayMs: 10 }, 'none');
    const dir = mkdtempSync(join(tmpdir(), 'svc-doc-examples-'));
    it('has examples', () => expect(examples.length).toBeGreaterThan(0));
    for (const ex of examples) {
      it(`line ${ex.line}: ${ex.command} → exit ${ex.exit}`, async () => {
        const r = await runCliHere(ex.args, {
          env: {
            SVC_BASE_URL: sim.url,
            SVC_LEDGER_PATH: join(dir, 'transactions.ndjson'),
            SVC_REJECTS_PATH: join(dir, 'rejects.ndjson'),
          },
        });
        expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(ex.exit);
      });
    }
  });
}
