// Every path a person types into is guarded (issue 30): `tickets create` refuses a card number in any field —
// written plainly, grouped, with characters a person does not see, in superscript digits — before anything is
// stored or sent (exit 1, the field named, the number masked); so do --source-name, --metrics-label and a card
// number in the path of --base-url. The real CLI against a capture server standing in for the service.
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useCapture } from '../helpers/capture.ts';
import { runCliHere } from '../helpers/cli.ts';
import { LEAK_PANS } from '../helpers/leak-corpus.ts';
import { leakForms, readAsPerson } from '../helpers/leak-forms.ts';
import { panPiecesIn } from '../helpers/pans.ts';

const capture = useCapture();
const visa = LEAK_PANS.visa as string;
const amex = LEAK_PANS.amex as string;
const forms = leakForms(visa);
const lrm = (forms.find(([n]) => n === 'groups joined by LRM') as [string, string])[1];
const sup = (forms.find(([n]) => n === 'superscript digits') as [string, string])[1];

function create(extra: Record<string, string>, force = true) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-guard-'));
  const o = {
    '--ticket-id': 'T-1',
    '--customer': 'cust-1',
    '--offer': '100001',
    '--transaction': '123',
    '--description': 'Reward not credited',
    ...extra,
  };
  const args = [
    'tickets',
    'create',
    ...Object.entries(o).flat(),
    '--base-url',
    capture.url,
    '--max-attempts',
    '1',
  ];
  if (force) args.push('--force');
  return runCliHere(args, { env: { SVC_LEDGER_PATH: join(dir, 'l.ndjson') } }).then((r) => ({ ...r, dir }));
}

describe('text a person types is refused when it holds a card number, before anything is sent', () => {
  it('tickets create: description, transaction, customer, ticket id — plain, grouped, LRM-joined, superscript', async () => {
    const cases: Array<[string, string]> = [
      ['--description', `card ${visa.replace(/(\d{4})(?=\d)/g, '$1 ')} was charged twice`],
      ['--description', `customer pasted ${lrm}`],
      ['--description', `card ${sup}`],
      ['--transaction', visa],
      ['--customer', `cust ${amex}`],
      ['--ticket-id', `T-${visa}`],
    ];
    const results = await Promise.all(cases.map(([opt, v]) => create({ [opt]: v })));
    for (const [k, r] of results.entries()) {
      const [opt] = cases[k] as [string, string];
      expect(r.code, `${opt}: ${r.stderr}`).toBe(1);
      expect(r.stderr).toContain(`${opt} holds a card number`);
      expect(r.stderr).toMatch(/453957\*+1486|378282\*+0005/);
      expect(panPiecesIn(r.stderr + r.stdout, [visa, amex])).toEqual([]);
      // Nothing stored: no ticket store next to the ledger.
      expect(readdirSync(r.dir)).toEqual([]);
    }
    expect(capture.all).toEqual([]);
    // The same create without the card number is sent.
    const ok = await create({});
    expect(ok.code, ok.stderr).toBe(0);
    expect(capture.all.length).toBe(1);
    expect(readAsPerson(capture.all.join('\n'))).not.toContain(visa.slice(0, 12));
  });

  it('send: --source-name and --metrics-label; a card number in the path of --base-url', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-guard-'));
    const env = { SVC_LEDGER_PATH: join(dir, 'l.ndjson') };
    const base = ['send', '-', '--base-url', capture.url, '--json'];
    const [name, label, url] = await Promise.all([
      runCliHere([...base, '--source-name', `export ${lrm}`], { env, input: '' }),
      runCliHere([...base, '--metrics-label', `feed=${visa}`], { env, input: '' }),
      runCliHere(['send', '-', '--json', '--base-url', `${capture.url}/x/${visa}`], { env, input: '' }),
    ]);
    for (const [r, what] of [
      [name, '--source-name holds a card number'],
      [label, '--metrics-label feed holds a card number'],
      [url, 'holds a card number'],
    ] as const) {
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toContain(what);
      expect(panPiecesIn(r.stderr + r.stdout, [visa])).toEqual([]);
    }
    expect(capture.all).toEqual([]);
  });

  it('redemptions, reconcile, trace --customer and stores --postal-code', async () => {
    const env = { SVC_LEDGER_PATH: join(mkdtempSync(join(tmpdir(), 'svc-guard-')), 'l.ndjson') };
    const b = ['--base-url', capture.url];
    const runs = await Promise.all([
      runCliHere(['redemptions', '--customer', `c ${lrm}`, ...b], { env }),
      runCliHere(['reconcile', '--customer', visa, ...b], { env }),
      runCliHere(['trace', '1', '--customer', visa, ...b], { env }),
      runCliHere(['stores', '--ad', '1', '--postal-code', visa, '--radius', '10', ...b], { env }),
    ]);
    for (const r of runs) {
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toMatch(/--(customer|postal-code) holds a card number/);
      expect(panPiecesIn(r.stderr + r.stdout, [visa])).toEqual([]);
    }
    expect(capture.all).toEqual([]);
  });
});
