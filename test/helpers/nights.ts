// Nights for the shipped units: the Northwind sample as the night's export (gzipped, as the units name it),
// what a run wrote on stderr (the journal, a pod's log) as JSON lines, and the docs' failed-night recipe run on it.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { ROOT } from './cli.ts';

/** The file lines (1 = the header) of samples/northwind.csv that are rejected (northwind-csv). */
const REJECTED_LINES = [9, 18, 25];

/**
 * The night's export, gzipped: 'good' holds the sample's 27 valid records, 'rejects' all 30 (3 rejected).
 * `idPrefix` replaces the ids' `NW2025` so a night holds records the ledger has not seen.
 */
export function northwindExport(kind: 'good' | 'rejects', idPrefix = 'NW2025'): Buffer {
  const lines = readFileSync(join(ROOT, 'samples/northwind.csv'), 'utf8').trimEnd().split('\n');
  const kept = kind === 'good' ? lines.filter((_, i) => !REJECTED_LINES.includes(i + 1)) : lines;
  return gzipSync(`${kept.map((l) => l.replace(/^NW2025/, idPrefix)).join('\n')}\n`);
}

export type LogLine = Record<string, unknown> & { event?: string; exitStatus?: number };

/** Every stderr line, parsed (each must be JSON: a line that is not fails the test here). */
export function jsonLines(stderr: string): LogLine[] {
  return stderr
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => {
      try {
        return JSON.parse(l) as LogLine;
      } catch {
        throw new Error(`a stderr line that is not JSON: ${l}`);
      }
    });
}

export const RECIPE_MARKER = '<!-- failed-night-recipe -->';

/** The jq options and filter of the failed-night recipe, as docs/install.md writes it (the block after the marker). */
export function failedNightJq(): string[] {
  const text = readFileSync(join(ROOT, 'docs/install.md'), 'utf8');
  const at = text.indexOf(RECIPE_MARKER);
  if (at === -1) throw new Error(`docs/install.md: no ${RECIPE_MARKER}`);
  const block = /```[^\n]*\n([\s\S]*?)\n```/.exec(text.slice(at))?.[1] ?? '';
  const m = /\| jq ((?:-\w+ )*)'([^']+)'/.exec(block);
  if (!m) throw new Error(`docs/install.md: no "| jq … '…'" in the block after ${RECIPE_MARKER}`);
  return [...m[1]!.trim().split(' ').filter(Boolean), m[2]!];
}

/**
 * The recipe run by jq on a journal (the runs' stderr, one after the other, with the service manager's own
 * lines between them, as `journalctl -u` shows them): the lines it prints.
 */
export function runRecipe(journal: string): LogLine[] {
  const r = spawnSync('jq', failedNightJq(), { input: journal, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`jq: ${r.stderr}`);
  return r.stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as LogLine);
}

export const hasJq = spawnSync('jq', ['--version']).status === 0;
