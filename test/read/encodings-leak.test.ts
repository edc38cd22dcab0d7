// The rejects file and every excerpt are masked before they are quoted or escaped, in every encoding the reader
// takes (issue 30): a UTF-16LE NDJSON file (NULs between the digits when read as UTF-8), a Latin-1 CSV with 0xA0
// between the groups (U+FFFD once decoded), a line that is not JSON with the number as `\u0034` escapes, an object
// and an array holding tab-grouped digits (quoted as JSON in a message). The real CLI, a dry run with rejects.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCliHere } from '../helpers/cli.ts';
import { LEAK_PANS } from '../helpers/leak-corpus.ts';
import { panPiecesIn } from '../helpers/pans.ts';
import { makeTx } from '../helpers/transactions.ts';

const PANS = Object.values(LEAK_PANS);
const visa = LEAK_PANS.visa as string;
const mc = LEAK_PANS.mastercard as string;
const groups = (pan: string, sep: string) => pan.replace(/(\d{4})(?=\d)/g, `$1${sep}`);

describe('rejects in other encodings and escapes: masked before they are quoted', () => {
  it('UTF-16LE NDJSON, Latin-1 CSV with 0xA0, \\u escapes, objects and arrays of tab-grouped digits', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-enc-'));
    const tx = (i: number) => makeTx(i, 'en') as unknown as Record<string, unknown>;
    // UTF-16LE with its BOM: read as UTF-8, every character is followed by a NUL.
    const utf16 = join(dir, 'utf16.ndjson');
    const line16 = JSON.stringify({ ...tx(1), paymentNetworkMerchant: `shop ${groups(visa, ' ')}` });
    writeFileSync(utf16, Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(`${line16}\n`, 'utf16le')]));
    // Latin-1: a no-break space (0xA0) between the groups, not valid UTF-8.
    const latin1 = join(dir, 'latin1.ndjson');
    const l1 = JSON.stringify({ ...tx(2), transactionId: `t ${groups(mc, '\u00a0')}` });
    writeFileSync(latin1, Buffer.from(`${l1}\n`, 'latin1'));
    // A line that is not JSON, the number in \u escapes; an object and an array holding tab-grouped digits.
    const escaped = join(dir, 'escaped.ndjson');
    const esc = [...visa].map((d) => `\\u00${(48 + Number(d)).toString(16)}`).join('');
    const lines = [
      `not json ${esc}`,
      JSON.stringify({ ...tx(3), sourceCustomerId: { note: groups(mc, '\t') } }),
      JSON.stringify({ ...tx(4), sourceAccountId: [groups(visa, '\t')] }),
    ];
    writeFileSync(escaped, `${lines.join('\n')}\n`);
    const rejects = join(dir, 'rejects.ndjson');
    const r = await runCliHere(
      ['send', '--dry-run', '--json', '--rejects', rejects, utf16, latin1, escaped],
      {
        env: { SVC_LEDGER_PATH: join(dir, 'l.ndjson') },
      },
    );
    const written = readFileSync(rejects, 'utf8');
    expect(written.split('\n').filter(Boolean).length, r.stderr).toBeGreaterThanOrEqual(3);
    expect(panPiecesIn(written, PANS)).toEqual([]);
    expect(panPiecesIn(r.stdout + r.stderr, PANS)).toEqual([]);
  });
});
