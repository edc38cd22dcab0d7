// Mapping profiles: one test per language feature, profile errors with JSON paths, masking.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compileProfile } from '../../src/map/compile.ts';
import { canonicalProfile, loadProfile } from '../../src/map/profile.ts';
import type { CompiledProfile } from '../../src/map/types.ts';
import { holdsCardNumberId, luhnValid, maskCardNumbers, maskPan } from '../../src/mask/index.ts';
import { CONST_RULES } from '../helpers/profiles.ts';

const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-map-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Every required field gets a constant unless the test overrides it.
const BASE = CONST_RULES;
function profile(fields: Record<string, unknown>, extra: Record<string, unknown> = {}): CompiledProfile {
  return compileProfile({ ...extra, fields: { ...BASE, ...fields } }, 'test.json', 'test');
}
function one(
  fields: Record<string, unknown>,
  rec: Record<string, unknown>,
  extra: Record<string, unknown> = {},
) {
  return profile(fields, extra).map(rec);
}
function value(
  field: string,
  rule: unknown,
  rec: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): unknown {
  const r = one({ [field]: rule }, rec, extra);
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return (r.tx as unknown as Record<string, unknown>)[field];
}
function errorOf(field: string, rule: unknown, rec: Record<string, unknown>): string | undefined {
  const r = one({ [field]: rule }, rec);
  return r.ok ? undefined : r.errors.find((e) => e.field === field)?.message;
}
function invalid(doc: unknown): string {
  try {
    compileProfile(doc, 'bad.json', 'bad');
  } catch (err) {
    return `${(err as { code: string }).code}: ${(err as Error).message}`;
  }
  return 'no error';
}

describe('sources', () => {
  it('reads a column under another name (string shorthand too)', () => {
    expect(value('paymentNetworkMerchant', { from: 'MERCHANT_NAME' }, { MERCHANT_NAME: ' Joe ' })).toBe(
      'Joe',
    );
    expect(value('paymentNetworkMerchant', 'NAME', { NAME: 'Ann' })).toBe('Ann');
  });
  it('reads nested NDJSON keys, a literal dotted key first', () => {
    expect(value('paymentNetworkMerchantCity', 'merchant.city', { merchant: { city: 'Mesa' } })).toBe('Mesa');
    expect(value('paymentNetworkMerchantCity', 'merchant.city', { 'merchant.city': 'Flat' })).toBe('Flat');
  });
  it('sets constants and defaults; empty strings are absent', () => {
    expect(value('paymentType', { from: 'F', default: 'DEBIT' }, { F: '  ' })).toBe('DEBIT');
    expect(value('paymentType', { from: 'F', default: 'DEBIT' }, { F: 'CREDIT' })).toBe('CREDIT');
    const r = one({ paymentNetworkMerchantAddress1: 'ADDR' }, { ADDR: '' });
    expect(r.ok && 'paymentNetworkMerchantAddress1' in r.tx).toBe(false);
  });
  it('combines columns with a template; a missing part makes the value missing', () => {
    expect(value('sourceAccountId', { template: '{first}-{second}' }, { first: 'A', second: '7' })).toBe(
      'A-7',
    );
    expect(value('sourceAccountId', { template: '{first}-{second}', default: 'none' }, { first: 'A' })).toBe(
      'none',
    );
  });
  it('derives a stable transactionId by hashing columns', () => {
    const rule = { hash: { of: ['a', 'b.c'], separator: '|', length: 32, prefix: 'x-' } };
    const id = value('transactionId', rule, { a: '1', b: { c: 2 } });
    expect(id).toMatch(/^x-[0-9a-f]{32}$/);
    expect(value('transactionId', rule, { a: '1', b: { c: 2 } })).toBe(id);
    expect(value('transactionId', rule, { a: '2', b: { c: 2 } })).not.toBe(id);
    expect(id).toBe(`x-${createHash('sha256').update('1|2').digest('hex').slice(0, 32)}`);
  });
  it('a hashed id never reads as a card number (a hex that would is hashed again, deterministically)', () => {
    const rule = { hash: { of: ['n'], separator: '|', length: 32, prefix: 'h-' } };
    // Hex digits glued to letters are no card number (src/mask/index.ts), so a plain hash hardly ever is one; the
    // rehash stays for the one that would be. 20,000 ids through one compiled profile: none holds one, and every
    // 1,000th derived the same way by a profile compiled again.
    const hashed = profile({ transactionId: rule });
    for (let i = 0; i < 20_000; i++) {
      const r = hashed.map({ n: String(i) });
      if (!r.ok) throw new Error(JSON.stringify(r.errors));
      const id = r.tx.transactionId;
      expect(id).toMatch(/^h-[0-9a-f]{32}$/);
      expect(holdsCardNumberId(id)).toBe(false);
      if (i % 1000 === 0) expect(value('transactionId', rule, { n: String(i) })).toBe(id);
    }
    // The workaround for a numeric id that is Luhn-valid: hashed, it is sent.
    expect(holdsCardNumberId(value('sourceAccountId', rule, { n: '4111111111111111' }) as string)).toBe(
      false,
    );
  });
  it('refuses a JSON number that has already lost digits as text (a 17-19-digit card number, say)', () => {
    const big = JSON.parse('{"n": 6011111111111111117}') as Record<string, unknown>;
    expect(errorOf('sourceAccountId', { from: 'n' }, big)).toMatch(/lost digits/);
    expect(errorOf('sourceAccountId', { from: 'n' }, big)).not.toMatch(/\d{13}/);
    expect(value('sourceAccountId', { from: 'n' }, { n: 9007199254740 })).toBe('9007199254740');
  });
  it('trims, truncates, changes case, pads and slices strings', () => {
    expect(value('paymentNetworkMerchant', { from: 'N', maxLength: 5 }, { N: 'ABCDEFGH' })).toBe('ABCDE');
    expect(value('paymentNetworkMerchant', { from: 'N', trim: false }, { N: ' a ' })).toBe(' a ');
    expect(value('paymentNetworkMerchantPostalCode', { from: 'Z', case: 'upper' }, { Z: 'sw1a 1aa' })).toBe(
      'SW1A 1AA',
    );
    expect(value('paymentNetworkMCC', { from: 'M', zeroPad: 4 }, { M: 742 })).toBe('0742');
    expect(value('cardNetworkIdentifier', { from: 'B', slice: [0, 1], integer: true }, { B: '511111' })).toBe(
      5,
    );
  });
  it('turns a number into a string (cardPresentIndicator sent as a number)', () => {
    expect(value('cardPresentIndicator', 'C', { C: 1 })).toBe('1');
  });
});

