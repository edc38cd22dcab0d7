// codeKey (src/model/code-lists.ts): one string per combination of code values, the same string each time, and
// the tally's counts per field from it.
import { describe, expect, it } from 'vitest';
import { CODE_FIELDS, codeKey, createCodeTally } from '../../src/model/code-lists.ts';

const SEP = '\u001f';

describe('codeKey', () => {
  it('joins the code values in CODE_FIELDS order (absent ones empty) and hands out the same string for the same values', () => {
    const tx = { transactionType: 'AUTHORIZED', paymentType: 'DEBIT', cardPresentIndicator: '1' };
    const key = codeKey(tx);
    expect(key).toBe(`AUTHORIZED${SEP}DEBIT${SEP}${SEP}${SEP}${SEP}1`);
    // Fresh strings of the same values (as a reader makes them): the same key.
    expect(codeKey({ ...tx, transactionType: ['AUTHOR', 'IZED'].join('') })).toBe(key);
    expect(codeKey({})).toBe(SEP.repeat(CODE_FIELDS.length - 1));
    expect(codeKey({ paymentType: 'DEBIT' })).not.toBe(codeKey({ paymentType: 'CREDIT' }));
  });

  it('past its bound of remembered combinations still gives the joined values, and the tally counts them', () => {
    const tally = createCodeTally();
    for (let i = 0; i < 6000; i++) {
      const tx = { transactionType: `T${i}`, paymentType: 'DEBIT', onlineIndicator: 'ONLINE' };
      const key = codeKey(tx);
      expect(key).toBe(`T${i}${SEP}DEBIT${SEP}${SEP}${SEP}ONLINE${SEP}`);
      tally.add(key);
    }
    const counts = tally.counts();
    expect(counts.paymentType).toEqual({ DEBIT: 6000 });
    expect(counts.onlineIndicator).toEqual({ ONLINE: 6000 });
    expect(Object.keys(counts.transactionType ?? {})).toHaveLength(6000);
  });
});
