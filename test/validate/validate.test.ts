// Validation: one test per rule, every error reported at once.
import { describe, expect, it } from 'vitest';
import { REQUIRED_FIELDS, TRANSACTION_FIELDS } from '../../src/model/transaction.ts';
import {
  fits,
  hasControl,
  requiredPositions,
  SHAPES,
  timestampShape,
  validateTransaction as validateObject,
  validateValues,
} from '../../src/validate/validate.ts';
import { luhnWindows, pansIn, TEST_PANS } from '../helpers/pans.ts';

const VALID: Record<string, unknown> = {
  transactionId: 'nw-2025.10:0001_a',
  transactionType: 'AUTHORIZED',
  sourceCustomerId: 'c-1',
  sourceAccountId: 'a-1',
  paymentType: 'DEBIT',
  paymentMethodEntryType: 'APPLE_PAY',
  transactionTimestamp: '2024-02-29T23:59:59.999Z',
  transactionPostingTimestamp: '2024-03-01T00:00:00.000Z',
  paymentNetworkMCC: '0742',
  paymentNetworkMerchantIdType: 'MID',
  paymentNetworkMerchant: 'Paws & Claws',
  paymentNetworkMerchantAddress1: '12 Elm Ave',
  paymentNetworkMerchantCity: 'Phoenix',
  paymentNetworkMerchantState: 'AZ',
  paymentNetworkMerchantPostalCode: '02134',
  paymentNetworkMerchantCountryCode: 'US',
  paymentNetworkMerchantId: '445566000000001',
  mobileIndicator: true,
  walletDescription: '40010030273',
  cardNetworkIdentifier: 4,
  iin: '41111111',
  last4: '1111',
  cardPresentIndicator: '1',
  recurringTransactionIndicator: false,
  authorizationAmount: '500',
  cashBackAtPointOfSaleAmount: '0',
  postedAmount: '500',
  currencyCode: 'USD',
  onlineIndicator: 'NOT_ONLINE',
  multipleClearingSequenceNumber: '1',
  multipleClearingSequenceCount: '2',
  authorizationApprovalCode: '0A12B3',
  acquirerReferenceNumber: '74567890123456789012345',
};
const FIELD_NAMES = Object.keys(TRANSACTION_FIELDS);
/**
 * validateTransaction, checked against validateValues (the record path's form: values in field order) on every
 * transaction of this file that holds only known fields: both must give the same errors in the same order.
 */
function validateTransaction(
  tx: Record<string, unknown>,
  required: readonly string[] = REQUIRED_FIELDS,
  invalidUtf8 = false,
): ReturnType<typeof validateObject> {
  const found = validateObject(tx, required, invalidUtf8);
  if (Object.keys(tx).every((k) => FIELD_NAMES.includes(k))) {
    const values = FIELD_NAMES.map((f) => tx[f]);
    expect(validateValues(values, requiredPositions(required), invalidUtf8)).toEqual(found);
  }
  return found;
}
function errors(patch: Record<string, unknown>): string[] {
  return validateTransaction({ ...VALID, ...patch }).map((e) => e.field);
}
function bad(field: string, ...values: unknown[]): void {
  for (const v of values) expect(errors({ [field]: v }), `${field}=${JSON.stringify(v)}`).toEqual([field]);
}
function good(field: string, ...values: unknown[]): void {
  for (const v of values) expect(errors({ [field]: v }), `${field}=${JSON.stringify(v)}`).toEqual([]);
}

