// What the service sends back is guarded before anything prints or stores it (issue 49): JSON numbers of 13 digits
// or more read losslessly and masked as text, request ids, error titles and details, redemption and ticket fields,
// webhook bodies — through the one rule. The simulator's test-only `/__sim/answers` writes the answers a service
// holding card numbers would.
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createClient, SvcHttpError } from '../../src/client/index.ts';
import { PATHS } from '../../src/client/models.ts';
import { defaultConfig } from '../../src/config/index.ts';
import { startWebhookReceiver } from '../../src/tickets/webhook.ts';
import { runCliHere } from '../helpers/cli.ts';
import { piecesLeft } from '../helpers/digit-fuzz.ts';
import { withCheckDigit } from '../helpers/pans.ts';
import { useSimulator } from '../helpers/simulator.ts';
import { configFor, makeTransactions } from './fixtures.ts';

const sim = useSimulator({ seed: 3 }, 'reset');
/** A 19-digit UnionPay number and a 16-digit Mir number (fresh, Luhn-valid); a 19-digit id that is no card. */
const CARD19 = withCheckDigit('622126583719046271');
const MIR = withCheckDigit('220037491826350');
const ID19 = '7999999999999999999';

async function script(path: string, body: string | null, status = 200, id?: string): Promise<void> {
  const res = await fetch(`${sim.url}/__sim/answers`, {
    method: 'POST',
    body: JSON.stringify({ path, body, status, ...(id ? { id } : {}) }),
  });
  expect(res.status).toBe(200);
}

describe('answers of the service, guarded', () => {
  it('a redemption’s 19-digit transactionId as a JSON number: masked as text; a 19-digit id kept exact', async () => {
    const client = createClient(configFor(sim.url));
    const real = await client.getRedemptions('cust-0001', { lookbackWindowInDays: 396 });
    const first = real.redemptions[0] as unknown as Record<string, unknown>;
    const text = JSON.stringify({
      ...real,
      redemptions: [
        { ...first, transactionId: '@CARD@', note: `card ${MIR}` },
        { ...first, transactionId: '@ID@' },
      ],
    })
      .replace('"@CARD@"', CARD19)
      .replace('"@ID@"', ID19);
    await script(PATHS.redemptions, text);
    const r = await client.getRedemptions('cust-0001', { lookbackWindowInDays: 396 });
    const out = JSON.stringify(r);
    expect(piecesLeft(out, [CARD19, MIR])).toEqual([]);
    expect(r.redemptions[0]?.transactionId).toBe(`${CARD19.slice(0, 6)}*********${CARD19.slice(-4)}`);
    expect(r.redemptions[1]?.transactionId).toBe(ID19);

    // The CLI prints what the client read: `redemptions --json` and its text.
    for (const json of [true, false]) {
      const cli = await runCliHere(
        ['redemptions', ...(json ? ['--json'] : []), '--customer', 'cust-0001', '--lookback-days', '396'],
        { env: { SVC_BASE_URL: sim.url } },
      );
      expect(cli.code, cli.stderr).toBe(0);
      expect(piecesLeft(cli.stdout + cli.stderr, [CARD19, MIR])).toEqual([]);
    }
  });

  it('a request id holding a card number (body or header) and an error’s title and detail come back masked', async () => {
    const client = createClient(configFor(sim.url));
    const batch = { requestId: 'b1b2c3d4-0000-4000-8000-000000000001' };
    await script(PATHS.transactions, JSON.stringify({ requestId: `req-${MIR}` }));
    const sent = await client.postTransactions(makeTransactions(1), batch);
    expect(sent.requestId).toBe(`req-${MIR.slice(0, 6)}******${MIR.slice(-4)}`);
    // No request id in the body: the header's, masked, names the failure.
    await script(PATHS.transactions, '{}', 200, `hdr ${MIR}`);
    const byHeader = await client.postTransactions(makeTransactions(1), batch).catch((e: unknown) => e);
    expect(byHeader).toBeInstanceOf(SvcHttpError);
    expect(piecesLeft(JSON.stringify(byHeader) + String(byHeader), [MIR])).toEqual([]);
    await script(
      PATHS.transactions,
      JSON.stringify({
        type: 'ValidationException',
        title: `bad card ${MIR}`,
        // Full-width digits joined by the prolonged-sound mark, as a Japanese keyboard types them.
        detail: `pan ${CARD19} / ${[...MIR]
          .map((d) => String.fromCodePoint(0xff10 + Number(d)))
          .join('')
          .replace(/(.{4})(?=.)/gu, '$1ー')}`,
      }),
      400,
      MIR,
    );
    const err = await client.postTransactions(makeTransactions(1), batch).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SvcHttpError);
    // Read as a person reads it: full-width digits as digits, the prolonged-sound mark as the dash it looks like.
    const all = (JSON.stringify(err) + String((err as Error).message))
      .normalize('NFKC')
      .replaceAll('ー', '-');
    expect(piecesLeft(all, [MIR, CARD19])).toEqual([]);
  });

  it('tickets get: a card number as the id is refused before anything is sent; a ticket’s transactionIds are masked in stdout and the store', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'svc-answers-'));
    const env = { SVC_BASE_URL: sim.url, SVC_LEDGER_PATH: join(dir, 'ledger.ndjson') };
    const before = sim.stats().requests.total;
    const refused = await runCliHere(['tickets', 'get', MIR], { env });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('holds a card number');
    expect(piecesLeft(refused.stdout + refused.stderr, [MIR])).toEqual([]);
    expect(sim.stats().requests.total).toBe(before);

    const ticket = `{"sourceTicketId":"T-1","sourceCustomerId":"cust-0001","offerId":1,"transactionIds":[${CARD19},${ID19}],"status":"Closed","description":"card ${MIR}","ticketCreatedDate":"2026-11-01T00:00:00Z"}`;
    await script(`${PATHS.tickets}/`, ticket);
    const got = await runCliHere(['tickets', 'get', 'T-1', '--json'], { env });
    expect(got.code, got.stderr).toBe(0);
    expect(piecesLeft(got.stdout + got.stderr, [CARD19, MIR])).toEqual([]);
    expect(got.stdout).toContain(ID19);
    const stored = readdirSync(dir)
      .map((f) => readFileSync(join(dir, f), 'utf8'))
      .join('\n');
    expect(stored).toContain('T-1');
    expect(piecesLeft(stored, [CARD19, MIR])).toEqual([]);
  });

  it('a webhook body with card numbers (a number and text) reaches the handler masked', async () => {
    const got: unknown[] = [];
    const receiver = await startWebhookReceiver({
      port: 0,
      settings: defaultConfig().webhook,
      onUpdate: (u) => got.push(u),
    });
    try {
      const res = await fetch(receiver.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: `{"sourceTicketId":"T-2","svcResponse":"refund to ${MIR}","transactionIds":[${CARD19}]}`,
      });
      expect(res.status).toBe(200);
      expect(piecesLeft(JSON.stringify(got), [CARD19, MIR])).toEqual([]);
      expect(got).toHaveLength(1);
    } finally {
      await receiver.close();
    }
  });
});