describe('timestamps', () => {
  const f = 'transactionTimestamp';
  it('parses Unix seconds and milliseconds', () => {
    expect(value(f, { from: 'T', timestamp: { format: 'unix-s' } }, { T: '1760034033' })).toBe(
      '2025-10-09T18:20:33.000Z',
    );
    expect(value(f, { from: 'T', timestamp: { format: 'unix-ms' } }, { T: 1760034033123 })).toBe(
      '2025-10-09T18:20:33.123Z',
    );
    expect(value(f, { from: 'T', timestamp: true }, { T: 1760034033 })).toBe('2025-10-09T18:20:33.000Z');
  });
  it('parses ISO 8601 with an offset', () => {
    expect(value(f, { from: 'T', timestamp: true }, { T: '2025-10-09T11:20:33.5-07:00' })).toBe(
      '2025-10-09T18:20:33.500Z',
    );
  });
  it('parses local time in an IANA zone (rule zone or profile timeZone)', () => {
    const rule = { from: 'T', timestamp: { format: 'YYYY-MM-DD HH:mm:ss', zone: 'America/Phoenix' } };
    expect(value(f, rule, { T: '2025-10-09 11:20:33' })).toBe('2025-10-09T18:20:33.000Z');
    expect(
      value(f, { from: 'T', timestamp: true }, { T: '2025-01-09 11:20:33' }, { timeZone: 'America/Chicago' }),
    ).toBe('2025-01-09T17:20:33.000Z');
  });
  it('parses a zone abbreviation from the value', () => {
    expect(value(f, { from: 'T', timestamp: true }, { T: '2025-10-09 11:20:33 MST' })).toBe(
      '2025-10-09T18:20:33.000Z',
    );
    expect(errorOf(f, { from: 'T', timestamp: true }, { T: '2025-10-09 11:20:33 XYZ' })).toMatch(
      /unknown zone abbreviation/,
    );
  });
  it('combines a date and a time column, 12-hour clock included', () => {
    const rule = {
      template: '{D} {T}',
      timestamp: { format: 'MM/DD/YYYY hh:mm:ss A', zone: 'America/Chicago' },
    };
    expect(value(f, rule, { D: '10/09/2025', T: '01:20:33 PM' })).toBe('2025-10-09T18:20:33.000Z');
  });
  it('refuses unreal dates and local times without a zone', () => {
    expect(errorOf(f, { from: 'T', timestamp: true }, { T: '2025-02-30T10:00:00Z' })).toMatch(
      /not a real date/,
    );
    expect(errorOf(f, { from: 'T', timestamp: true }, { T: '2025-02-03 10:00:00' })).toMatch(/no UTC offset/);
  });
});