describe('formats: each table-driven check accepts exactly what its regular expression does', () => {
  const REGEX: Record<keyof typeof SHAPES, RegExp> = {
    positiveMinor: /^[1-9][0-9]{0,14}$/,
    fourDigits: /^[0-9]{4}$/,
    state: /^[A-Z]{2,3}$/,
    iin: /^[0-9]{6,8}$/,
    transactionId: /^[A-Za-z0-9._:-]{1,64}$/,
    codeToken: /^[A-Z][A-Z0-9_]{0,31}$/,
    postal: /^[A-Za-z0-9][A-Za-z0-9 -]{1,9}$/,
    shortToken: /^[A-Za-z0-9_]{1,16}$/,
    sequence: /^[0-9]{1,4}$/,
    alnum32: /^[A-Za-z0-9]{1,32}$/,
  };
  // Every class boundary and then some: neighbours of 0-9, A-Z, a-z, the punctuation the formats allow, controls,
  // DEL, Latin-1, a line separator, a lone surrogate.
  const ALPHABET = [
    ...'/0189:@AZ[`az{._-: TZ,+#"\\',
    '\u0000',
    '\t',
    '\n',
    '\r',
    '\u001f',
    '\u007f',
    '\u0080',
    'é',
    '\u2028',
    '\ud800',
  ];
  let seed = 12345;
  const rand = (n: number): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const samples = (base: string[], count: number): string[] => {
    const out: string[] = [];
    for (let k = 0; k < count; k++) {
      if (k % 2 === 0) {
        // Random text of a random length around the formats' bounds.
        const len = rand(70);
        let v = '';
        for (let i = 0; i < len; i++) v += ALPHABET[rand(ALPHABET.length)];
        out.push(v);
      } else {
        // A valid value with one character changed, added or dropped.
        const b = base[rand(base.length)] as string;
        const at = rand(b.length + 1);
        const c = ALPHABET[rand(ALPHABET.length)] as string;
        const op = rand(3);
        out.push(
          op === 0
            ? b.slice(0, at) + c + b.slice(at + 1)
            : op === 1
              ? b.slice(0, at) + c + b.slice(at)
              : b.slice(0, at) + b.slice(at + 1),
        );
      }
    }
    return out;
  };
  it('for every shape, on 20,000 generated strings each', () => {
    const bases: Record<keyof typeof SHAPES, string[]> = {
      positiveMinor: ['1', '500', '123456789012345'],
      fourDigits: ['0742', '1111'],
      state: ['AZ', 'NSW'],
      iin: ['411111', '41111111'],
      transactionId: ['nw-2025.10:0001_a', 'a'.repeat(64)],
      codeToken: ['AUTHORIZED', 'A', `A${'B'.repeat(31)}`],
      postal: ['02134', 'SW1A 1AA', 'K1A-0B1'],
      shortToken: ['0A12B3', 'a_b', 'x'.repeat(16)],
      sequence: ['1', '9999'],
      alnum32: ['74567890123456789012345', 'z'.repeat(32)],
    };
    // Every string is compared; the ones where the two disagree are listed (one expect a shape rather than one a
    // string: 200,000 expect calls cost more than the checks).
    for (const name of Object.keys(SHAPES) as Array<keyof typeof SHAPES>) {
      const re = REGEX[name];
      const check = (v: string) => fits(SHAPES[name], v);
      const values = [...bases[name], '', ...samples(bases[name], 20000)];
      expect(
        values.filter((v) => check(v) !== re.test(v)).map((v) => `${name} ${JSON.stringify(v)}`),
      ).toEqual([]);
    }
  });
  it('timestamps and control characters, likewise', () => {
    const TS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
    const stamps = [
      '2024-02-29T23:59:59.999Z',
      ...samples(['2024-02-29T23:59:59.999Z', '1970-01-01T00:00:00.000Z'], 20000),
    ];
    expect(stamps.filter((v) => timestampShape(v) !== TS.test(v)).map((v) => JSON.stringify(v))).toEqual([]);
    const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;
    const texts = ['Paws & Claws', '', ...samples(['Paws & Claws', 'Café\tLumière\r\n'], 20000)];
    expect(texts.filter((v) => hasControl(v) !== CONTROL.test(v)).map((v) => JSON.stringify(v))).toEqual([]);
  });
});

describe('validateValues', () => {
  it('checks values in field order against the positions of the required fields', () => {
    const values = FIELD_NAMES.map((f) => VALID[f]);
    expect(validateValues(values, requiredPositions(REQUIRED_FIELDS))).toEqual([]);
    values[0] = 't 1';
    values[1] = undefined;
    expect(validateValues(values, requiredPositions(REQUIRED_FIELDS)).map((e) => e.field)).toEqual([
      'transactionId',
      'transactionType',
    ]);
    expect(validateValues(values, [])[0]?.message).toMatch(/^expected 1\.\.64 characters/);
    expect(() => requiredPositions(['pan'])).toThrow(/pan/);
  });
});

