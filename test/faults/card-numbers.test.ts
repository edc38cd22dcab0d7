// Card numbers past the mask, attacked through the real CLI: a capture server plays the service and scans
// every request body for Luhn-valid 13-19-digit windows; stdout, stderr, ledger and rejects are searched for
// every test card number. The hostile input carries them in every id, code and amount field, in free text in
// each written form, in NDJSON keys and JSON numbers, in a CSV header, in unparsable lines and in duplicates.
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TRANSACTION_FIELDS } from '../../src/model/transaction.ts';
import { listenTickets, useCapture } from '../helpers/capture.ts';
import { runCliHere } from '../helpers/cli.ts';
import { cardWindows, luhnWindows, pansIn, TEST_PANS } from '../helpers/pans.ts';
import { CANONICAL_COLUMNS, makeTx } from '../helpers/transactions.ts';
import { FAST, readRejects, report, STACK, summary, workdir } from './helpers.ts';

const { visa, visa2, visa13, mastercard, mastercard2, amex, discover, jcb, diners, unionpay19 } = TEST_PANS;

const capture = useCapture();

/** A profile's fields reading every canonical column as it is, for a test to change one. */
function canonicalFields(): Record<string, unknown> {
  return Object.fromEntries(CANONICAL_COLUMNS.map((c) => [c, c]));
}

/** The CLI's environment for one work dir, pointed at the capture server. */
function env(w: { ledger: string; rejects: string }, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { SVC_BASE_URL: capture.url, SVC_LEDGER_PATH: w.ledger, SVC_REJECTS_PATH: w.rejects, ...extra };
}

type Row = Record<string, unknown>;
const base = (i: number, prefix = 'hx'): Row => makeTx(i, prefix) as unknown as Row;

/** Fields that may carry a card number, each with values that their formats accept but that hold one. */
const ID_CARRIERS: Array<[string, string]> = [
  ['transactionId', visa],
  ['transactionId', `${visa2}-01`],
  ['transactionId', `TX${mastercard}`],
  ['sourceCustomerId', mastercard2],
  ['sourceCustomerId', `cust ${visa.slice(0, 4)} ${visa.slice(4, 8)} ${visa.slice(8, 12)} ${visa.slice(12)}`],
  ['sourceAccountId', `acct-${discover}`],
  ['sourceAccountId', `0000${jcb}`],
  ['paymentNetworkMerchantId', `MID ${amex}`],
  ['paymentNetworkMerchantId', `${diners}.7`],
  ['walletDescription', unionpay19],
  ['authorizationApprovalCode', visa13],
  ['acquirerReferenceNumber', `A${TEST_PANS.visa19}`],
  ['cardPresentIndicator', visa],
  ['transactionType', `X${visa}`],
  ['paymentType', `D${mastercard}`],
  ['paymentMethodEntryType', `E${amex}`],
  ['paymentNetworkMerchantIdType', `M${discover}`],
  ['onlineIndicator', `O${jcb}`],
  ['postedAmount', amex],
  ['authorizationAmount', visa13],
  ['cashBackAtPointOfSaleAmount', diners],
];

/** Free text in each written form: masked in what is sent. */
const FREE_TEXT: Row[] = [
  { paymentNetworkMerchant: `7-ELEVEN 1234 ${visa}` },
  { paymentNetworkMerchantAddress1: '4111.1111.1111.1111' },
  { paymentNetworkMerchantAddress2: '4111 1111 1111 1111 123' },
  { paymentNetworkMerchantCity: `${visa} ${mastercard}` },
  { paymentNetworkMerchant: `Refund 3782-822463-10005 ${discover}` },
  { paymentNetworkMerchant: `card/${jcb}/ok`, paymentNetworkMerchantCity: `x${diners}` },
];

interface Expected {
  lines: string[];
  good: Set<string>;
  idRejects: Array<{ line: number; field: string }>;
  rejected: number;
}