describe('amounts', () => {
  const amt = (v: unknown, opts: unknown = true, currency = 'USD') =>
    one(
      { postedAmount: { from: 'A', amount: opts }, currencyCode: { from: 'C', currency: true } },
      { A: v, C: currency },
    );
  const ok = (v: unknown, opts?: unknown, currency?: string) => {
    const r = amt(v, opts, currency);
    return r.ok ? r.tx.postedAmount : `ERR ${r.errors[0]?.message}`;
  };
  it('converts decimals to minor units by the currency exponent, exactly', () => {
    expect(ok('12.34')).toBe('1234');
    expect(ok('-5', { abs: true })).toBe('500');
    expect(ok('1,234.50')).toBe('123450');
    expect(ok('12.3')).toBe('1230');
    expect(ok(12.34)).toBe('1234');
    expect(ok(0.1 + 0.7)).toMatch(/^ERR .*more decimals/);
    expect(ok('1200', undefined, 'JPY')).toBe('1200');
    expect(ok('1200.00', undefined, 'JPY')).toBe('1200');
    expect(ok('1.005', undefined, 'KWD')).toBe('1005');
    expect(ok('9.99', undefined, '840')).toBe('999');
  });
  it('passes minor units through', () => {
    expect(ok('0500', { units: 'minor' })).toBe('500');
    expect(ok('5.5', { units: 'minor' })).toMatch(/^ERR/);
  });
  it('refuses extra decimals, non-numbers, 1e309, 30 digits, negatives without abs', () => {
    expect(ok('12.345')).toBe('ERR "12.345" has more decimals than the currency allows (2)');
    expect(ok('12.5x')).toMatch(/^ERR expected a decimal number/);
    expect(ok('1e309')).toMatch(/^ERR expected a decimal number/);
    expect(ok(Number.POSITIVE_INFINITY)).toMatch(/^ERR expected a finite number/);
    expect(ok('123456789012345678901234567890')).toMatch(/too large/);
    expect(ok('-5')).toMatch(/negative amount/);
  });
  it('needs a known currency to scale by, unless the rule fixes one', () => {
    expect(ok('1.00', undefined, 'XXQ')).toMatch(/^ERR/);
    const r = one({ postedAmount: { from: 'A', amount: { currency: 'JPY' } } }, { A: '15' });
    expect(r.ok && r.tx.postedAmount).toBe('15');
    expect(invalid({ fields: { ...BASE, postedAmount: { from: 'A', amount: { exponent: 'x' } } } })).toBe(
      'MAPPING_INVALID: fields.postedAmount.amount.exponent: expected integer 0..4, got "x"',
    );
  });
});

describe('codes, booleans, integers, enums', () => {
  it('currency: lowercase, numeric or alpha → alpha-3', () => {
    expect(value('currencyCode', { from: 'C', currency: true }, { C: 'usd' })).toBe('USD');
    expect(value('currencyCode', { from: 'C', currency: true }, { C: 840 })).toBe('USD');
    expect(errorOf('currencyCode', { from: 'C', currency: true }, { C: 'ZZZ' })).toMatch(/ISO 4217/);
  });
  it('country: alpha-3 or numeric → alpha-2', () => {
    const rule = { from: 'C', country: true };
    expect(value('paymentNetworkMerchantCountryCode', rule, { C: 'USA' })).toBe('US');
    expect(value('paymentNetworkMerchantCountryCode', rule, { C: '840' })).toBe('US');
    expect(value('paymentNetworkMerchantCountryCode', rule, { C: 'ca' })).toBe('CA');
    expect(errorOf('paymentNetworkMerchantCountryCode', rule, { C: 'constructor' })).toMatch(/ISO 3166/);
  });
  it('state names → abbreviations', () => {
    expect(value('paymentNetworkMerchantState', { from: 'S', state: true }, { S: 'Arizona' })).toBe('AZ');
    expect(value('paymentNetworkMerchantState', { from: 'S', state: true }, { S: 'new  york' })).toBe('NY');
    expect(errorOf('paymentNetworkMerchantState', { from: 'S', state: true }, { S: 'Atlantis' })).toMatch(
      /state/,
    );
  });
  it('booleans from Y/N, 1/0, yes/no, true/false, T/F', () => {
    const b = (v: unknown) => value('mobileIndicator', { from: 'M', boolean: true }, { M: v });
    expect(['Y', 'yes', 'TRUE', 't', '1', 1, true].map(b)).toEqual(Array(7).fill(true));
    expect(['n', 'No', 'false', 'F', '0', 0, false].map(b)).toEqual(Array(7).fill(false));
    expect(errorOf('mobileIndicator', { from: 'M', boolean: true }, { M: 'maybe' })).toMatch(/expected Y\/N/);
  });
  it('integers', () => {
    expect(value('cardNetworkIdentifier', 'N', { N: ' 4 ' })).toBe(4);
    expect(errorOf('cardNetworkIdentifier', 'N', { N: '4.5' })).toMatch(/integer/);
  });
  it('enumerations via a map, case-insensitive fallback, else/default, or an error', () => {
    const rule = { from: 'W', enum: { ApplePay: 'APPLE_PAY', apple_pay: 'APPLE_PAY' } };
    expect(value('paymentMethodEntryType', rule, { W: 'apple_pay' })).toBe('APPLE_PAY');
    expect(value('paymentMethodEntryType', rule, { W: 'APPLEPAY' })).toBe('APPLE_PAY');
    expect(errorOf('paymentMethodEntryType', rule, { W: 'card' })).toMatch(/unknown value "card"/);
    expect(value('paymentMethodEntryType', { ...rule, else: 'OTHER' }, { W: 'card' })).toBe('OTHER');
    expect(value('paymentMethodEntryType', { ...rule, default: 'CHIP' }, { W: 'card' })).toBe('CHIP');
    expect(value('paymentMethodEntryType', { ...rule, default: 'CHIP' }, {})).toBe('CHIP');
  });
});

