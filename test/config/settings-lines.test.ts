// Every setting of the table (src/config/schema.ts) is named on at most five lines of src/, and none has a default
// of its own below src/config/ (a `?? 90` where the table says something else). A line names a setting when it
// holds, outside a comment: its dotted path (`send.maxRetries`), its env variable, its flag (`--max-retries`), or
// its key's last part as a word (`maxRetries`) — unless that word is a plain lower-case word or the last part of
// two keys (`url`, `concurrency`, `timeoutMs`), which a line names as `group.word` (`ledger.url`), or for a
// top-level key as `config.word` / `cfg.word`. src/simulator/ plays the service and is not counted.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG_KEYS, type KeySpec, type SettingPath } from '../../src/config/index.ts';
import { ROOT } from '../helpers/cli.ts';

/**
 * Over five lines today, with the count they may not pass; an entry goes once its setting is on five lines or
 * fewer (the test says so).
 */
const OVER_FIVE: Partial<Record<SettingPath, number>> = {
  // i47-ledger makes these one value
  'ledger.url': 18,
  'ledger.passwordFile': 31,
  'ledger.leaseMs': 33,
  'ledger.waitMs': 28,
  'ledger.poolMax': 24,
  'ledger.allowPlaintext': 22,
  'ledger.name': 7,
  // Not brought down to five yet (issue 47, Must 3): capped at today's count, so none grows. Most are a key's name
  // reused inside its consumer (breaker.ts's outageMaxMs), an option of the same name for something else (the
  // splitter's chunkBytes, the PostgreSQL pool's maxConnections), or a message naming the key.
  baseUrl: 26,
  institutionId: 7,
  'auth.tokenEnv': 9,
  'auth.tokenFile': 11,
  'tls.certFile': 7,
  'tls.keyFile': 7,
  'session.provider': 9,
  'session.tokenEnv': 7,
  'session.command': 7,
  'send.concurrency': 9,
  'send.batchSize': 12,
  'send.retryBaseMs': 19,
  'send.retryMaxMs': 14,
  'send.ledgerPath': 35,
  'send.rejectsPath': 27,
  'send.splitRetries': 7,
  'send.outageMaxMs': 9,
  'webhook.secretEnv': 14,
  'webhook.secretFile': 12,
  'webhook.maxConnections': 10,
  'prepare.chunkBytes': 10,
};

/** Settings still given a default of their own below src/config/ (the line's text, as it is). */
const FALLBACKS_LEFT: readonly string[] = [
  // i47-ledger makes these one value
  'max: o.maxConnections ?? 4,',
  'const waitMs = o.waitMs ?? 60_000;',
  'const poolMax = o.maxConnections ?? 4;',
  'const leaseMs = o.leaseMs ?? DEFAULT_LEASE_MS;',
  '{ pollMs: settlePollMs(o.leaseMs ?? 30_000) },',
  'poolMax: Math.min(2, o.poolMax ?? 2),',
];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return relative(ROOT, path) === 'src/simulator' ? [] : sources(path);
    return e.name.endsWith('.ts') ? [path] : [];
  });
}

/** Each line of code of src/ (comment lines left out), with where it is. */
const LINES = sources(join(ROOT, 'src')).flatMap((file) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .map((text, i) => ({ at: `${relative(ROOT, file)}:${i + 1}`, text }))
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
      const lines = LINES.filter((l) => patterns.some((p) => p.test(l.text)));
      const limit = OVER_FIVE[k.path] ?? 5;
      if (lines.length > limit)
        over.push(
          `${k.path}: ${lines.length} lines (at most ${limit})\n  ${lines.map((l) => l.at).join('\n  ')}`,
        );
      // An entry of OVER_FIVE whose setting is down to five goes.
      if (OVER_FIVE[k.path] !== undefined && lines.length <= 5)
        over.push(`${k.path}: ${lines.length} lines; take it out of OVER_FIVE`);
    }
    expect(over).toEqual([]);
  });

  it('no setting that has a default in the table gets another one below src/config/ (`?? 60_000`)', () => {
    const found: string[] = [];
    for (const k of CONFIG_KEYS.filter((k) => k.default !== undefined)) {
      const { word } = namesOf(k);
      const fallback = new RegExp(`${word.source}\\s*(\\?\\?|\\|\\|)`);
      for (const l of LINES)
        if (
          !l.at.startsWith('src/config/') &&
          fallback.test(l.text) &&
          !FALLBACKS_LEFT.includes(l.text.trim())
        )
          found.push(`${k.path}: ${l.at}: ${l.text.trim()}`);
    }
    expect(found).toEqual([]);
    for (const text of FALLBACKS_LEFT)
      expect(
        LINES.some((l) => l.text.trim() === text),
        `${text}: gone; take it out of FALLBACKS_LEFT`,
      ).toBe(true);
  });
});