describe('validateTransaction', () => {
  it('accepts a full valid transaction', () => {
    expect(validateTransaction(VALID)).toEqual([]);
  });
  it('requires the service list plus postedAmount and currencyCode, all reported at once', () => {
    expect(validateTransaction({}).map((e) => [e.field, e.message])).toEqual(
      REQUIRED_FIELDS.map((f) => [f, 'required']),
    );
    expect(REQUIRED_FIELDS).toContain('postedAmount');
    expect(REQUIRED_FIELDS).toContain('currencyCode');
    const many = validateTransaction({
      ...VALID,
      postedAmount: '1.5',
      paymentNetworkMCC: '58',
      paymentNetworkMerchantCity: undefined,
    });
    expect(many.map((e) => e.field)).toEqual([
      'paymentNetworkMCC',
      'postedAmount',
      'paymentNetworkMerchantCity',
    ]);
  });
  it('refuses unknown fields', () => {
    expect(validateTransaction({ ...VALID, pan: 'x' })).toEqual([{ field: 'pan', message: 'unknown field' }]);
  });
  it('checks JSON types: string, boolean, integer', () => {
    bad('postedAmount', 500, null);
    bad('mobileIndicator', 'Y', 1);
    bad('cardNetworkIdentifier', '4', 4.5, 0, 10);
    good('cardNetworkIdentifier', 1, 9);
    bad('paymentNetworkMerchant', '');
  });
  it('timestamps: YYYY-MM-DDTHH:mm:ss.sssZ and a real date', () => {
    bad(
      'transactionTimestamp',
      '2025-10-09T18:20:33Z',
      '2025-10-09 18:20:33.000Z',
      '2025-02-29T10:00:00.000Z',
      '2025-10-09T24:00:00.000Z',
      '2025-13-01T00:00:00.000Z',
    );
    good('transactionPostingTimestamp', '2024-02-29T10:00:00.000Z');
  });
  it('amounts: minor units, no leading zero, at most 15 digits, 0 only for cash back', () => {
    bad('postedAmount', '0', '05', '12.34', '-5', '1234567890123456');
    bad('authorizationAmount', '0');
    good('postedAmount', '1', '123456789012345');
    good('cashBackAtPointOfSaleAmount', '0', '250');
    bad('cashBackAtPointOfSaleAmount', '00');
  });
  it('MCC: 4 digits', () => {
    bad('paymentNetworkMCC', '742', '58a2', '54111');
  });
  it('currency: ISO 4217 alpha-3 known to currency-codes', () => {
    bad('currencyCode', 'usd', 'US', '840', 'XYZ');
    good('currencyCode', 'JPY', 'KWD');
  });
  it('country: ISO 3166 alpha-2 known', () => {
    bad('paymentNetworkMerchantCountryCode', 'USA', 'us', 'XX');
    good('paymentNetworkMerchantCountryCode', 'CA');
  });
  it('state: 2-3 uppercase letters', () => {
    bad('paymentNetworkMerchantState', 'Arizona', 'az', 'A');
    good('paymentNetworkMerchantState', 'NSW');
  });
  it('iin 6-8 digits, last4 4 digits', () => {
    bad('iin', '41111', '411111111', '41111a');
    good('iin', '079271');
    bad('last4', '111', '11111');
  });
  it('transactionId: 1..64 of A-Z a-z 0-9 . _ : -', () => {
    bad('transactionId', 'has space', 'x'.repeat(65), 'a/b');
    good('transactionId', 'x'.repeat(64));
  });
  it('free text max lengths (merchant 100, city 50, ids 64)', () => {
    bad('paymentNetworkMerchant', 'm'.repeat(101));
    good('paymentNetworkMerchant', 'm'.repeat(100));
    bad('paymentNetworkMerchantCity', 'c'.repeat(51));
    bad('sourceCustomerId', 'c'.repeat(65));
  });
  it('code fields are uppercase tokens; postal code, sequence numbers, approval code, ARN shapes', () => {
    bad('transactionType', 'authorized', 'AUTH ORIZED');
    bad('onlineIndicator', 'online');
    bad('paymentNetworkMerchantPostalCode', '1', '12345-67890-1');
    good('paymentNetworkMerchantPostalCode', 'SW1A 1AA', '85004-1234');
    bad('multipleClearingSequenceNumber', '12345', 'a');
    bad('authorizationApprovalCode', 'A-12');
    bad('acquirerReferenceNumber', '7456-789');
  });
  it('never echoes a card number in a message', () => {
    const [e] = validateTransaction({ ...VALID, paymentNetworkMerchant: 'card 4111111111111111 '.repeat(5) });
    expect(e?.message).not.toMatch(/4111111111111111/);
  });
});