describe('card numbers', () => {
  const p = profile({}, { pan: { from: 'PAN', iinLength: 8 } });
  it('derives iin (6 or 8), last4 and cardNetworkIdentifier and drops the PAN', () => {
    const r = p.map({ PAN: '5500 0055 5555 5559' });
    expect(r.ok && [r.tx.iin, r.tx.last4, r.tx.cardNetworkIdentifier]).toEqual(['55000055', '5559', 5]);
    expect(JSON.stringify(r)).not.toMatch(/5500005555555559|5500 0055/);
    const six = profile({}, { pan: { from: 'PAN' } }).map({ PAN: '4111111111111111' });
    expect(six.ok && six.tx.iin).toBe('411111');
    // First 8 + last 4 only for 16 digits or more (PCI DSS): a 13- or 15-digit card keeps 6 with iinLength 8.
    for (const [pan, iin] of [
      ['4222222222222', '422222'],
      ['378282246310005', '378282'],
      ['42222222****2222', '42222222'],
    ] as const) {
      const r = p.map({ PAN: pan });
      expect(r.ok && [r.tx.iin, r.tx.last4], pan).toEqual([iin, pan.slice(-4)]);
    }
  });
  it('rejects a card number failing Luhn without showing it', () => {
    const r = p.map({ PAN: '4111111111111112' });
    expect(r.ok).toBe(false);
    expect(JSON.stringify(r)).not.toContain('4111111111111112');
  });
  it('maskRecord masks the PAN column and any Luhn-valid run anywhere, nested too', () => {
    const masked = p.maskRecord({
      PAN: '4111111111111111',
      note: 'call re 5500-0055-5555-5559 today',
      n: { x: 4012888888881881 },
    });
    expect(masked).toEqual({
      PAN: '411111******1111',
      note: 'call re 550000******5559 today',
      n: { x: '401288******1881' },
    });
    const text = JSON.stringify(masked);
    for (const run of text.match(/\d{13,19}/g) ?? []) expect(luhnValid(run)).toBe(false);
  });
  it('masks a card number typed into free text of the mapped transaction', () => {
    const r = one({ paymentNetworkMerchant: 'N' }, { N: 'Refund 4111 1111 1111 1111' });
    expect(r.ok && r.tx.paymentNetworkMerchant).toBe('Refund 411111******1111');
  });
  it('maskPan and maskCardNumbers', () => {
    expect(maskPan('4111111111111111')).toBe('411111******1111');
    expect(maskPan('378282246310005')).toBe('378282*****0005');
    // An ARN is one long number, not a card number, as an id and in text alike (one rule: what `map` shows is
    // what `send` sends).
    expect(holdsCardNumberId('74567890123456789012345')).toBe(false);
    expect(maskCardNumbers('arn 74567890123456789012345 ok')).toBe('arn 74567890123456789012345 ok');
    // 4111111111111112 fails Luhn but holds 13-digit windows that pass; this one holds none.
    expect(maskCardNumbers('id 4111111111111113')).toBe('id 4111111111111113');
    expect(holdsCardNumberId('4111111111111112')).toBe(false);
  });
});

