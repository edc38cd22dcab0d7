// The card-number rule (src/mask/index.ts): masking every window in text, the id reading, keys, numbers, excerpts.
import { describe, expect, it } from 'vitest';
import {
  containsCardNumber,
  hasThirteenDigits,
  holdsCardNumberId,
  maskCardNumbers,
  maskDeep,
  maskExcerpt,
  maskOwnRecord,
  maskPan,
} from '../../src/mask/index.ts';
import { LEAK_PANS, writings } from '../helpers/leak-corpus.ts';
import {
  isBrandCard,
  luhn,
  luhnWindows,
  panPiecesIn,
  pansIn,
  TEST_PANS,
  withCheckDigit,
} from '../helpers/pans.ts';

const PANS = Object.values(TEST_PANS);
const { visa, mastercard, amex } = TEST_PANS;

/** Deterministic pseudo-random digits. */
function digitsFrom(seed: number, n: number): string {
  let x = seed;
  let s = '';
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    s += String((x >> 16) % 10);
  }
  return s;
}

describe('masking text: card numbers where the digits stand as a card is written', () => {
  it('masks every test card number, bare and written with spaces, dashes, dots or slashes', () => {
    for (const pan of PANS) {
      const spaced = pan.replace(/(\d{4})(?=\d)/g, '$1 ');
      for (const written of [
        pan,
        spaced,
        spaced.replace(/ /g, '-'),
        spaced.replace(/ /g, '.'),
        spaced.replace(/ /g, '/'),
      ]) {
        const out = maskCardNumbers(`paid with ${written} today`);
        expect(out, written).toBe(`paid with ${maskPan(pan)} today`);
        expect(luhnWindows(out)).toEqual([]);
      }
    }
  });

  it('finds card numbers inside longer runs: a neighbouring group, a tail, two numbers one space apart', () => {
    const cases = [
      `7-ELEVEN 1234 ${visa}`,
      '4111 1111 1111 1111 123',
      `${visa} ${mastercard}`,
      `ref 99 ${amex} 42`,
      `0000${visa}`,
      `${visa}.00`,
      'card no. 4111.1111.1111.1111.22',
    ];
    for (const text of cases) {
      const out = maskCardNumbers(text);
      expect(pansIn(out), `${text} → ${out}`).toEqual([]);
      expect(luhnWindows(out), `${text} → ${out}`).toEqual([]);
      expect(containsCardNumber(text)).toBe(true);
      expect(containsCardNumber(out)).toBe(false);
    }
    // What stays readable: the text around, the separators, each number's first 6 and last 4 digits at most.
    expect(maskCardNumbers(`7-ELEVEN 1234 ${visa}`)).toBe('7-ELEVEN 1234 411111******1111');
    expect(maskCardNumbers('4111 1111 1111 1111 123')).toBe('4111 11** **** 1111 123');
    expect(maskCardNumbers(`${visa} ${mastercard}`)).toBe('411111******1111 550000******5559');
    expect(maskCardNumbers(`/tmp/x0/${visa}.csv`)).toBe('/tmp/x0/411111******1111.csv');
  });

  it('leaves text without a Luhn-valid window as it is, and is idempotent', () => {
    for (const text of [
      'Blue Bottle Coffee #7721',
      '2025-10-01T05:00:00.214Z',
      'id 4111111111111113',
      '12 34 56 78 90 12',
      'tel 415-555-0100 ext 12',
      // Zeros only pass Luhn but are no number: an ARN padded with them keeps its digits.
      '0000000000000000',
      'arn 74618130000000000000001',
      '',
    ]) {
      expect(maskCardNumbers(text)).toBe(text);
      expect(containsCardNumber(text)).toBe(false);
    }
    const once = maskCardNumbers(`a ${visa} b 1234 ${mastercard} c`);
    expect(maskCardNumbers(once)).toBe(once);
  });

  it('error text and ids a person reads as no card number stay as written (issues 29, 33, 35)', () => {
    for (const text of [
      'could not extend file "pg_tblspc/34531/PG_18_202506291/34532/34700": No space left on device',
      'could not write to file "base/16384/34532.1": No space left on device (OID 3453278763)',
      'HTTP 500 [requestId c2643914-6029-4123-8183-0242ac120002]',
      'arn 74618130000000000000007',
      'WAL-MART SC #6512 355-1870472',
    ]) {
      expect(maskCardNumbers(text)).toBe(text);
      expect(containsCardNumber(text)).toBe(false);
    }
  });

  it('a number glued to other digits is one longer number, not a card number (as send reads an id)', () => {
    for (const text of [`${visa}${mastercard}`, `1234${visa}`, `ref ${visa}99`]) {
      expect(maskCardNumbers(text)).toBe(text);
      expect(holdsCardNumberId(text.replace('ref ', ''))).toBe(false);
    }
  });

  it('stays linear on a hostile megabyte of digits', () => {
    const text = digitsFrom(7, 1_000_000);
    const t0 = performance.now();
    const out = maskCardNumbers(text);
    expect(performance.now() - t0).toBeLessThan(5000);
    expect(out).toBe(text);
    const grouped = text.slice(0, 400_000).replace(/(\d{4})/g, '$1 ');
    const t1 = performance.now();
    const masked = maskCardNumbers(grouped);
    expect(performance.now() - t1).toBeLessThan(5000);
    expect(masked.length).toBe(grouped.length);
    expect(masked).not.toBe(grouped);
  });

  it('the pre-check: 13 digits (of any script) or not', () => {
    expect(hasThirteenDigits('tx-000123')).toBe(false);
    expect(hasThirteenDigits('a1b2c3d4e5f6g7h8i9j0k1l2m')).toBe(false);
    expect(hasThirteenDigits('a1b2c3d4e5f6g7h8i9j0k1l2m3')).toBe(true);
    expect(hasThirteenDigits('٤١١١١١١١١١١١١١١١')).toBe(true);
    expect(hasThirteenDigits('４１１１１１１１１１１１')).toBe(false);
  });
});

