// What SQL clients print: PostgreSQL's text format (`\copy (…) TO STDOUT WITH (HEADER)`: tabs, \N for NULL,
// backslash escapes) read with --format pgtext, never a \N sent as data; the same bytes read as CSV refused naming
// the fix; a tab-separated header read as CSV gets a hint; psql's default timestamptz output (`2025-10-01
// 02:01:37.007+02`) read by the canonical profile. The bytes are psql 15's, as it writes them.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { timeLayout } from '../../src/map/draft-guess.ts';
import { pgValue } from '../../src/read/pgtext.ts';
import { runCliHere, summaryOf } from '../helpers/cli.ts';
import { useSimulator } from '../helpers/simulator.ts';
import { CANONICAL_COLUMNS, makeTx, range } from '../helpers/transactions.ts';

const sim = useSimulator({ seed: 53 }, 'reset');
const env = () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-sql-'));
  return {
    SVC_BASE_URL: sim.url,
    SVC_LEDGER_PATH: join(dir, 'l.ndjson'),
    SVC_REJECTS_PATH: join(dir, 'r.ndjson'),
  };
};

/** A psql-style value: NULL as \N, the text format's escapes, timestamps as psql prints timestamptz in +02. */
function pgText(v: unknown, column: string): string {
  if (v === undefined || v === null || v === '') return '\\N';
  const s = String(v);
  if (column.endsWith('Timestamp')) {
    const d = new Date(new Date(s).getTime() + 2 * 3600_000).toISOString();
    return `${d.slice(0, 10)} ${d.slice(11, 23)}+02`;
  }
  return s.replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n').replace(/\r/g, '\\r');
}

function pgExport(n: number): { text: string; ids: string[] } {
  const txs = range(n).map((i) => makeTx(i, 'pg'));
  const t1 = txs[1] as unknown as Record<string, unknown>;
  t1.paymentNetworkMerchant = 'Tab\there \\ back\nslash';
  const t2 = txs[2] as unknown as Record<string, unknown>;
  t2.paymentNetworkMerchantCity = undefined; // a NULL required city
  const rows = txs.map((t) =>
    CANONICAL_COLUMNS.map((c) => pgText((t as unknown as Record<string, unknown>)[c], c)).join('\t'),
  );
  return {
    text: `${CANONICAL_COLUMNS.join('\t')}\n${rows.join('\n')}\n`,
    ids: txs.map((t) => t.transactionId),
  };
}

describe('PostgreSQL text format', () => {
  it('pgValue: \\N is missing, escapes decoded (\\t \\n \\\\ octal hex)', () => {
    expect(pgValue('\\N')).toBeUndefined();
    expect(pgValue('a\\tb\\nc\\\\d')).toBe('a\tb\nc\\d');
    expect(pgValue('\\101\\x42')).toBe('AB');
    expect(pgValue('plain')).toBe('plain');
  });

  it('--format pgtext: no \\N delivered, escapes decoded, psql timestamps read by the canonical profile', async () => {
    const { text, ids } = pgExport(20);
    const r = await runCliHere(['send', '--json', '--format', 'pgtext', '-'], { env: env(), input: text });
    expect(r.code, r.stderr).toBe(2); // the NULL city: a reject, never the city "\N"
    expect(summaryOf(r)).toMatchObject({ read: 20, sent: 19, rejected: 1 });
    const sent = [...sim.transactions()];
    expect(JSON.stringify(sent)).not.toContain('\\\\N');
    const one = sent.find((t) => t.transactionId === ids[1]);
    expect(one?.paymentNetworkMerchant).toBe('Tab\there \\ back\nslash');
    expect(one?.transactionTimestamp).toBe(makeTx(1, 'pg').transactionTimestamp);
    expect(sim.deliveries().has(ids[2] as string)).toBe(false);
  });

  it('the same bytes read as CSV: a hint for the tabs, and a \\N refused naming the fix; never sent', async () => {
    const { text } = pgExport(5);
    const csv = await runCliHere(['send', '--json', '-'], { env: env(), input: text });
    expect(csv.code).toBe(1);
    expect(csv.stderr).toContain(
      'the header holds tabs and no ",": tab-separated? Read it with --delimiter $\'\\t\'',
    );

    const tabs = await runCliHere(['send', '--json', '--delimiter', '\t', '-'], { env: env(), input: text });
    expect(tabs.code).toBe(1);
    expect(tabs.stderr).toContain(
      "holds \\N, PostgreSQL's NULL: this is COPY's text format, not CSV. Read it with --format pgtext, or export CSV: \\copy (…) TO STDOUT WITH CSV HEADER",
    );
    expect(JSON.stringify([...sim.transactions()])).not.toContain('\\\\N');
  });

  it("mapping draft takes psql's timestamptz output (an hours-only offset) as a complete instant", () => {
    expect(timeLayout('2025-10-01 02:01:37.007+02')).toEqual({ format: 'auto', zoned: true });
    expect(timeLayout('2025-10-01 02:01:37+05:30')).toEqual({ format: 'auto', zoned: true });
    expect(timeLayout('2025-10-01 02:01:37')).toEqual({ format: 'auto', zoned: false });
  });

  it("psql's CSV (\\copy … CSV HEADER) with its default timestamptz output: the canonical profile reads it", async () => {
    const txs = range(10).map((i) => makeTx(i, 'pgcsv'));
    const rows = txs.map((t) =>
      CANONICAL_COLUMNS.map((c) => {
        const v = (t as unknown as Record<string, unknown>)[c];
        return v === undefined
          ? ''
          : c.endsWith('Timestamp')
            ? pgText(v, c)
            : `"${String(v).replace(/"/g, '""')}"`;
      }).join(','),
    );
    const input = `${CANONICAL_COLUMNS.join(',')}\n${rows.join('\n')}\n`;
    const r = await runCliHere(['send', '--json', '-'], { env: env(), input });
    expect(r.code, r.stderr).toBe(0);
    expect(summaryOf(r)).toMatchObject({ read: 10, sent: 10 });
    const got = [...sim.transactions()].find((t) => t.transactionId === txs[3]!.transactionId);
    expect(got?.transactionTimestamp).toBe(txs[3]!.transactionTimestamp);
  });
});