describe('profiles', () => {
  it('canonical: names as fields, type conversion only', () => {
    const r = canonicalProfile().map({
      transactionId: ' t-1 ',
      mobileIndicator: 'Y',
      cardNetworkIdentifier: '4',
      cardPresentIndicator: 1,
      iin: '079271',
      extra: 'x',
    });
    expect(r).toEqual({
      ok: true,
      tx: {
        transactionId: 't-1',
        mobileIndicator: true,
        cardNetworkIdentifier: 4,
        cardPresentIndicator: '1',
        iin: '079271',
      },
    });
    expect(canonicalProfile().requiredColumns).toContain('postedAmount');
  });
  it('reports every conversion error of a record at once', () => {
    const r = canonicalProfile().map({
      mobileIndicator: 'x',
      recurringTransactionIndicator: 'maybe',
      cardNetworkIdentifier: 'z',
    });
    expect(r.ok === false && r.errors.map((e) => e.field)).toEqual([
      'mobileIndicator',
      'cardNetworkIdentifier',
      'recurringTransactionIndicator',
    ]);
  });
  it('names the JSON path of a bad key', () => {
    expect(invalid({ fields: { ...BASE, nope: 'X' } })).toBe(
      'MAPPING_INVALID: fields.nope: expected a TransactionNotification field name, got "nope"',
    );
    expect(invalid({ fields: { ...BASE, postedAmount: { from: 'A', amount: { units: 'cents' } } } })).toMatch(
      /fields\.postedAmount\.amount\.units/,
    );
    expect(
      invalid({
        fields: { ...BASE, transactionTimestamp: { from: 'T', timestamp: { zone: 'Mars/Olympus' } } },
      }),
    ).toMatch(/fields\.transactionTimestamp\.timestamp: .*unknown time zone/);
    expect(invalid({ fields: { ...BASE, transactionType: { const: 'auth orized' } } })).toMatch(
      /fields\.transactionType\.const/,
    );
    expect(invalid({ fields: { transactionId: 'ID' } })).toMatch(
      /^MAPPING_INVALID: fields: expected a rule for every required field/,
    );
    expect(invalid({ fields: BASE, pan: { from: 'P', iinLength: 7 } })).toMatch(
      /pan\.iinLength: expected 6 or 8/,
    );
    expect(invalid({ fields: BASE, colour: 1 })).toMatch(/^MAPPING_INVALID: colour:/);
  });
  it('lists required columns the header must have', () => {
    const p = profile({
      transactionId: 'ID',
      paymentType: { from: 'PT', default: 'DEBIT' },
      postedAmount: { template: '{A}{B}' },
    });
    expect(p.requiredColumns.sort()).toEqual(['A', 'B', 'ID']);
  });
  it('loads by bare name or path; missing file → MAPPING_UNREADABLE, bad JSON → MAPPING_INVALID', async () => {
    expect((await loadProfile('northwind-csv')).name).toBe('northwind-csv');
    expect((await loadProfile()).name).toBe('canonical');
    await expect(loadProfile('no-such-profile')).rejects.toMatchObject({ code: 'MAPPING_UNREADABLE' });
    const bad = path.join(dir, 'bad.json');
    writeFileSync(bad, '{ "fields": ');
    await expect(loadProfile(bad)).rejects.toMatchObject({ code: 'MAPPING_INVALID' });
    const good = path.join(dir, 'mine.json');
    writeFileSync(good, JSON.stringify({ fields: BASE }));
    expect((await loadProfile(good)).name).toBe('mine');
  });
});