describe('every writing of the leak corpus (test/helpers/leak-corpus.ts): found in text and in ids', () => {
  it('each brand’s test number in 34 writings: masked to no 12 digits in a row, refused as an id', () => {
    for (const pan of Object.values(LEAK_PANS)) {
      expect(isBrandCard(pan), pan).toBe(true);
      for (const w of writings(pan)) {
        const out = maskCardNumbers(`note: ${w}; end`);
        expect(panPiecesIn(out, [pan]), `${JSON.stringify(w)} → ${out}`).toEqual([]);
        expect(containsCardNumber(w), JSON.stringify(w)).toBe(true);
        expect(holdsCardNumberId(w), JSON.stringify(w)).toBe(true);
        expect(maskCardNumbers(out)).toBe(out);
      }
    }
  });

  it('an excerpt never cuts between the halves of a digit outside the BMP, nor leaves 12 digits', () => {
    const pan = LEAK_PANS.visa as string;
    const math = writings(pan).find((w) => w.codePointAt(0) === 0x1d7ce + 4) as string;
    for (let pad = 180; pad < 220; pad++) {
      const out = maskExcerpt(`${'x'.repeat(pad)}${math} tail`, 100);
      expect(panPiecesIn(out, [pan])).toEqual([]);
    }
  });
});

