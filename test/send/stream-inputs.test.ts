// Inputs that are read once: a named pipe (what `send <(zcat x.gz)` hands over as /dev/fd/N), gzipped or not,
// with or without a name that tells the format, and a device such as /dev/null. A directory is refused.
import { execFileSync } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { beforeEach, describe, expect, it } from 'vitest';
import { runCliHere, sendEnv, summaryOf } from '../helpers/cli.ts';
import { useSimulator } from '../helpers/simulator.ts';
import { CANONICAL_COLUMNS, csvOf, makeTx, ndjsonOf, range } from '../helpers/transactions.ts';

const sim = useSimulator({ seed: 11 }, 'reset');
let dir: string;
const env = () => sendEnv(sim.url, dir);

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-stream-'));
});

/** A named pipe at `name` that a writer fills with `data` once the CLI opens it. */
function fifo(name: string, data: string | Buffer): string {
  const path = join(dir, name);
  execFileSync('mkfifo', [path]);
  // Opening a FIFO for writing waits for its reader: the CLI below.
  const out = createWriteStream(path);
  out.on('error', () => {});
  out.end(data);
  return path;
}

describe('send: inputs read once (pipes, devices)', () => {
  it('a gzipped CSV through a pipe with no extension: sniffed, every record sent once', async () => {
    const txs = range(120).map((i) => makeTx(i, 'pipe'));
    const pipe = fifo('fd63', gzipSync(csvOf(txs)));
    const r = await runCliHere(['send', '--json', pipe], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(summaryOf(r)).toMatchObject({ read: 120, sent: 120, rejected: 0 });
    expect(sim.stats().transactions.distinct).toBe(120);
  });

  it('an NDJSON pipe named .ndjson, and the header of a CSV pipe checked as it is read', async () => {
    const nd = fifo('feed.ndjson', ndjsonOf(range(7).map((i) => makeTx(i, 'nd'))));
    const ok = await runCliHere(['send', '--json', nd], { env: env() });
    expect(ok.code, ok.stderr).toBe(0);
    expect(summaryOf(ok)).toMatchObject({ read: 7, sent: 7 });

    const cols = CANONICAL_COLUMNS.filter((c) => c !== 'paymentNetworkMerchantCity');
    const bad = fifo('bad.csv', `${cols.join(',')}\n${cols.map(() => 'x').join(',')}\n`);
    const r = await runCliHere(['send', bad], { env: env() });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${bad}: header lacks column paymentNetworkMerchantCity`);
  });

  it('/dev/null is an empty input (exit 4), a directory is refused by name (exit 1)', async () => {
    const empty = await runCliHere(['send', '--json', '--format', 'csv', '/dev/null'], { env: env() });
    expect(empty.code, empty.stderr).toBe(4);
    expect(summaryOf(empty)).toMatchObject({ read: 0, emptyInputs: ['/dev/null'] });
    expect(empty.stderr).toContain('/dev/null: empty input');

    const r = await runCliHere(['send', dir], { env: env() });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`INPUT_UNREADABLE: cannot read ${dir}: a directory`);
    expect(await readFile(join(dir, 'ledger.ndjson'), 'utf8')).toBe(''); // nothing was ever sent
  });
});