describe('paths: array selectors, and a load-time error for what the language does not understand', () => {
  const events = [
    { type: 'AUTHORIZATION', created: 'a', seq: 1 },
    { type: 'CLEARING', created: 'c1', seq: 2 },
    { type: 'CLEARING', created: 'c2', seq: 3 },
  ];
  const get = (path: string, rec: Record<string, unknown>) => value('acquirerReferenceNumber', path, rec);
  it('[key=value] picks the first element whose key reads as value (quotes optional, numbers as text)', () => {
    expect(get('events[type=CLEARING].created', { events })).toBe('c1');
    expect(get('events[type="CLEARING"].created', { events })).toBe('c1');
    expect(get("events[ type = 'AUTHORIZATION' ].created", { events })).toBe('a');
    expect(get('events[seq=3].created', { events })).toBe('c2');
    expect(get('events[type=CLEARING].created', { events: [...events].reverse() })).toBe('c2');
  });
  it('[n] picks by position, negative from the end; a dotted number still works', () => {
    expect(get('events[0].created', { events })).toBe('a');
    expect(get('events[-1].created', { events })).toBe('c2');
    expect(get('events.1.created', { events })).toBe('c1');
    expect(get('a.b[1][0]', { a: { b: [['x'], ['y', 'z']] } })).toBe('y');
  });
  it('no match, not an array, or a literal key holding the whole path', () => {
    const r = one({ acquirerReferenceNumber: 'events[type=RETURN].created' }, { events });
    expect(r.ok && 'acquirerReferenceNumber' in r.tx).toBe(false);
    expect(
      get('events[type=CLEARING].created', { events: { type: 'CLEARING', created: 'x' } }),
    ).toBeUndefined();
    expect(get('events[0].created', { 'events[0].created': 'flat' })).toBe('flat');
  });
  it('refuses paths it does not understand, with the JSON path of the key', () => {
    const path = (rule: unknown) => invalid({ fields: { ...BASE, transactionTimestamp: rule } });
    expect(path({ from: 'events[type=CLEARING.created', timestamp: true })).toBe(
      'MAPPING_INVALID: fields.transactionTimestamp.from: expected a closed selector [n] or [key=value] in "events[type=CLEARING.created"',
    );
    for (const bad of [
      'events[*].created',
      'events[].created',
      'events[type=].created',
      '[0].created',
      'a]b',
      'events[0]created',
      'events[type==X].c',
      '$.events[0].created',
      'events.*.created',
    ])
      expect(path({ from: bad, timestamp: true }), bad).toMatch(
        /^MAPPING_INVALID: fields\.transactionTimestamp\.from: expected /,
      );
    expect(path({ template: '{d[x} {t}', timestamp: true })).toMatch(
      /fields\.transactionTimestamp\.template: /,
    );
    expect(invalid({ fields: { ...BASE, transactionId: { hash: { of: ['a', 'b['] } } } })).toMatch(
      /fields\.transactionId\.hash\.of\[1\]: /,
    );
    expect(invalid({ fields: BASE, pan: { from: 'card[' } })).toMatch(/^MAPPING_INVALID: pan\.from: /);
  });
  it('a CSV header with dots in it is read as it is; brackets are escaped with a backslash', () => {
    expect(get('Txn No.', { 'Txn No.': 'n-1' })).toBe('n-1');
    expect(get('merchant.city', { 'merchant.city': 'Mesa' })).toBe('Mesa');
    expect(get('Amount \\[USD\\]', { 'Amount [USD]': '12' })).toBe('12');
    expect(get('a\\.b.c', { 'a.b': { c: 'nested' } })).toBe('nested');
    expect(get('C:\\Temp', { 'C:\\Temp': 'kept' })).toBe('kept');
    expect(invalid({ fields: { ...BASE, acquirerReferenceNumber: 'Amount [USD]' } })).toMatch(
      /fields\.acquirerReferenceNumber\.from: expected a selector \[n\] or \[key=value\], got \[USD\]/,
    );
    const p = profile({ acquirerReferenceNumber: 'Amount \\[USD\\]' });
    expect(p.columns.find((c) => c.field === 'acquirerReferenceNumber')?.column).toBe('Amount [USD]');
  });
});

describe('split and match', () => {
  const city = { from: 'LOC', split: { separator: ',', at: 'last', part: 0 } };
  const state = { from: 'LOC', split: { separator: ',', at: 'last', part: 1 }, state: true };
  const both = (loc: string) => {
    const r = one({ paymentNetworkMerchantCity: city, paymentNetworkMerchantState: state }, { LOC: loc });
    return r.ok
      ? [r.tx.paymentNetworkMerchantCity, r.tx.paymentNetworkMerchantState]
      : r.errors.map((e) => `${e.field}: ${e.message}`);
  };
  it('splits "CITY, ST" at the last separator', () => {
    expect(both('SAN JOSE, CA')).toEqual(['SAN JOSE', 'CA']);
    expect(both('MELBOURNE, VIC')).toEqual(['MELBOURNE', 'VIC']);
    expect(both('ST. PAUL, MN')).toEqual(['ST. PAUL', 'MN']);
    expect(both('AMZN MKTP US, WA')).toEqual(['AMZN MKTP US', 'WA']);
    expect(both('WASHINGTON, DC, US')).toEqual(['WASHINGTON, DC', 'US']);
  });
  it('a missing part is a conversion failure naming the field, never an empty value', () => {
    expect(both('LONDON')).toEqual([
      'paymentNetworkMerchantState: "LONDON" has no part 1 when split on "," at its last',
    ]);
  });
  it('every separator, part n or counted from the end; first occurrence', () => {
    const v = (split: unknown, s: string) => value('paymentNetworkMerchant', { from: 'X', split }, { X: s });
    expect(v({ separator: '|', part: 1 }, 'a|b|c')).toBe('b');
    expect(v({ separator: '|', part: -1 }, 'a|b|c')).toBe('c');
    expect(v({ separator: ' - ', at: 'first', part: 1 }, 'SHOP - 12 - X')).toBe('12 - X');
    expect(v({ separator: '|', part: 0 }, 'whole')).toBe('whole');
    expect(
      errorOf('paymentNetworkMerchant', { from: 'X', split: { separator: '|', part: 3 } }, { X: 'a|b' }),
    ).toBe('"a|b" has no part 3 when split on "|"');
  });
  it('match: group 1 by default, a named or numbered group, flags', () => {
    const v = (match: unknown, s: string) =>
      value('paymentNetworkMerchantState', { from: 'X', match }, { X: s });
    expect(v('^.*,\\s*([A-Z]{2,3})$', 'SAN JOSE, CA')).toBe('CA');
    expect(v({ pattern: '^(?<city>.+?),\\s*(?<st>[a-z]{2,3})$', group: 'st', flags: 'i' }, 'Mesa, az')).toBe(
      'az',
    );
    expect(v({ pattern: '[A-Z]{2}$', group: 0 }, 'Tempe AZ')).toBe('AZ');
    expect(
      errorOf('paymentNetworkMerchantState', { from: 'X', match: '^.*,\\s*([A-Z]{2,3})$' }, { X: 'LONDON' }),
    ).toBe('"LONDON" does not match /^.*,\\s*([A-Z]{2,3})$/');
  });
  it('else stands in for a value split or match cannot take apart (null = leave the field out)', () => {
    const r = one(
      {
        paymentNetworkMerchantState: { ...state, else: null, required: false },
        paymentNetworkMerchantCountryCode: { from: 'LOC', match: ', ([A-Z]{2})$', else: 'GB' },
      },
      { LOC: 'LONDON' },
    );
    expect(r.ok && [r.tx.paymentNetworkMerchantState, r.tx.paymentNetworkMerchantCountryCode]).toEqual([
      undefined,
      'GB',
    ]);
  });
  it('is checked at load', () => {
    const f = (rule: unknown) => invalid({ fields: { ...BASE, paymentNetworkMerchantState: rule } });
    expect(f({ from: 'X', match: '([A-Z' })).toMatch(
      /^MAPPING_INVALID: fields\.paymentNetworkMerchantState\.match: expected a valid regular expression/,
    );
    expect(f({ from: 'X', match: { pattern: '(a)', group: 2 } })).toMatch(
      /\.match\.group: expected a capture group of the pattern \(0\.\.1\)/,
    );
    expect(f({ from: 'X', match: { pattern: 'a', flags: 'g' } })).toMatch(
      /\.match\.flags: expected any of i, m, s, u/,
    );
    expect(f({ from: 'X', split: { separator: '', part: 0 } })).toMatch(/\.split\.separator: /);
    expect(f({ from: 'X', split: { separator: ',', part: 1.5 } })).toMatch(/\.split\.part: /);
    expect(f({ from: 'X', split: { separator: ',', part: 0, at: 'middle' } })).toMatch(/\.split\.at: /);
    expect(f({ from: 'X', split: { separator: ',' } })).toMatch(/\.split\.part: /);
    expect(f({ const: 'AZ', match: 'x' })).toMatch(
      /\.match: expected split and match only with from or template/,
    );
    expect(f({ from: 'X', match: '(..)', else: 'not a state' })).toMatch(
      /\.else: expected a valid paymentNetworkMerchantState/,
    );
    expect(f({ from: 'X', else: 'AZ' })).toMatch(
      /\.else: expected else only together with enum, split or match/,
    );
  });
});

