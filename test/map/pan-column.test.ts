// The card-number column stays one (issue 49): a profile whose other rules read `pan.from` (a slice of it, a match on
// it, the column itself) is refused at load, naming the rule; reading it only through `pan` is fine.
import { describe, expect, it } from 'vitest';
import { compileProfile } from '../../src/map/compile.ts';
import { CONST_RULES } from '../helpers/profiles.ts';

const pan = { from: 'card_number' };

describe('a rule that re-reads the card-number column is refused at load', () => {
  for (const [name, field, rule] of [
    ['the column itself', 'sourceAccountId', 'card_number'],
    ['a slice', 'sourceAccountId', { from: 'card_number', slice: [0, 12] }],
    ['a match', 'transactionId', { from: 'card_number', match: '([0-9]{15})' }],
    ['a hash part', 'transactionId', { hash: { of: ['card_number', 'id'] } }],
  ] as const) {
    it(name, () => {
      expect(() => compileProfile({ pan, fields: { ...CONST_RULES, [field]: rule } }, 'p.json', 'p')).toThrow(
        /card_number, the card-number column \(pan\.from\)/,
      );
      try {
        compileProfile({ pan, fields: { ...CONST_RULES, [field]: rule } }, 'p.json', 'p');
      } catch (e) {
        expect((e as { details?: { path?: string } }).details?.path ?? String(e)).toMatch(
          new RegExp(`fields\\.${field}`),
        );
      }
    });
  }

  it('pan alone, and other columns, load', () => {
    expect(() =>
      compileProfile({ pan, fields: { ...CONST_RULES, sourceAccountId: 'acct' } }, 'p.json', 'p'),
    ).not.toThrow();
  });
});
