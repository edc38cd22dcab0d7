// issue 31: a profile that cannot be silently wrong. mapping check reads the whole export and warns of a probably
// wrong profile; an option that would do nothing fails at load; a built-in profile on another processor's export
// stops at once; first-of, optional template parts and zones from the merchant's location, one rule at a time.
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { compileProfile } from '../../src/map/compile.ts';
import { runCliHere } from '../helpers/cli.ts';
import { CONST_RULES } from '../helpers/profiles.ts';

const EXPORT = 'test/fixtures/multi-event/export.ndjson';
const ONE_ZONE = 'test/fixtures/multi-event/one-zone.json';
let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-silent-'));
});

// The shared constants, with an id, times and an amount read from the record.
const CONSTS = {
  ...CONST_RULES,
  transactionId: 'ID',
  transactionTimestamp: { from: 'T', timestamp: true },
  transactionPostingTimestamp: { from: 'T', timestamp: true },
  postedAmount: { from: 'A', amount: true },
  paymentNetworkMerchantState: { const: 'NY' },
};
/** `send --dry-run` of one file with a profile and a ledger of its own. */
const dryRun = (mapping: string, ledger: string, file: string) =>
  runCliHere(['send', '--dry-run', '--mapping', mapping, '--ledger', join(dir, ledger), file]);
const compile = (fields: Record<string, unknown>, top: Record<string, unknown> = {}) =>
  compileProfile({ ...top, fields: { ...CONSTS, ...fields } }, 'p.json', 'p');
const loadError = (fields: Record<string, unknown>, top: Record<string, unknown> = {}): string => {
  try {
    compile(fields, top);
  } catch (err) {
    return (err as Error).message;
  }
  return 'loaded';
};

describe('an option that would do nothing fails at load, naming rule and option', () => {
  it('zeroPad beside enum, text options beside a conversion, anything beside const, currency and exponent', () => {
    expect(loadError({ paymentMethodEntryType: { from: 'E', enum: { '5': 'CHIP' }, zeroPad: 2 } })).toBe(
      "fields.paymentMethodEntryType.zeroPad: expected no zeroPad here: text options apply to a text value without a conversion, and enum's output is final, got 2",
    );
    expect(loadError({ transactionTimestamp: { from: 'T', timestamp: true, maxLength: 10 } })).toMatch(
      /^fields\.transactionTimestamp\.maxLength: expected no maxLength here/,
    );
    expect(loadError({ mobileIndicator: { from: 'M', case: 'upper' } })).toMatch(
      /^fields\.mobileIndicator\.case: expected no case here: .* boolean's output is final/,
    );
    expect(loadError({ postedAmount: { from: 'A', amount: true, trim: false } })).toMatch(
      /^fields\.postedAmount\.trim: expected no trim here/,
    );
    expect(loadError({ paymentType: { const: 'DEBIT', default: 'CREDIT' } })).toMatch(
      /^fields\.paymentType\.default: expected no default here: const is the output value/,
    );
    expect(loadError({ transactionId: { hash: { of: ['ID'] }, maxLength: 10 } })).toMatch(
      /^fields\.transactionId\.maxLength: expected no maxLength here: a hash is the finished id/,
    );
    expect(loadError({ postedAmount: { from: 'A', amount: { currency: 'JPY', exponent: 2 } } })).toMatch(
      /^fields\.postedAmount\.amount\.currency: expected currency or exponent, not both/,
    );
    expect(loadError({ paymentNetworkMCC: { first: ['MCC', 'MCC2'], zeroPad: 4 } })).toMatch(
      /^fields\.paymentNetworkMCC\.zeroPad: expected only default, required or description beside first/,
    );
    expect(loadError({ paymentNetworkMCC: { first: [{ from: 'MCC', required: true }, 'X'] } })).toMatch(
      /^fields\.paymentNetworkMCC\.first\[0\]\.required: expected no required in a source of first/,
    );
    expect(loadError({ postedAmount: { from: 'A', amount: { units: 'minor', currency: 'JPY' } } })).toMatch(
      /^fields\.postedAmount\.amount\.currency: expected no currency with "units": "minor"/,
    );
    expect(
      loadError({
        transactionTimestamp: { from: 'T', timestamp: { format: 'unix-s', zone: 'America/Denver' } },
      }),
    ).toMatch(/^fields\.transactionTimestamp\.timestamp\.zone: expected no zone with "format": "unix-s"/);
    // The same options where they work still load.
    expect(loadError({ paymentNetworkMCC: { from: 'MCC', zeroPad: 4 } })).toBe('loaded');
  });
});