describe('"required" per field', () => {
  it('false: a record without the value is valid for this profile only; its format is still checked', async () => {
    const { validateTransaction } = await import('../../src/validate/validate.ts');
    const p = profile({ paymentNetworkMerchantState: { from: 'ST', required: false } });
    expect(p.relaxed).toEqual(['paymentNetworkMerchantState']);
    expect(p.required).not.toContain('paymentNetworkMerchantState');
    const without = p.map({});
    expect(without.ok && validateTransaction(without.tx as never, p.required)).toEqual([]);
    // The default list still wants it.
    expect(without.ok && validateTransaction(without.tx as never).map((e) => e.field)).toEqual([
      'paymentNetworkMerchantState',
    ]);
    const wrong = p.map({ ST: 'Nowhere land' });
    expect(wrong.ok && validateTransaction(wrong.tx as never, p.required).map((e) => e.field)).toEqual([
      'paymentNetworkMerchantState',
    ]);
    expect(p.columns.find((c) => c.column === 'ST')).toMatchObject({ required: false });
  });
  it("mapValid answers as map followed by validateTransaction with the profile's required list", async () => {
    const { validateTransaction } = await import('../../src/validate/validate.ts');
    const p = profile({
      paymentNetworkMerchantState: { from: 'ST', required: false },
      acquirerReferenceNumber: { from: 'ARN', required: true },
      postedAmount: { from: 'AMT', amount: true },
      currencyCode: { from: 'CUR', currency: true },
    });
    const records: Array<[Record<string, unknown>, boolean]> = [
      [{ ARN: '123', AMT: '5.00', CUR: 'usd' }, false],
      [{ ARN: '123', AMT: '5.00', CUR: 'usd', ST: 'AZ' }, false],
      [{ ARN: '123', AMT: '5.00', CUR: 'usd', ST: 'Nowhere land' }, false],
      [{ AMT: '5.00', CUR: 'usd' }, false],
      [{ ARN: 'bad arn!', AMT: 'five', CUR: 'usd' }, false],
      [{ ARN: '12\ufffd3', AMT: '5.00', CUR: 'usd' }, true],
      [{ ARN: '12\ufffd3', AMT: '5.00', CUR: 'usd' }, false],
    ];
    for (const [rec, invalidUtf8] of records) {
      const mapped = p.map(rec);
      const errors = mapped.ok
        ? validateTransaction(mapped.tx as never, p.required, invalidUtf8)
        : mapped.errors;
      const expected = errors.length === 0 && mapped.ok ? { ok: true, tx: mapped.tx } : { ok: false, errors };
      const got = p.mapValid(rec, invalidUtf8);
      if (!mapped.ok) {
        // A record whose conversions failed lists its other fields' problems too, after them.
        expect(got.ok).toBe(false);
        expect(got.ok ? [] : got.errors.slice(0, errors.length), JSON.stringify(rec)).toEqual(errors);
        continue;
      }
      expect(got, JSON.stringify(rec)).toEqual(expected);
      // Its transaction holds absent fields as undefined: the JSON sent is the same text, field for field.
      if (got.ok && mapped.ok) expect(JSON.stringify(got.tx)).toBe(JSON.stringify(mapped.tx));
    }
    // "bad arn!" fails validation while "five" fails its conversion: both are said.
    const both = p.mapValid(records[4]?.[0] ?? {}, false);
    expect(both.ok ? [] : both.errors.map((e) => e.field)).toEqual([
      'postedAmount',
      'acquirerReferenceNumber',
    ]);
    expect(p.mapValid(records[0]?.[0] ?? {}, false).ok).toBe(true);
    expect(p.mapValid(records[3]?.[0] ?? {}, false)).toMatchObject({
      ok: false,
      errors: [{ field: 'acquirerReferenceNumber', message: 'required' }],
    });
  });
  it('true makes an optional field required; transactionId can never be optional', () => {
    const p = profile({ acquirerReferenceNumber: { from: 'ARN', required: true } });
    expect(p.required.at(-1)).toBe('acquirerReferenceNumber');
    expect(p.requiredColumns).toContain('ARN');
    expect(invalid({ fields: { ...BASE, transactionId: { from: 'ID', required: false } } })).toBe(
      'MAPPING_INVALID: fields.transactionId.required: expected true (every record needs its transactionId), got false',
    );
    expect(invalid({ fields: { ...BASE, transactionId: { from: 'ID', required: 'no' } } })).toMatch(
      /fields\.transactionId\.required: expected true or false/,
    );
  });
});

