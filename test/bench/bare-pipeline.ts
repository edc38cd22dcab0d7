// The bare pipeline, an anchor of `make bench` (anchors.ts): the least a sender of the canonical CSV must do, with
// none of svc-ingest's guarantees beyond a durable record per batch. csv-parse stream → an object per row (empty
// cells left out, the Y/N flags as booleans, the network id as a number) → JSON.stringify → batches of 50 →
// node:http POST on a keep-alive agent, `concurrency` in flight → on each answer a ledger line of the batch's ids
// written and fdatasync'ed. No validation, no card-number guard, no retry, no resume, no logging.
// Usage: node test/bench/bare-pipeline.ts URL FILE CONCURRENCY LEDGER  (prints {"sent":N} at the end)
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import http from 'node:http';
import { parse } from 'csv-parse';

const [url, file, conc, ledgerPath] = process.argv.slice(2) as [string, string, string, string];
const concurrency = Number(conc);
const BATCH = 50;
const BOOLEAN = new Set(['mobileIndicator', 'recurringTransactionIndicator']);
const NUMBER = new Set(['cardNetworkIdentifier']);
const target = new URL('/v2/data/transactions', url);
const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
const ledger = await open(ledgerPath, 'a');
let sent = 0;

function post(body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      target,
      { method: 'POST', agent, headers: { 'content-type': 'application/json' } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          text += d;
        });
        res.on('end', () => {
          JSON.parse(text);
          resolve(res.statusCode ?? 0);
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function send(ids: string[], txs: string[]): Promise<void> {
  const status = await post(`{"transactions":[${txs.join(',')}]}`);
  if (status !== 200) throw new Error(`HTTP ${status}`);
  await ledger.write(`${JSON.stringify({ ids, status })}\n`);
  await ledger.datasync();
  sent += ids.length;
}

const inFlight = new Set<Promise<void>>();
let header: string[] | undefined;
let ids: string[] = [];
let txs: string[] = [];
const flush = async (): Promise<void> => {
  const p = send(ids, txs);
  ids = [];
  txs = [];
  inFlight.add(p);
  void p.finally(() => inFlight.delete(p));
  if (inFlight.size >= concurrency) await Promise.race(inFlight);
};
for await (const rec of createReadStream(file).pipe(parse({ bom: true, relax_column_count: true }))) {
  const values = rec as string[];
  if (!header) {
    header = values;
    continue;
  }
  const o: Record<string, unknown> = {};
  for (let k = 0; k < header.length; k++) {
    const name = header[k] as string;
    const v = values[k];
    if (v === undefined || v === '') continue;
    o[name] = BOOLEAN.has(name) ? v === 'Y' : NUMBER.has(name) ? Number(v) : v;
  }
  ids.push(values[0] as string);
  txs.push(JSON.stringify(o));
  if (txs.length === BATCH) await flush();
}
if (txs.length > 0) await flush();
await Promise.all(inFlight);
await ledger.close();
agent.destroy();
process.stdout.write(`${JSON.stringify({ sent })}\n`);