describe('ids: whole digit groups and sequences of groups, never a window inside one', () => {
  it('holds a card number: bare, with a suffix or prefix, letters around, written in groups, zero-padded', () => {
    for (const pan of PANS) {
      for (const id of [
        pan,
        `${pan}-01`,
        `01-${pan}`,
        `TX${pan}`,
        `acct:${pan}:2`,
        pan.replace(/(\d{4})(?=\d)/g, '$1 '),
        pan.replace(/(\d{4})(?=\d)/g, '$1\u00a0'),
        pan.replace(/(\d{4})(?=\d)/g, '$1\u200b'),
        `x-${pan.replace(/(\d{4})(?=\d)/g, '$1.')}`,
        `0000000${pan}`,
        `0000-${pan}`,
      ]) {
        expect(holdsCardNumberId(id), id).toBe(true);
      }
    }
  });

  it('does not: a 20-23-digit reference number with Luhn-valid windows inside, zero-padded small numbers, short ids', () => {
    const arn = '74567890123456789012345';
    expect(luhnWindows(arn).length).toBeGreaterThan(0);
    for (const id of [
      arn,
      `${arn}-01`,
      '74611121510000000000',
      '0000000000012345',
      '0000000000000000',
      'TXN-20251120-0001',
      'tx-0000000001',
      '445566000000000',
      '4111111111111113',
      withCheckDigit('4111111111111111111').slice(0, 20),
    ]) {
      if (id === '445566000000000') expect(luhn(id)).toBe(false);
      expect(holdsCardNumberId(id), id).toBe(false);
    }
  });

  it('false-positive odds: a random number is refused only where a brand issues cards (about 1 in 30), never for 23 digits', () => {
    let hit7 = 0;
    let hit16 = 0;
    let hit23 = 0;
    let expected = 0;
    const n = 20_000;
    for (let k = 0; k < n; k++) {
      const id = `${1 + (k % 9)}${digitsFrom(k + 11, 15)}`;
      if (holdsCardNumberId(`7${digitsFrom(k + 11, 15)}`)) hit7++;
      if (holdsCardNumberId(id)) hit16++;
      if (isBrandCard(id)) expected++;
      if (holdsCardNumberId(`9${digitsFrom(k + 11, 22)}`)) hit23++;
    }
    expect(hit7).toBe(0);
    expect(hit16).toBe(expected);
    expect(hit16 / n).toBeGreaterThan(0.03);
    expect(hit16 / n).toBeLessThan(0.07);
    expect(hit23).toBe(0);
  });

  it('UUIDs, hex ids, groupings cards are not printed in, a phone number after +, fixed-width fields: no card number', () => {
    for (const id of [
      'de6a90e9-8939-4827-8942-8fda87f2ec1f',
      'fd0bcc70-5403-4000-8628-01eeec1f16c3',
      '45395787-6362-4148-8000-000000000000',
      'a1b2c3d4-4539-5787-6362-1486abcdef01',
      '4539.578763621486',
      '+4539578763621',
      '+378282246310005',
      // Hex and base62 ids: a long digit group glued to letters is chance where the word has other digits.
      'a1b4539578763621486',
      '4539578763621486x9',
      '9f3c4539578763621486ab0e',
    ])
      expect(holdsCardNumberId(id), id).toBe(false);
    // A fixed width keeps a number of that width, but not a card number padded with 4 zeros or more.
    expect(holdsCardNumberId('70004539578763621486123', 23)).toBe(false);
    expect(holdsCardNumberId(`0000000${'4539578763621486'}`, 23)).toBe(true);
    expect(holdsCardNumberId('00004539578763621486123')).toBe(true);
    expect(holdsCardNumberId(TEST_PANS.amex, 15)).toBe(false);
    expect(holdsCardNumberId(TEST_PANS.amex)).toBe(true);
    // A plus sign does not hide a 16-digit one.
    expect(holdsCardNumberId(`+${visa}`)).toBe(true);
  });
});