/** The hostile NDJSON file: one line per case; returns what each line must become. */
function hostileNdjson(): Expected {
  const lines: string[] = [];
  const good = new Set<string>();
  const idRejects: Expected['idRejects'] = [];
  let rejected = 0;
  let i = 0;
  const add = (row: Row, ok: boolean) => {
    lines.push(JSON.stringify(row));
    if (ok) good.add(row.transactionId as string);
    else rejected++;
  };
  for (let k = 0; k < 5; k++) add(base(i++), true);
  for (const patch of FREE_TEXT) add({ ...base(i++), ...patch }, true);
  for (const [field, v] of ID_CARRIERS) {
    add({ ...base(i++), [field]: v }, false);
    idRejects.push({ line: lines.length, field });
  }
  // A card number as a JSON number: in free text it is masked, in an id refused; one that JSON.parse has
  // already rounded is refused as text.
  lines.push(JSON.stringify(base(i)).replace('"BLUE BOTTLE COFFEE"', mastercard));
  good.add(base(i++).transactionId as string);
  lines.push(JSON.stringify(base(i++)).replace(/"transactionId":"[^"]+"/, `"transactionId":${visa}`));
  idRejects.push({ line: lines.length, field: 'transactionId' });
  rejected++;
  lines.push(
    JSON.stringify(base(i++)).replace(/"sourceAccountId":"[^"]+"/, `"sourceAccountId":${unionpay19}`),
  );
  idRejects.push({ line: lines.length, field: 'sourceAccountId' });
  rejected++;
  // Keys that are card numbers: ignored by the profile when the record is valid, masked in `record` when not.
  add({ [visa]: 'x', ...base(i++) }, true);
  const keyed: Row = { [mastercard]: amex, ...base(i++) };
  delete keyed.postedAmount;
  add(keyed, false);
  // Lines that are not JSON, quoting card numbers the way V8's messages would.
  for (const bad of [
    `@${visa}`,
    `{"transactionId":"${visa}`,
    `${visa} ${mastercard}`,
    `123456789 ${amex}x`,
  ]) {
    lines.push(bad);
    rejected++;
  }
  // A duplicate: the first is sent, the second rejected, neither message echoing the id.
  const dup = { ...base(i++), paymentNetworkMerchant: `dup ${visa}` };
  add(dup, true);
  add(dup, false);
  return { lines, good, idRejects, rejected };
}

/** The hostile CSV file: a column named by a card number, the same kinds of rows, a ragged row. */
function hostileCsv(): Expected {
  const header = [...Object.keys(TRANSACTION_FIELDS), visa];
  const lines = [header.join(',')];
  const good = new Set<string>();
  const idRejects: Expected['idRejects'] = [];
  let rejected = 0;
  let i = 100;
  const row = (r: Row) => header.map((c) => (c === visa ? `extra ${amex}` : String(r[c] ?? ''))).join(',');
  for (let k = 0; k < 3; k++) {
    const r = base(i++, 'hc');
    lines.push(row(r));
    good.add(r.transactionId as string);
  }
  for (const patch of FREE_TEXT) {
    const r = { ...base(i++, 'hc'), ...patch };
    lines.push(row(r));
    good.add(r.transactionId as string);
  }
  for (const [field, v] of ID_CARRIERS) {
    lines.push(row({ ...base(i++, 'hc'), [field]: v }));
    idRejects.push({ line: lines.length, field });
    rejected++;
  }
  lines.push(`${visa},${mastercard},ragged`);
  rejected++;
  return { lines, good, idRejects, rejected };
}

/** Everything the run wrote where a person or a program could read it. */
async function outputs(w: { ledger: string; rejects: string }, r: { stdout: string; stderr: string }) {
  const ledger = existsSync(w.ledger) ? await readFile(w.ledger, 'utf8') : '';
  const rejects = existsSync(w.rejects) ? await readFile(w.rejects, 'utf8') : '';
  return { ledger, rejects, stdout: r.stdout, stderr: r.stderr };
}

function expectNoCardNumber(texts: Record<string, string>, windowsToo: string[]): void {
  for (const [name, text] of Object.entries(texts)) {
    expect(pansIn(text), name).toEqual([]);
    if (windowsToo.includes(name)) expect(cardWindows(text), name).toEqual([]);
  }
}

describe('no card number leaves: the service, files and streams, on hostile input', () => {
  for (const path of ['inline', 'worker pool'] as const) {
    for (const format of ['ndjson', 'csv'] as const) {
      it(`${format}, ${path}: ids holding one are rejected (reason named, value masked); text is masked`, async () => {
        const w = await workdir(`cards-${format}-${path === 'inline' ? 'in' : 'pool'}`);
        const exp = format === 'ndjson' ? hostileNdjson() : hostileCsv();
        const file = join(w.dir, `hostile.${format}`);
        await writeFile(file, `${exp.lines.join('\n')}\n`);
        const r = await runCliHere(['send', ...FAST, file], {
          env: env(w, {
            SVC_LOG_LEVEL: 'debug',
            SVC_PREPARE_WORKER: path === 'inline' ? 'off' : 'on',
            // Several chunks, so records cross the pool's threads in pieces.
            SVC_PREPARE_CHUNK_BYTES: '2048',
          }),
        });
        expect(r.stderr).not.toMatch(STACK);
        expect(r.code, r.stderr).toBe(2);
        const s = summary(r);
        expect(s.rejected).toBe(exp.rejected);
        expect(s.sent).toBe(exp.good.size);
        expect(s.read).toBe(exp.rejected + exp.good.size);

        // The service saw every good record, and not one Luhn-valid window in any byte of any request.
        const sent = new Set<string>();
        for (const request of capture.all) expect(pansIn(request)).toEqual([]);
        for (const body of capture.bodies) {
          expect(luhnWindows(body)).toEqual([]);
          expect(pansIn(body)).toEqual([]);
          for (const t of (JSON.parse(body) as { transactions: Array<{ transactionId: string }> })
            .transactions)
            sent.add(t.transactionId);
        }
        expect(sent).toEqual(exp.good);
        // Free text arrived masked, first 6 and last 4 digits kept.
        expect(capture.bodies.join('\n')).toContain('7-ELEVEN 1234 411111******1111');

        // Each id rejected on its own line, naming the field.
        const rejects = await readRejects(w.rejects);
        for (const { line, field } of exp.idRejects) {
          const rj = rejects.find((x) => x.line === line) as {
            errors: Array<{ field: string; message: string }>;
          };
          expect(rj, `line ${line}`).toBeDefined();
          expect(rj.errors.map((e) => e.field)).toContain(field);
          expect(rj.errors.find((e) => e.field === field)?.message).toMatch(/card number|lost digits/);
        }
        const out = await outputs(w, r);
        // The ledger holds UUIDs (clientRequestId) whose digit groups may pass Luhn by chance: searched for the test numbers.
        expectNoCardNumber(out, ['rejects', 'stdout', 'stderr']);
        if (format === 'ndjson') {
          const keyed = rejects.find((x) =>
            Object.hasOwn((x.record ?? {}) as object, '550000******5559'),
          ) as {
            record: Record<string, unknown>;
          };
          expect(keyed?.record['550000******5559']).toBe('378282*****0005');
          const dupl = rejects.filter((x) => JSON.stringify(x.errors).includes('duplicate transactionId'));
          expect(dupl).toHaveLength(1);
          expect(JSON.stringify(dupl[0]?.errors)).not.toMatch(/hx-/);
        } else {
          expect(rejects.some((x) => JSON.stringify(x.record ?? {}).includes('411111******1111'))).toBe(true);
        }
        report(`cards: ${format} ${path}`, {
          requests: capture.bodies.length,
          sent: s.sent,
          rejected: s.rejected,
          panWindowsAtService: 0,
          pansInFiles: 0,
        });
      });
    }
  }

  it('negatives through the CLI: a 23-digit ARN, 15-digit MIDs failing Luhn and zero-padded ids are sent as they are', async () => {
    const w = await workdir('cards-negatives');
    const rows = [
      { ...base(1, 'ng'), acquirerReferenceNumber: '74567890123456789012345' },
      { ...base(2, 'ng'), paymentNetworkMerchantId: '445566000000000' },
      { ...base(3, 'ng'), sourceAccountId: '0000000000012345', walletDescription: '40010030273' },
    ];
    const file = join(w.dir, 'neg.ndjson');
    await writeFile(file, `${rows.map((x) => JSON.stringify(x)).join('\n')}\n`);
    const r = await runCliHere(['send', ...FAST, file], { env: env(w) });
    expect(r.code, r.stderr).toBe(0);
    const got = capture.bodies
      .map((b) => JSON.parse(b) as { transactions: Row[] })
      .flatMap((b) => b.transactions);
    expect(got.map((t) => t.acquirerReferenceNumber)).toContain('74567890123456789012345');
    expect(got.map((t) => t.paymentNetworkMerchantId)).toContain('445566000000000');
    expect(got.map((t) => t.sourceAccountId)).toContain('0000000000012345');
  });

  it('a numeric id that is a card number is sent once hashed (the documented workaround)', async () => {
    const w = await workdir('cards-hash');
    const profile = join(w.dir, 'hashed.json');
    const fields = canonicalFields();
    fields.sourceAccountId = { hash: { of: ['sourceAccountId'], length: 24, prefix: 'acct-' } };
    await writeFile(profile, JSON.stringify({ name: 'hashed', fields }));
    const file = join(w.dir, 'h.ndjson');
    await writeFile(file, `${JSON.stringify({ ...base(1, 'hh'), sourceAccountId: visa })}\n`);
    const plain = await runCliHere(['send', ...FAST, file], { env: env(w) });
    expect(plain.code).toBe(2);
    const hashed = await runCliHere(['send', ...FAST, '--mapping', profile, file], {
      env: env(w),
    });
    expect(hashed.code, hashed.stderr).toBe(0);
    expect(summary(hashed).sent).toBe(1);
    expect(capture.bodies.join('')).toMatch(/"sourceAccountId":"acct-[0-9a-f]{24}"/);
    expectNoCardNumber({ bodies: capture.bodies.join('\n') }, ['bodies']);
  });

  it('ids declared the bank’s own numeric ids (ownNumericIds) are sent as they are, said at the start and in the summary', async () => {
    const w = await workdir('cards-own');
    const profile = join(w.dir, 'own.json');
    const fields = canonicalFields();
    fields.transactionId = { from: 'transactionId', maxLength: 16 };
    // transactionId by name (its all-digit values); sourceAccountId with a shape (issue 30): `BR-` + 16 characters.
    const own = ['transactionId', { field: 'sourceAccountId', prefix: 'BR-', width: 19 }];
    await writeFile(profile, JSON.stringify({ name: 'core-ids', ownNumericIds: own, fields }));
    // 16-digit core-system ids that are Visa numbers by the rule; one written with letters is still checked, and
    // one longer than maxLength is checked whole before the cut.
    const rows = [
      { ...base(1, 'ow'), transactionId: visa },
      { ...base(2, 'ow'), transactionId: TEST_PANS.visa2 },
      { ...base(3, 'ow'), transactionId: `TX${mastercard}` },
      { ...base(4, 'ow'), sourceAccountId: visa },
      { ...base(5, 'ow'), sourceAccountId: `BR-${mastercard}` },
    ];
    const file = join(w.dir, 'own.ndjson');
    await writeFile(file, `${rows.map((x) => JSON.stringify(x)).join('\n')}\n`);
    const r = await runCliHere(['send', ...FAST, '--mapping', profile, file], { env: env(w) });
    expect(r.code, r.stderr).toBe(2);
    const s = summary(r) as unknown as { sent: number; rejected: number; ownNumericIds: string[] };
    expect(s.sent).toBe(3);
    expect(s.rejected).toBe(2);
    const shown = ['transactionId', 'sourceAccountId (prefix "BR-", width 19)'];
    expect(s.ownNumericIds).toEqual(shown);
    const got = capture.bodies.flatMap((b) => (JSON.parse(b) as { transactions: Row[] }).transactions);
    expect(got.map((t) => t.transactionId).sort()).toEqual([TEST_PANS.visa2, visa, 'ow-00000005'].sort());
    expect(got.map((t) => t.sourceAccountId)).toContain(`BR-${mastercard}`);
    const notice = r.stderr
      .split('\n')
      .filter((l) => l.includes('mapping.own_numeric_ids'))
      .map((l) => JSON.parse(l) as { fields: string[]; mapping: string });
    expect(notice).toHaveLength(1);
    expect(notice[0]).toMatchObject({ fields: shown, mapping: 'core-ids' });
    // The authoring commands name the declaration too.
    const check = await runCliHere(['mapping', 'check', profile]);
    expect(check.stdout).toContain(
      `the bank's own numeric ids, sent unchecked for card numbers: ${shown.join(', ')}`,
    );
    const mapped = await runCliHere(['map', '--mapping', profile, file]);
    expect(mapped.stderr).toContain(`own numeric ids sent unchecked: ${shown.join(', ')}`);
    expect(pansIn(mapped.stdout + mapped.stderr)).toEqual([]);
    // The declaration names id fields only.
    await writeFile(
      profile,
      JSON.stringify({ name: 'bad', ownNumericIds: ['paymentNetworkMerchant'], fields }),
    );
    const bad = await runCliHere(['send', ...FAST, '--mapping', profile, file], { env: env(w) });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/ownNumericIds/);
  });

  it('maxLength checks an id whole before it cuts it: a cut card number is refused, not sent', async () => {
    const w = await workdir('cards-cut');
    const profile = join(w.dir, 'cut.json');
    const fields = canonicalFields();
    fields.sourceAccountId = { from: 'sourceAccountId', maxLength: 15 };
    await writeFile(profile, JSON.stringify({ name: 'cut', fields }));
    const file = join(w.dir, 'cut.ndjson');
    await writeFile(file, `${JSON.stringify({ ...base(1, 'ct'), sourceAccountId: visa })}\n`);
    const r = await runCliHere(['send', ...FAST, '--mapping', profile, file], { env: env(w) });
    expect(r.code).toBe(2);
    expect(capture.bodies.join('')).not.toContain(visa.slice(0, 12));
    const [rj] = await readRejects(w.rejects);
    expect(JSON.stringify(rj)).toMatch(/before maxLength 15/);
    expectNoCardNumber(await outputs(w, r), ['rejects', 'stdout', 'stderr']);
  });

  it("the service's error echoing card numbers reaches the ledger's error and the log masked", async () => {
    const w = await workdir('cards-echo');
    capture.failWith = {
      status: 400,
      body: JSON.stringify({
        type: 'ValidationException',
        title: `card ${visa} refused`,
        status: 400,
        validationErrors: [{ field: `k${mastercard}`, message: '5500 0055 5555 5559 / 3782-822463-10005' }],
      }),
    };
    const file = join(w.dir, 'e.ndjson');
    await writeFile(file, `${[0, 1, 2].map((k) => JSON.stringify(base(k, 'ec'))).join('\n')}\n`);
    const r = await runCliHere(['send', ...FAST, file], { env: env(w, { SVC_LOG_LEVEL: 'debug' }) });
    expect(r.code).toBe(3);
    const out = await outputs(w, r);
    expect(out.ledger).toContain('411111******1111');
    expect(r.stderr).toContain('411111******1111');
    expectNoCardNumber(out, ['stdout', 'stderr', 'rejects']);
  });

  it('a CSV header repeating a column named by a card number: one error line, masked', async () => {
    const w = await workdir('cards-header');
    const file = join(w.dir, 'dup.csv');
    await writeFile(file, `${CANONICAL_COLUMNS.join(',')},${visa},${visa}\n`);
    const r = await runCliHere(['send', ...FAST, file], { env: env(w) });
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^svc-ingest: INPUT_PARSE: .*have the same name "411111\*{6}1111"/);
    expectNoCardNumber({ stderr: r.stderr, stdout: r.stdout }, ['stderr', 'stdout']);
  });

  it('the error line and commander errors mask card numbers in paths and arguments', async () => {
    const w = await workdir('cards-args');
    // In a folder named by letters: the temporary folder's random name may end in digits, which the mask
    // (rightly) reads as part of the number when only a slash stands between them.
    const missing = await runCliHere(['send', join(w.dir, 'cards', `${visa}.csv`)], { env: env(w) });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^svc-ingest: INPUT_UNREADABLE: .*411111\*{6}1111\.csv/);
    const unknown = await runCliHere(['send', `--${amex}`], { env: env(w) });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('378282*****0005');
    expectNoCardNumber({ a: missing.stderr, b: unknown.stderr, c: missing.stdout + unknown.stdout }, [
      'a',
      'b',
      'c',
    ]);
  });

  it('tickets listen prints each update with card numbers masked', async () => {
    // Its ticket store (tickets.ndjson next to the ledger) is in a folder of its own, read back below.
    const store = await mkdtemp(join(tmpdir(), 'svc-listen-'));
    const listener = await listenTickets({
      SVC_LOG_LEVEL: 'info',
      SVC_LEDGER_PATH: join(store, 'transactions.ndjson'),
    });
    const update = {
      sourceTicketId: `T-${visa}`,
      processingStatus: 'Processed',
      status: 'In Process',
      description: `customer read out ${mastercard} and 4111.1111.1111.1111`,
      [amex]: 'key',
      transactionIds: [Number(visa)],
    };
    expect(await listener.post(JSON.stringify(update))).toBe(200);
    const r = await listener.stop();
    const printed = JSON.parse(r.stdout.trim().split('\n')[0] ?? '{}') as Record<string, unknown>;
    expect(printed.sourceTicketId).toBe('T-411111******1111');
    expect(printed['378282*****0005']).toBe('key');
    expectNoCardNumber({ stdout: r.stdout, stderr: r.stderr }, ['stdout', 'stderr']);
    const kept = await readFile(join(store, 'tickets.ndjson'), 'utf8');
    expect(kept).toContain('T-411111******1111');
    expectNoCardNumber({ kept }, ['kept']);
  });
});