describe('card numbers in the fields we send', () => {
  const { visa, mastercard, amex, visa13 } = TEST_PANS;
  /** Every field whose format lets 13 digits through, and a card number in a shape that format accepts. */
  const carriers: Record<string, string[]> = {
    transactionId: [visa, `${visa}-01`, `TX${visa}`, `0000${amex}`, visa.replace(/(\d{4})(?=\d)/g, '$1.')],
    sourceCustomerId: [mastercard, `cust ${visa.replace(/(\d{4})(?=\d)/g, '$1\u00a0')}`],
    sourceAccountId: [`acct-${visa}`, `${visa}/2`],
    // A 15-digit value here is a card acceptor id (its fixed width): an Amex number only as part of a longer one.
    paymentNetworkMerchantId: [visa, `MID${visa13}`, `${amex}-1`],
    walletDescription: [visa],
    authorizationApprovalCode: [visa],
    acquirerReferenceNumber: [visa, `A${mastercard}`],
    cardPresentIndicator: [visa],
    transactionType: [`X${visa}`],
    paymentType: [`D${mastercard}`],
    paymentMethodEntryType: [`P${amex}`],
    paymentNetworkMerchantIdType: [`M${visa}`],
    onlineIndicator: [`O${visa}`],
    postedAmount: [amex, visa13],
    authorizationAmount: [amex],
    cashBackAtPointOfSaleAmount: [visa13],
  };
  it('a card number in an id, code or amount field is an error naming it, the value masked', () => {
    for (const [field, values] of Object.entries(carriers)) {
      for (const v of values) {
        const found = validateTransaction({ ...VALID, [field]: v });
        expect(
          found.map((e) => e.field),
          `${field}=${v}`,
        ).toEqual([field]);
        expect(found[0]?.message).toMatch(/holds a card number/);
        expect(pansIn(found[0]?.message ?? '')).toEqual([]);
        expect(luhnWindows(found[0]?.message ?? '')).toEqual([]);
      }
    }
  });
  it('a card number in free text (a profile constant or default: mapping masks the rest) is an error', () => {
    for (const field of [
      'paymentNetworkMerchant',
      'paymentNetworkMerchantAddress1',
      'paymentNetworkMerchantCity',
    ]) {
      const found = validateTransaction({ ...VALID, [field]: `7-ELEVEN 1234 ${visa}` });
      expect(found.map((e) => e.field)).toEqual([field]);
      expect(pansIn(found[0]?.message ?? '')).toEqual([]);
    }
  });
  it('not a card number: a 23-digit ARN with Luhn-valid windows, 15-digit MIDs failing Luhn, zero-padded ids', () => {
    expect(luhnWindows(VALID.acquirerReferenceNumber as string).length).toBeGreaterThan(0);
    good('acquirerReferenceNumber', '74567890123456789012345', '74611121510000000000');
    good('paymentNetworkMerchantId', '445566000000001', '445566000001111');
    good('sourceAccountId', '0000000000012345', 'acct-2025-11-20-0001');
    good('transactionId', `${visa}000000`);
  });
});

describe('invalid UTF-8', () => {
  it("with the reader's flag, a string field holding U+FFFD is an error naming it; without, U+FFFD is text", () => {
    const tx = { ...VALID, paymentNetworkMerchant: 'Caf\ufffd Lum\ufffdre', sourceAccountId: 'a\ufffd1' };
    expect(validateTransaction(tx, REQUIRED_FIELDS, true).map((e) => e.field)).toEqual([
      'sourceAccountId',
      'paymentNetworkMerchant',
    ]);
    expect(validateTransaction(tx, REQUIRED_FIELDS, true)[0]?.message).toMatch(/invalid UTF-8/);
    expect(validateTransaction(tx)).toEqual([]);
    expect(validateTransaction(VALID, REQUIRED_FIELDS, true)).toEqual([]);
  });
});

describe('control characters in text fields', () => {
  it('refuses NUL and other control characters in names, addresses and ids, allows tab and line breaks', async () => {
    const { validateTransaction } = await import('../../src/validate/validate.ts');
    const { makeTx } = await import('../helpers/transactions.ts');
    const bad = { ...makeTx(1), paymentNetworkMerchant: 'BLUE\u0000BOTTLE', sourceCustomerId: 'c\u0007' };
    expect(
      validateTransaction(bad)
        .map((e) => e.field)
        .sort(),
    ).toEqual(['paymentNetworkMerchant', 'sourceCustomerId']);
    const ok = { ...makeTx(1), paymentNetworkMerchantAddress1: '12 Elm St\nSuite 3\t(rear)' };
    expect(validateTransaction(ok)).toEqual([]);
  });
});