describe('first of several sources, each with its own options', () => {
  it('takes the first that yields a value after its own conversion; a failing one rejects, naming it', () => {
    const p = compile({
      transactionPostingTimestamp: {
        first: [
          { from: 'events[status=captured].at', timestamp: true },
          { from: 'POSTED_LOCAL', timestamp: { format: 'MM/DD/YYYY HH:mm', zone: 'America/Chicago' } },
        ],
      },
      paymentMethodEntryType: {
        first: [
          { from: 'WALLET', enum: { apple: 'APPLE_PAY' }, else: null },
          { from: 'MODE', enum: { chip: 'CHIP' } },
        ],
        default: 'OTHER',
      },
    });
    const base = { ID: 't1', T: '2026-03-01T10:00:00Z', A: '1.00' };
    const tx = (r: Record<string, unknown>) => {
      const m = p.map({ ...base, ...r });
      return m.ok ? m.tx : m.errors;
    };
    expect(
      tx({ events: [{ status: 'captured', at: '2026-03-02T09:00:00Z' }], WALLET: 'apple' }),
    ).toMatchObject({
      transactionPostingTimestamp: '2026-03-02T09:00:00.000Z',
      paymentMethodEntryType: 'APPLE_PAY',
    });
    // No captured event: the local time in Chicago; a wallet the enum does not know hands over to MODE.
    expect(tx({ POSTED_LOCAL: '03/02/2026 03:00', WALLET: 'samsung', MODE: 'chip' })).toMatchObject({
      transactionPostingTimestamp: '2026-03-02T09:00:00.000Z',
      paymentMethodEntryType: 'CHIP',
    });
    // Nothing anywhere: the rule's default.
    expect(tx({ POSTED_LOCAL: '03/02/2026 03:00' })).toMatchObject({ paymentMethodEntryType: 'OTHER' });
    expect(tx({ POSTED_LOCAL: 'yesterday' })).toEqual([
      {
        field: 'transactionPostingTimestamp',
        message: 'first[1]: expected a time like "MM/DD/YYYY HH:mm", got "yesterday"',
      },
    ]);
  });

  it('optional template parts: an empty one leaves out the text before it', () => {
    const p = compile({ paymentNetworkMerchant: { template: '{NAME} *{QUAL?} ({WALLET?})' } });
    const name = (r: Record<string, unknown>) => {
      const m = p.map({ ID: 't', T: '2026-03-01T10:00:00Z', A: '1', ...r });
      return m.ok ? m.tx.paymentNetworkMerchant : m.errors;
    };
    expect(name({ NAME: 'SHOP', QUAL: 'ECI5', WALLET: 'applepay' })).toBe('SHOP *ECI5 (applepay)');
    expect(name({ NAME: 'SHOP', WALLET: 'applepay' })).toBe('SHOP (applepay)');
    expect(name({ NAME: 'SHOP' })).toBe('SHOP)');
    // A required part empty: the value is missing (validation then says "required").
    expect(name({ QUAL: 'ECI5' })).toBeUndefined();
  });
});

