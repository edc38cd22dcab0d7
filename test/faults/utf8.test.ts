// Invalid UTF-8 through the real CLI: the record whose text field holds bytes that are not text is a reject
// naming the field (never sent with U+FFFD in their place); every other record is sent. CSV and NDJSON, read
// inline and on the worker pool in small chunks.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCliHere } from '../helpers/cli.ts';
import { useSimulator } from '../helpers/simulator.ts';
import { CANONICAL_COLUMNS, makeTx } from '../helpers/transactions.ts';
import { FAST, readRejects, report, STACK, summary, workdir } from './helpers.ts';

const sim = useSimulator({ seed: 21 }, 'reset');

const ROWS = 300;
const BAD = 137; // the record with the invalid bytes
const LITERAL = 150; // a valid U+FFFD, written as UTF-8 (EF BF BD): text like any other
const UNUSED = 160; // invalid bytes in a column the profile does not read: nothing of it is sent

/** Records as bytes, every merchant name with multi-byte characters so reads cut some of them in two. */
function input(format: 'csv' | 'ndjson'): { bytes: Buffer; ids: string[] } {
  const parts: Buffer[] = [];
  const ids: string[] = [];
  const cols = [...CANONICAL_COLUMNS, 'note'];
  if (format === 'csv') parts.push(Buffer.from(`${cols.join(',')}\n`));
  for (let i = 0; i < ROWS; i++) {
    const tx = { ...makeTx(i, 'u8'), note: 'ok' } as unknown as Record<string, unknown>;
    ids.push(tx.transactionId as string);
    tx.paymentNetworkMerchant = i === LITERAL ? 'Caf\ufffd Lumière' : `Café Lumière Ñandú ${i}`;
    // A marker swapped for raw bytes below.
    if (i === BAD) tx.paymentNetworkMerchant = 'Caf@@ Lumière';
    if (i === UNUSED) tx.note = 'n@@te';
    const text =
      format === 'csv' ? `${cols.map((c) => String(tx[c] ?? '')).join(',')}\n` : `${JSON.stringify(tx)}\n`;
    const [a, b] = text.split('@@');
    parts.push(
      b === undefined
        ? Buffer.from(text)
        : Buffer.concat([Buffer.from(a as string), Buffer.from([0xe9]), Buffer.from(b)]),
    );
  }
  return { bytes: Buffer.concat(parts), ids };
}

describe('invalid UTF-8 in a text field', () => {
  for (const format of ['csv', 'ndjson'] as const) {
    for (const path of ['inline', 'worker pool'] as const) {
      it(`${format}, ${path}: that record is rejected naming the field; the others are sent`, async () => {
        const w = await workdir(`utf8-${format}-${path === 'inline' ? 'in' : 'pool'}`);
        const { bytes, ids } = input(format);
        const file = join(w.dir, `u.${format}`);
        await writeFile(file, bytes);
        const r = await runCliHere(['send', ...FAST, file], {
          env: w.env(sim, {
            SVC_PREPARE_WORKER: path === 'inline' ? 'off' : 'on',
            SVC_PREPARE_CHUNK_BYTES: '4096',
          }),
        });
        expect(r.stderr).not.toMatch(STACK);
        expect(r.code, r.stderr).toBe(2);
        const s = summary(r);
        expect([s.read, s.sent, s.rejected]).toEqual([ROWS, ROWS - 1, 1]);
        const rejects = await readRejects(w.rejects);
        expect(rejects).toHaveLength(1);
        const line = BAD + (format === 'csv' ? 2 : 1);
        expect(rejects[0]).toMatchObject({
          line,
          errors: [{ field: 'paymentNetworkMerchant', message: expect.stringMatching(/invalid UTF-8/) }],
        });
        const delivered = sim.deliveries();
        for (const [i, id] of ids.entries()) expect(delivered.get(id) ?? 0, id).toBe(i === BAD ? 0 : 1);
        report(`utf8: ${format} ${path}`, { rows: ROWS, sent: s.sent, rejected: s.rejected, line });
      });
    }
  }
});
