// The leak corpus through every path, with the real CLI: the brands' public test card numbers, each written 34
// ways (test/helpers/leak-corpus.ts), put in free text, ids, JSON keys, keys named like our own ids, a maxLength
// boundary, two columns joined by a template and file names; then every output is searched for any 12 digits in a
// row of any of them (separators of any kind taken out, digits of any script read): the request bodies a capture
// server receives, the ledger (file, and PostgreSQL rows), rejects, stdout, stderr, metrics, `map`, `mapping draft`,
// `mapping check`, `ledger status|failed|find`, `backfill plan|work|status`, `tickets listen`.
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { listenTickets, useCapture } from '../helpers/capture.ts';
import { runCliHere } from '../helpers/cli.ts';
import { grouped, LEAK_PANS, writingsFor } from '../helpers/leak-corpus.ts';
import { cardWindows, panPiecesIn } from '../helpers/pans.ts';
import { usePostgres } from '../helpers/postgres.ts';
import { CANONICAL_COLUMNS, makeTx } from '../helpers/transactions.ts';
import { FAST, report, STACK, summary, workdir } from './helpers.ts';

const PANS = Object.values(LEAK_PANS);
const pgs = usePostgres();

const capture = useCapture();

/** Every place a piece of a corpus card number was found: `where` → the numbers. */
const found: Record<string, string[]> = {};
function scan(where: string, text: string): void {
  const pieces = panPiecesIn(text, PANS);
  const windows = cardWindows(text).filter((w) => PANS.some((p) => w.includes(p.slice(0, 12))));
  if (pieces.length > 0 || windows.length > 0) {
    found[where] = [...pieces, ...windows];
    if (process.env.LEAK_DEBUG)
      for (const line of text.split('\n'))
        if (panPiecesIn(line, PANS).length > 0) console.log(`LEAK ${where}: ${line}`);
  }
}
function expectNoLeak(): void {
  if (Object.keys(found).length > 0) throw new Error(`card numbers found: ${JSON.stringify(found)}`);
}
beforeEach(() => {
  for (const k of Object.keys(found)) delete found[k];
});

type Row = Record<string, unknown>;
const FREE = ['paymentNetworkMerchant', 'paymentNetworkMerchantAddress1', 'paymentNetworkMerchantCity'];
const IDS = ['sourceCustomerId', 'sourceAccountId', 'transactionId', 'paymentNetworkMerchantId'];

/**
 * The corpus as NDJSON lines (canonical fields): each writing of each number in free text (sent masked), in an id
 * (rejected), as a JSON key and under keys named like our own ids (rejected: the record shown in rejects).
 * Returns the lines and how many are valid.
 */
function corpusNdjson(prefix: string): { lines: string[]; valid: number; ids: string[] } {
  const lines: string[] = [];
  const ids: string[] = [];
  let i = 0;
  let valid = 0;
  for (const [p, pan] of PANS.entries()) {
    for (const [k, w] of writingsFor(pan, p).entries()) {
      // In free text, the writings that fit its 50 characters (a longer one cut here would hold a part of the
      // number the rule cannot know for one; test/mask/mask.test.ts and the tickets case take them whole).
      if (w.length <= 50) {
        const free: Row = { ...makeTx(i, prefix), [FREE[k % FREE.length] as string]: w };
        lines.push(JSON.stringify(free));
        // Free text with a NUL left in it (UTF-16 read as bytes) is rejected for its control character; NULs
        // between digits go with the masked card number.
        if (!/(^|\D)\u0000|\u0000(\D|$)/.test(w)) {
          ids.push(free.transactionId as string);
          valid++;
        }
      }
      i++;
      lines.push(JSON.stringify({ ...makeTx(i++, prefix), [IDS[k % IDS.length] as string]: w }));
      const keyed: Row = { [w]: 'x', batchId: `deadbeef-${w}`, requestId: w, ...makeTx(i++, prefix) };
      keyed.clientRequestId = `${w}`;
      delete keyed.postedAmount;
      lines.push(JSON.stringify(keyed));
    }
  }
  return { lines, valid, ids };
}

/** A profile reading the canonical columns, with the merchant name joined from two columns by a template. */
const TEMPLATE_PROFILE = {
  name: 'leak-template',
  fields: {
    ...Object.fromEntries(CANONICAL_COLUMNS.map((c) => [c, c])),
    paymentNetworkMerchant: { template: '{HEAD}{TAIL}' },
    sourceAccountId: { template: '{ACCT_A}{ACCT_B}' },
  },
};
function templateNdjson(prefix: string): { lines: string[]; valid: number } {
  const lines: string[] = [];
  let valid = 0;
  let i = 0;
  for (const pan of PANS) {
    const w = grouped(pan, ' ');
    // Cut inside the second group: a template trims each column, so a cut at a space would join two groups.
    const half = 7;
    lines.push(
      JSON.stringify({
        ...makeTx(i++, prefix),
        HEAD: `shop ${w.slice(0, half)}`,
        TAIL: w.slice(half),
        ACCT_A: 'a',
        ACCT_B: 'b',
      }),
    );
    valid++;
    lines.push(
      JSON.stringify({
        ...makeTx(i++, prefix),
        HEAD: 'x',
        TAIL: 'y',
        ACCT_A: pan.slice(0, 8),
        ACCT_B: pan.slice(8),
      }),
    );
  }
  return { lines, valid };
}