describe('a zone from where the merchant is', () => {
  const p = compile({
    transactionPostingTimestamp: { from: 'P', timestamp: true },
    transactionTimestamp: {
      from: 'T',
      timestamp: {
        format: 'YYYY-MM-DD HH:mm:ss',
        zone: { country: 'CC', state: 'ST', states: { 'US-TX': 'America/Chicago' } },
      },
    },
  });
  const at = (r: Record<string, unknown>) => {
    const m = p.map({ ID: 't', A: '1', P: '2026-01-01T00:00:00Z', ...r });
    return m.ok ? m.tx.transactionTimestamp : m.errors[0]?.message;
  };
  it('country alpha-2, alpha-3 or numeric; a state for a country with several zones; a value with its own offset kept', () => {
    expect(at({ T: '2026-03-29 03:30:00', CC: 'DEU' })).toBe('2026-03-29T01:30:00.000Z');
    expect(at({ T: '2026-03-29 01:30:00', CC: '276' })).toBe('2026-03-29T00:30:00.000Z');
    expect(at({ T: '2026-07-01 12:00:00', CC: 'US', ST: 'Colorado' })).toBe('2026-07-01T18:00:00.000Z');
    expect(at({ T: '2026-07-01 12:00:00', CC: 'CA', ST: 'BC' })).toMatch(/^CA-BC spans several time zones/);
    expect(at({ T: '2026-07-01 12:00:00', CC: 'US', ST: 'TX' })).toBe('2026-07-01T17:00:00.000Z');
    expect(at({ T: '2026-07-01 12:00:00', CC: 'BR', ST: 'SP' })).toBe('2026-07-01T15:00:00.000Z');
    expect(at({ T: '2026-07-01 12:00:00', CC: 'MX', ST: 'CMX' })).toBe('2026-07-01T18:00:00.000Z');
    expect(at({ T: '2026-07-01 12:00:00', CC: 'RU', ST: 'MOW' })).toBe('2026-07-01T09:00:00.000Z');
    expect(at({ T: '2026-07-01 12:00:00', CC: 'AU', ST: 'Queensland' })).toBe('2026-07-01T02:00:00.000Z');
    // A value with its own offset keeps it: the location is not even looked at (a US merchant without a state).
    const auto = compile({
      transactionTimestamp: { from: 'T', timestamp: { zone: { country: 'CC', state: 'ST' } } },
    });
    const m = auto.map({ ID: 't', A: '1', T: '2026-07-01T12:00:00Z', CC: 'US' });
    expect(m.ok && m.tx.transactionTimestamp).toBe('2026-07-01T12:00:00.000Z');
  });
  it('never guesses: a country with several zones and no state, an unknown country, no country', () => {
    expect(at({ T: '2026-07-01 12:00:00', CC: 'US' })).toMatch(
      /^US has several time zones \(.*29 zones\): the merchant's state \(ST\) decides, and this record has none$/,
    );
    expect(at({ T: '2026-07-01 12:00:00', CC: 'ZZ' })).toBe(
      'unknown merchant country "ZZ" to take the zone from',
    );
    expect(at({ T: '2026-07-01 12:00:00' })).toBe('no merchant country (CC) to take the zone from');
  });
  it("every zone of the state table is one of its country's zones in countries-and-timezones", async () => {
    const { STATE_ZONES } = await import('../../src/map/state-zones.ts');
    const { countryZones } = await import('../../src/map/location-zone.ts');
    for (const [cc, states] of Object.entries(STATE_ZONES)) {
      const zones = new Set(countryZones(cc));
      for (const [st, list] of Object.entries(states))
        for (const z of list) expect(zones.has(z), `${cc}-${st}: ${z}`).toBe(true);
    }
  });
});

