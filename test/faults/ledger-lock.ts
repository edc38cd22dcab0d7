// What the ledger-lock tests look at: a refused run's one error line, and a holder's owner file.
import { readFileSync } from 'node:fs';
import { expect } from 'vitest';
import type { CliResult } from '../helpers/cli.ts';
import { STACK } from './helpers.ts';

/** One line on stderr, `svc-ingest: CODE: …`, no stack trace. */
export function oneLine(r: CliResult, code: string): string {
  const lines = r.stderr.trim().split('\n');
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(new RegExp(`^svc-ingest: ${code}: `));
  expect(r.stderr).not.toMatch(STACK);
  return lines[0] as string;
}

/** The owner file is created, then its JSON written: true once the JSON is there (a kill in between leaves it empty). */
export function ownerWritten(ledger: string): boolean {
  try {
    return JSON.parse(readFileSync(`${ledger}.lock`, 'utf8')).pid !== undefined;
  } catch {
    return false;
  }
}