/** Northwind CSV rows with a card number at the maxLength boundary (100 / 50) of the merchant name and city. */
function northwindCsv(): { text: string; rows: number } {
  const header =
    'TXN_REF,AUTH_CODE,CUST_NO,ACCT_NO,CARD_NUMBER,TXN_DATE,TXN_TIME,POST_DATE,POST_TIME,AMOUNT_CENTS,AUTH_AMOUNT_CENTS,CURRENCY_NUM,MCC,MERCHANT_NAME,MERCHANT_ADDR,MERCHANT_CITY,MERCHANT_STATE,MERCHANT_ZIP,MERCHANT_COUNTRY,MID,ENTRY_MODE,DR_CR,MOBILE_FLAG,RECURRING_FLAG,ECOM_FLAG';
  const rows: string[] = [];
  let n = 0;
  for (const pan of PANS) {
    for (const w of [pan, grouped(pan, ' '), grouped(pan, '\u00a0'), grouped(pan, '\u202f')]) {
      for (const pad of [84, 85, 90, 96]) {
        const name = `${'A'.repeat(pad)} ${w}`;
        const city = `${'B'.repeat(Math.max(1, pad - 50))} ${w}`;
        rows.push(
          `NWL${String(n++).padStart(6, '0')},519167,C70000,A880000,${pan},10/01/2025,07:00:00,10/02/2025,05:30:00,34518,34518,840,5814,"${name}",315 Linden St,"${city}",California,94102,USA,NWM000300000,CHIP,C,N,N,N`,
        );
      }
    }
  }
  return { text: `${header}\n${rows.join('\n')}\n`, rows: rows.length };
}

/** A file name holding a card number, written grouped with a no-break space. */
const PAN_NAME = `export ${grouped(LEAK_PANS.visa as string, '\u00a0')}`;

async function readIf(path: string): Promise<string> {
  return existsSync(path) ? readFile(path, 'utf8') : '';
}