describe('mapping check reads the whole export', () => {
  it('local times in one fixed zone for merchants in several countries: the zone warning', async () => {
    const r = await runCliHere(['mapping', 'check', ONE_ZONE, EXPORT]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`${EXPORT}: 12 records read (+2 expanded), 12 valid, 2 rejected`);
    expect(r.stderr).toContain(
      `svc-ingest: warning: ${EXPORT}: 13 local times read in the one zone America/New_York (timeZone) while the merchants are in 5 zones (US 3, GB 3, AU 3, DE 2, JP 1)`,
    );
    // The merchant-zone profile of the same export: no such warning.
    const ok = await runCliHere(['mapping', 'check', 'test/fixtures/multi-event/profile.json', EXPORT]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stderr).not.toContain('one zone');
  });

  it('a zone declared the export\'s own ("timeZoneScope": "export"): no zone warning, the assumption printed', async () => {
    const profile = JSON.parse(await readFile(ONE_ZONE, 'utf8')) as Record<string, unknown>;
    const declared = join(dir, 'export-zone.json');
    await writeFile(declared, JSON.stringify({ ...profile, timeZoneScope: 'export' }));
    const r = await runCliHere(['mapping', 'check', declared, EXPORT]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('one zone');
    expect(r.stdout).toContain(
      `local times read in America/New_York, the export's own zone wherever the merchant is ("timeZoneScope": "export"): assumed, not checked`,
    );
    // The built-in Northwind profile declares it: its own sample is checked without the warning.
    const nw = await runCliHere(['mapping', 'check', 'northwind-csv', 'samples/northwind.csv']);
    expect(nw.code, nw.stderr).toBe(0);
    expect(nw.stderr).not.toContain('one zone');
    expect(nw.stdout).toContain('local times read in America/Chicago, the export');
    // Refused at load: a scope without a zone to apply to, or a value that is neither.
    expect(loadError({}, { timeZoneScope: 'export' })).toContain('timeZoneScope');
    expect(loadError({}, { timeZone: 'UTC', timeZoneScope: 'processor' })).toContain('"export"');
  });

  it('send logs each warning at its first record, the same warnings once at the end, and counts them (inline and on the worker pool)', async () => {
    for (const worker of ['off', 'on']) {
      const r = await runCliHere(
        [
          'send',
          '--dry-run',
          '--json',
          '--mapping',
          ONE_ZONE,
          '--ledger',
          join(dir, `w-${worker}.ndjson`),
          EXPORT,
        ],
        { env: { SVC_PREPARE_WORKER: worker } },
      );
      expect(r.code, r.stderr).toBe(2);
      const summary = JSON.parse(r.stdout.trim().split('\n').at(-1) as string);
      expect(summary).toMatchObject({ read: 12, expanded: 2, valid: 12, rejected: 2, mappingWarnings: 2 });
      const lines = r.stderr.split('\n').filter((l) => l.includes('"mapping.warning"'));
      const first = lines.map((l) => JSON.parse(l)).filter((l) => l.first === true);
      // As the run meets it: the kind, the record's line, before the run's end.
      expect(first.map((l) => [l.kind, l.at])).toEqual([
        ['oneZone', `${EXPORT}:3`],
        ['postedBefore', `${EXPORT}:5`],
      ]);
      const warned = lines.filter((l) => !l.includes('"first":true'));
      expect(warned.map((l) => JSON.parse(l).msg.slice(0, 80))).toEqual([
        'svc-ingest: warning: 13 local times read in the one zone America/New_York (timeZ',
        'svc-ingest: warning: transactionPostingTimestamp earlier than transactionTimesta',
      ]);
    }
  });

  it("counts the local times that fell in a DST repeated hour, per field, with the profile's rule", async () => {
    const file = join(dir, 'fall-back.csv');
    await writeFile(
      file,
      'ID,T,A\nf1,2026-11-01 00:30:00,1.00\nf2,2026-11-01 01:30:00,1.00\nf3,2026-11-01 02:30:00,1.00\n',
    );
    const profile = join(dir, 'fall-back.json');
    await writeFile(
      profile,
      JSON.stringify({ timeZone: 'America/New_York', ambiguousTime: 'earlier', fields: CONSTS }),
    );
    const r = await runCliHere(['mapping', 'check', profile, file]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      '  2 ambiguous local times (2 in a DST repeated hour, 0 in a DST gap): read as the earlier instant ("ambiguous": "earlier") (transactionTimestamp 1, transactionPostingTimestamp 1)',
    );
  });

  it('an NDJSON export whose first record is unusual passes when send runs it', async () => {
    const lines = (await readFile('samples/lithic.ndjson', 'utf8')).trim().split('\n');
    // A declined authorisation (no CLEARING event, which the posting time reads) first.
    const file = join(dir, 'declined-first.ndjson');
    await writeFile(file, `${[lines[4], ...lines.slice(0, 4), ...lines.slice(5)].join('\n')}\n`);
    const c = await runCliHere(['mapping', 'check', 'lithic', file]);
    expect(c.code, c.stderr).toBe(0);
    expect(c.stdout).toContain(`${file}: 12 records read, 10 valid, 2 rejected`);
    const s = await dryRun('lithic', 'l.ndjson', file);
    expect(s.code, s.stderr).toBe(2);
  });

  it('--sample N maps N records spread over the file; repeated ids and posting before transaction are warned of', async () => {
    const rows = ['ID,T,P,A'];
    // Ids t0–t99 come back with another amount (another transaction); the last row repeats t100 whole (a
    // redelivery, a duplicate send rejects, not an id that repeats).
    for (let i = 0; i < 400; i++)
      rows.push(
        `t${i % 300},2026-03-0${1 + (i % 5)}T10:00:00Z,2026-03-0${1 + (i % 3)}T09:00:00Z,${i < 300 ? 1 : 2}.00`,
      );
    rows.push(rows[101] as string);
    const file = join(dir, 'ids.csv');
    await writeFile(file, `${rows.join('\n')}\n`);
    const profile = join(dir, 'ids.json');
    await writeFile(
      profile,
      JSON.stringify({ fields: { ...CONSTS, transactionPostingTimestamp: { from: 'P', timestamp: true } } }),
    );
    const all = await runCliHere(['mapping', 'check', profile, file]);
    expect(all.code, all.stderr).toBe(0);
    expect(all.stdout).toContain(`${file}: 401 records read, 401 valid, 0 rejected`);
    expect(all.stderr).toContain(
      'transactionId repeats: 100 records share an id with an earlier one (first: t0)',
    );
    expect(all.stderr).toMatch(
      /transactionPostingTimestamp earlier than transactionTimestamp in \d+ records/,
    );
    const some = await runCliHere(['mapping', 'check', '--sample', '50', profile, file]);
    expect(some.code, some.stderr).toBe(0);
    expect(some.stdout).toContain(
      `${file}: 50 of 401 records read, spread over the file, 50 valid, 0 rejected`,
    );
  });
});

describe('a built-in profile on another processor’s export', () => {
  it('stops at its first records with one line naming what it lacks (send, map)', async () => {
    const s = await dryRun('lithic', 'f.ndjson', 'samples/stripe-issuing.ndjson');
    expect(s.code).toBe(1);
    const errors = s.stderr.split('\n').filter((l) => l.includes('INPUT_'));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(
      /INPUT_HEADER_MISSING_COLUMN: samples\/stripe-issuing\.ndjson is not a lithic export: .* lacks most of the paths the profile reads \(missing: token, status, .*\); stopped before mapping any/,
    );
    const m = await runCliHere(['map', '--mapping', 'stripe-issuing', 'samples/lithic.ndjson']);
    expect(m.code).toBe(1);
    expect(m.stdout).toBe('');
    expect(m.stderr).not.toContain('transactionType: unknown value');
  });
});

describe('mapping draft on nested NDJSON', () => {
  it('reads paths into arrays by kind, proposes first-of where records differ, takes the zone from the merchant', async () => {
    const r = await runCliHere(['mapping', 'draft', EXPORT]);
    expect(r.code, r.stderr).toBe(0);
    const d = JSON.parse(r.stdout) as { fields: Record<string, Record<string, unknown> | string> };
    const posting = d.fields.transactionPostingTimestamp as { first: Array<{ from: string }> };
    // Purchases hold it in their captured event, refunds in their refunded one: both, captured first.
    expect(posting.first.map((s) => s.from).slice(0, 2)).toEqual([
      'events[status=captured].at',
      'events[status=refunded].at',
    ]);
    // Local times without a zone: the merchant's country and state, not a zone picked for it.
    expect(r.stdout).not.toContain('America/New_York');
    expect(JSON.stringify(d.fields.transactionTimestamp)).toContain(
      '"zone":{"country":"merchant.country","state":"merchant.region"}',
    );
    expect(d.fields.paymentNetworkMerchantState).toBe('merchant.region');
  });

  it('says when it guessed a zone, and when the id it proposes repeats', async () => {
    const file = join(dir, 'repeats.ndjson');
    await writeFile(
      file,
      [
        '{"id":"p1","time":"2026-03-01 10:00:00","amount":"1.00"}',
        '{"id":"p1","time":"2026-03-01 11:00:00","amount":"2.00"}',
      ]
        .map((l) => `${l}\n`)
        .join(''),
    );
    const r = await runCliHere(['mapping', 'draft', file]);
    const d = JSON.parse(r.stdout) as { fields: Record<string, { description?: string }> };
    expect(d.fields.transactionTimestamp?.description).toMatch(
      /^TODO: GUESSED zone America\/New_York: the export gives none/,
    );
    expect(d.fields.transactionId?.description).toBe(
      'TODO: NOT UNIQUE: id repeats in 1 of 2 records: derive an id ("hash") or expand an array ("expand")',
    );
  });
});

describe('mapping draft pairs an amount with its own currency', () => {
  it('transaction.amount beside transaction.currency takes that currency, not the record-level one', async () => {
    const { draftProfile } = await import('../../src/map/draft.ts');
    const record = { id: 'p1', currency: 'USD', transaction: { amount: '10.00', currency: 'EUR' } };
    const d = draftProfile({ name: 'x', format: 'ndjson', record, records: [record] }) as {
      fields: Record<string, unknown>;
    };
    expect(d.fields.postedAmount).toEqual({ from: 'transaction.amount', amount: true });
    expect(d.fields.currencyCode).toEqual({
      from: 'transaction.currency',
      description:
        'TODO: the currency beside the amount (transaction.amount), not currency: check they are one',
    });
  });
});