describe('maskDeep: values, keys and numbers', () => {
  it('masks keys and string values at any depth', () => {
    const out = maskDeep({
      [visa]: 'x',
      nested: { [`k ${mastercard}`]: [`note ${amex}`, { deep: visa }] },
    });
    const text = JSON.stringify(out);
    expect(pansIn(text)).toEqual([]);
    expect(luhnWindows(text)).toEqual([]);
    expect(out).toEqual({
      '411111******1111': 'x',
      nested: { 'k 550000******5559': ['note 378282*****0005', { deep: '411111******1111' }] },
    });
  });

  it('turns numbers holding a card number into masked strings, exact or already rounded by JSON.parse', () => {
    const parsed = JSON.parse(
      `{"a": ${visa}, "b": ${TEST_PANS.unionpay19}, "c": -${mastercard}, "d": 1234, "e": 1e30}`,
    );
    const out = maskDeep(parsed) as Record<string, unknown>;
    expect(out.a).toBe('411111******1111');
    expect(typeof out.b).toBe('string');
    expect(String(out.b)).toMatch(/^\d{6}\*+\d{4}$/);
    expect(out.c).toBe('-550000******5559');
    expect(out.d).toBe(1234);
    expect(out.e).toBe(1e30);
    expect(maskDeep(BigInt(visa))).toBe('411111******1111');
  });

  it('maskOwnRecord keeps our own ids (top level, own shape) whole; maskDeep never does, whatever the key', () => {
    // 23961213-3822-4639: its 16 digits are a Mastercard 2-series number, but 8-4-4 is no grouping cards are
    // printed in: a UUID is no card number, in free text as in an id. A batch id of 16 digits is one.
    const uuid = '23961213-3822-4639-94a8-0c6f2e1b7d55';
    expect(maskCardNumbers(uuid)).toBe(uuid);
    const own = maskOwnRecord({
      requestId: uuid,
      nested: [{ clientRequestId: uuid }],
      error: `HTTP 500 [requestId ${uuid}]`,
    }) as Record<string, unknown>;
    expect(own.requestId).toBe(uuid);
    expect(own.nested).toEqual([{ clientRequestId: uuid }]);
    expect(own.error).toContain(uuid);
    expect(maskOwnRecord({ requestId: `${visa}` })).toEqual({ requestId: '411111******1111' });
    // Input data naming its keys like ours gets no exemption.
    for (const [k, v] of [
      ['requestId', `${visa}`],
      ['batchId', 'deadbeef-4539578763621486'],
      ['clientRequestId', `x-${visa}`],
    ] as const) {
      expect((maskDeep({ [k]: v }) as Record<string, string>)[k]).not.toBe(v);
    }
    // Nor a value in our key but not in our shape (a counter of 16 digits is no counter of ours).
    expect(maskOwnRecord({ batchId: 'deadbeef-4539578763621486' })).toEqual({
      batchId: 'deadbeef-453957******1486',
    });
  });
});

describe('maskExcerpt', () => {
  it('masks before it cuts, and never cuts a card number into an unrecognised piece', () => {
    for (let pad = 380; pad < 420; pad++) {
      const text = `${'x'.repeat(pad)}${visa.slice(0, 4)} ${visa.slice(4)} tail`;
      const out = maskExcerpt(text, 200);
      expect(out.length).toBeLessThanOrEqual(201);
      expect(pansIn(out)).toEqual([]);
    }
    const near = maskExcerpt(`${'x'.repeat(190)}${visa}`, 200);
    expect(near).toBe(`${'x'.repeat(190)}411111****…`);
  });

  it('keeps a batch id in its own shape under batchId whole (maskOwnRecord); elsewhere, or in another shape there, it is masked', () => {
    // A run id of decimal digits and a halving path whose digits form a Visa-13 window: 8-1-1-1-1-1 is no grouping
    // cards are printed in, so it is kept everywhere.
    const batchId = '41234563-1.1.1.2.1';
    expect(maskCardNumbers(batchId)).toBe(batchId);
    for (const id of [batchId, '2d000640-p3-12.1', '2d000640-w1-4'])
      expect(maskOwnRecord({ batchId: id })).toEqual({ batchId: id });
    expect((maskOwnRecord({ note: `41234563-${visa}` }) as { note: string }).note).not.toContain(visa);
    expect(maskOwnRecord({ batchId: visa })).toEqual({ batchId: '411111******1111' });
  });
});