describe('the leak corpus: no card number, and no 12 digits of one, by any path', () => {
  it('send to a capture server (file ledger named by a card number): bodies, ledger, rejects, stdout, stderr, metrics; then ledger status|failed|find', async () => {
    const w = await workdir('leak-send');
    const dir = join(w.dir, PAN_NAME);
    await mkdir(dir);
    const ledger = join(dir, `ledger ${LEAK_PANS.amex}.ndjson`);
    const rejects = join(dir, 'rejects.ndjson');
    const metrics = join(dir, 'metrics.prom');
    const env = {
      SVC_BASE_URL: capture.url,
      SVC_LEDGER_PATH: ledger,
      SVC_REJECTS_PATH: rejects,
      SVC_LOG_LEVEL: 'debug',
    };
    const corpus = corpusNdjson('lk');
    const file = join(dir, `${PAN_NAME}.ndjson`);
    await writeFile(file, `${corpus.lines.join('\n')}\n`);
    const tpl = templateNdjson('lt');
    const tplFile = join(dir, `template ${LEAK_PANS.jcb}.ndjson`);
    await writeFile(tplFile, `${tpl.lines.join('\n')}\n`);
    const profile = join(w.dir, 'template.json');
    await writeFile(profile, JSON.stringify(TEMPLATE_PROFILE));
    const nw = northwindCsv();
    const nwFile = join(dir, `northwind ${LEAK_PANS.discover}.csv`);
    await writeFile(nwFile, nw.text);

    const runs = [
      await runCliHere(['send', ...FAST, '--metrics-file', metrics, file], { env }),
      await runCliHere(['send', ...FAST, '--mapping', profile, tplFile], { env }),
      await runCliHere(['send', ...FAST, '--mapping', 'northwind-csv', nwFile], { env }),
    ];
    for (const r of runs) expect(r.stderr).not.toMatch(STACK);
    expect(summary(runs[0] as never).sent).toBe(corpus.valid);
    expect(summary(runs[1] as never).sent).toBe(tpl.valid);
    expect(summary(runs[2] as never).sent).toBe(nw.rows);
    // The service saw every valid record, free text masked.
    const sent = capture.bodies.flatMap((b) => (JSON.parse(b) as { transactions: Row[] }).transactions);
    expect(sent.length).toBe(corpus.valid + tpl.valid + nw.rows);
    expect(new Set(sent.map((t) => t.transactionId))).toEqual(
      new Set([
        ...corpus.ids,
        ...sent.filter((t) => !String(t.transactionId).startsWith('lk-')).map((t) => t.transactionId),
      ]),
    );
    scan('requests', capture.all.join('\n'));
    runs.forEach((r, k) => {
      scan(`send ${k} stdout`, r.stdout);
      scan(`send ${k} stderr`, r.stderr);
    });
    scan('ledger', await readIf(ledger));
    scan('rejects', await readIf(rejects));
    scan('metrics', await readIf(metrics));
    expect((await readIf(rejects)).split('\n').filter(Boolean).length).toBeGreaterThan(2 * PANS.length * 30);

    // A failed run whose error echoes card numbers: ledger failed lists it.
    capture.failWith = {
      status: 400,
      body: JSON.stringify({
        title: `card ${grouped(LEAK_PANS.visa as string, '\u202f')} refused`,
        detail: PANS.join(' '),
      }),
    };
    const failFile = join(dir, `fail ${LEAK_PANS.maestro}.ndjson`);
    await writeFile(failFile, `${[0, 1, 2].map((k) => JSON.stringify(makeTx(k, 'lf'))).join('\n')}\n`);
    const failed = await runCliHere(['send', ...FAST, failFile], { env });
    expect(failed.code).toBe(3);
    scan('failed send stderr', failed.stderr);
    scan('failed send stdout', failed.stdout);
    scan('ledger after failure', await readIf(ledger));
    const commands = [
      ['ledger', 'status', '--ledger', ledger],
      ['ledger', 'status', '--json', '--ledger', ledger],
      ['ledger', 'failed', '--ledger', ledger],
      ['ledger', 'failed', '--json', '--ledger', ledger],
      ['ledger', 'find', '--ledger', ledger, 'lf-00000000', corpus.ids[0] as string, ...PANS.slice(0, 3)],
      [
        'ledger',
        'find',
        '--json',
        '--ledger',
        ledger,
        'lf-00000001',
        corpus.ids[1] as string,
        ...PANS.slice(0, 3),
      ],
    ];
    for (const args of commands) {
      const r = await runCliHere(args, { env: { SVC_LOG_LEVEL: 'debug' } });
      expect(r.stderr).not.toMatch(STACK);
      scan(`${args.slice(0, 3).join(' ')} stdout`, r.stdout);
      scan(`${args.slice(0, 3).join(' ')} stderr`, r.stderr);
    }
    report('leak corpus: send + ledger commands', {
      pans: PANS.length,
      writings: writingsFor(PANS[0] as string, 0).length,
      records: corpus.lines.length + tpl.lines.length + nw.rows,
      leaks: Object.keys(found).length,
    });
    expectNoLeak();
  });

  it('map, mapping check, mapping draft on the corpus', async () => {
    const w = await workdir('leak-map');
    const corpus = corpusNdjson('lm');
    const file = join(w.dir, `${PAN_NAME}.ndjson`);
    await writeFile(file, `${corpus.lines.join('\n')}\n`);
    const nwFile = join(w.dir, `nw ${LEAK_PANS.unionpay}.csv`);
    await writeFile(nwFile, northwindCsv().text);
    // A CSV whose column names and first values are card numbers, for the draft and the check.
    const names = PANS.slice(0, 5).map((p, k) => writingsFor(p, k)[k + 5] as string);
    const draftCsv = join(w.dir, `draft ${LEAK_PANS.visa2}.csv`);
    await writeFile(
      draftCsv,
      `${[...names, 'TIME'].join(',')}\n${[...PANS.slice(5, 10).map((p) => grouped(p, '\u2009')), `${LEAK_PANS.visa} 07:00:00`].join(',')}\n`,
    );
    const runs = [
      ['map', file],
      ['map', '--mapping', 'northwind-csv', nwFile],
      ['mapping', 'check', 'canonical', file],
      ['mapping', 'check', 'northwind-csv', draftCsv],
      ['mapping', 'check', 'northwind-csv', nwFile],
      ['mapping', 'draft', draftCsv],
      ['mapping', 'draft', file],
    ];
    for (const args of runs) {
      const r = await runCliHere(args);
      expect(r.stderr, args.join(' ')).not.toMatch(STACK);
      scan(`${args.slice(0, 2).join(' ')} ${args.at(-1)} stdout`, r.stdout);
      scan(`${args.slice(0, 2).join(' ')} ${args.at(-1)} stderr`, r.stderr);
    }
    expectNoLeak();
  });

  it('a PostgreSQL ledger: send, then backfill plan|work|status, every row of every table searched', async () => {
    const w = await workdir('leak-pg');
    const url = await pgs.createDatabase();
    const corpus = corpusNdjson('lp');
    const file = join(w.dir, 'corpus.ndjson');
    await writeFile(file, `${corpus.lines.join('\n')}\n`);
    const env = {
      SVC_BASE_URL: capture.url,
      SVC_REJECTS_PATH: join(w.dir, 'rejects.ndjson'),
      SVC_LOG_LEVEL: 'debug',
    };
    const sent = await runCliHere(['send', ...FAST, '--ledger', url, file], { env });
    expect(sent.stderr).not.toMatch(STACK);
    expect(summary(sent).sent).toBe(corpus.valid);
    scan('pg send stdout', sent.stdout);
    scan('pg send stderr', sent.stderr);

    // A backfill of the corpus (a plain path), and of a file named by a card number (refused, masked).
    const bfUrl = await pgs.createDatabase();
    const named = join(w.dir, `${PAN_NAME}.ndjson`);
    await writeFile(named, `${corpus.lines.slice(0, 30).join('\n')}\n`);
    const refused = await runCliHere(['backfill', 'plan', '--ledger', bfUrl, named]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/holds a card number/);
    scan('backfill plan (card number path) stderr', refused.stderr);
    const planned = await runCliHere([
      'backfill',
      'plan',
      '--ledger',
      bfUrl,
      '--partition-bytes',
      '65536',
      file,
    ]);
    expect(planned.code, planned.stderr).toBe(0);
    const work = await runCliHere(
      [
        'backfill',
        'work',
        '--ledger',
        bfUrl,
        '--worker-id',
        'w1',
        '--rejects',
        join(w.dir, 'bf-rejects.ndjson'),
        ...FAST,
      ],
      { env: { SVC_BASE_URL: capture.url, SVC_LOG_LEVEL: 'debug' } },
    );
    expect(work.stderr).not.toMatch(STACK);
    scan('backfill work stdout', work.stdout);
    scan('backfill work stderr', work.stderr);
    scan('backfill rejects', await readIf(join(w.dir, 'bf-rejects.ndjson')));
    for (const args of [
      ['backfill', 'status', '--ledger', bfUrl],
      ['backfill', 'status', '--json', '--ledger', bfUrl],
      ['ledger', 'status', '--ledger', url],
      ['ledger', 'failed', '--json', '--ledger', url],
      ['ledger', 'find', '--json', '--ledger', url, corpus.ids[0] as string, ...PANS.slice(0, 2)],
    ]) {
      const r = await runCliHere(args);
      scan(`${args.slice(0, 2).join(' ')} stdout`, r.stdout);
      scan(`${args.slice(0, 2).join(' ')} stderr`, r.stderr);
    }
    scan('requests', capture.all.join('\n'));
    scan('rejects', await readIf(join(w.dir, 'rejects.ndjson')));
    for (const db of [url, bfUrl]) {
      const name = new URL(db).pathname.slice(1);
      const tables = await pgs.sql<{ t: string }>(
        name,
        "SELECT table_name AS t FROM information_schema.tables WHERE table_schema = 'svc_ingest'",
      );
      expect(tables.length).toBeGreaterThan(0);
      for (const { t } of tables) {
        const rows = await pgs.sql<{ r: string }>(name, `SELECT x::text AS r FROM svc_ingest.${t} x`);
        scan(`${name}.${t}`, rows.map((r) => r.r).join('\n'));
      }
    }
    expectNoLeak();
  });

  it('tickets listen: webhook bodies carrying the corpus, under our own ids’ key names too', async () => {
    const listener = await listenTickets({ SVC_LOG_LEVEL: 'debug' });
    let posted = 0;
    for (const [p, pan] of PANS.entries()) {
      const ws = writingsFor(pan, p);
      // Nearly a UUID's shape, the card number (a 16-digit one) in its printed groups, under our own id's key
      // name. (A true UUID, 8-4-4-4-12, is never read as a card number, even where its 8-4-4 digits pass.)
      const uuidLike =
        pan.length === 16
          ? `${pan.slice(0, 4)}-${pan.slice(4, 8)}-${pan.slice(8, 12)}-${pan.slice(12)}-8000-000000000000`
          : `deadbeef-0000-4000-8000-${pan}`;
      const status = await listener.post(
        JSON.stringify({
          sourceTicketId: `T-${ws[1]}`,
          processingStatus: 'Processed',
          status: 'In Process',
          requestId: ws[5],
          batchId: `deadbeef-${pan}`,
          clientRequestId: uuidLike,
          description: ws.join(' | '),
          [ws[7] as string]: 'key',
          transactionIds: [pan],
        }),
      );
      expect(status).toBe(200);
      posted++;
    }
    const r = await listener.stop();
    expect(r.stdout.trim().split('\n').length).toBe(posted);
    scan('tickets listen stdout', r.stdout);
    scan('tickets listen stderr', r.stderr);
    expectNoLeak();
  });
});