describe('hash ids', () => {
  const rule = { hash: { of: ['auth_id', 'network'], separator: '|', length: 32 } };
  const id = (rec: Record<string, unknown>) => {
    const r = one({ transactionId: rule }, rec);
    return r.ok ? r.tx.transactionId : undefined;
  };
  it('any empty part makes the id missing', () => {
    expect(id({ auth_id: '', network: 'V' })).toBeUndefined();
    expect(id({ auth_id: '12', network: '  ' })).toBeUndefined();
    expect(id({ auth_id: '12' })).toBeUndefined();
  });
  it('parts are encoded unambiguously; ids of parts without the separator are as before', () => {
    const sha = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 32);
    expect(id({ auth_id: '12', network: 'V' })).toBe(sha('12|V'));
    expect(id({ auth_id: '12|V', network: 'M' })).not.toBe(id({ auth_id: '12', network: 'V|M' }));
    expect(id({ auth_id: '12|V', network: 'M' })).toBe(sha('12\\|V|M'));
    expect(id({ auth_id: 'a\\', network: '|b' })).not.toBe(id({ auth_id: 'a\\|', network: 'b' }));
    expect(invalid({ fields: { ...BASE, transactionId: { hash: { of: ['a'], separator: '||' } } } })).toMatch(
      /fields\.transactionId\.hash\.separator: expected one character other than a backslash/,
    );
  });
});

describe('columns a profile names', () => {
  it('each with the JSON path of its rule key, required or not (in the order of the fields)', () => {
    const p = profile(
      {
        transactionId: { hash: { of: ['A', 'B'] } },
        transactionTimestamp: {
          template: '{D} {T}',
          timestamp: { format: 'YYYY-MM-DD HH:mm:ss', zone: 'UTC' },
        },
        paymentType: { from: 'PT', default: 'DEBIT' },
        acquirerReferenceNumber: 'ARN',
      },
      { pan: { from: 'CARD' } },
    );
    expect(p.columns.map((c) => [c.column, c.rule, c.required])).toEqual([
      ['A', 'fields.transactionId.hash.of[0]', true],
      ['B', 'fields.transactionId.hash.of[1]', true],
      ['PT', 'fields.paymentType.from', false],
      ['D', 'fields.transactionTimestamp.template', true],
      ['T', 'fields.transactionTimestamp.template', true],
      ['ARN', 'fields.acquirerReferenceNumber.from', false],
      ['CARD', 'pan.from', false],
    ]);
  });
});
