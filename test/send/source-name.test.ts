// --source-name: the one input (a file, standard input or a pipe) is named in the ledger's `source`, the rejects'
// `source` and the logs, instead of its path, `stdin` or `/dev/fd/63`; a name with nothing or two to name is a
// usage error.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { collectOutput, ROOT, runCliHere } from '../helpers/cli.ts';
import { useSimulator } from '../helpers/simulator.ts';

const sim = useSimulator({ seed: 41 }, 'reset');
const SAMPLE = join(ROOT, 'samples/canonical.csv');
let dir: string;
const env = () => ({
  SVC_BASE_URL: sim.url,
  SVC_LEDGER_PATH: join(dir, 'ledger.ndjson'),
  SVC_REJECTS_PATH: join(dir, 'rejects.ndjson'),
  SVC_LOG_LEVEL: 'info',
});
const ndjson = async (file: string) =>
  (await readFile(file, 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { source: string });

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-source-name-'));
});

describe('--source-name', () => {
  it('standard input: the ledger, the rejects and the logs name it', async () => {
    const name = 'northwind/2026-11-20.csv';
    const r = await runCliHere(['send', '--json', '--format', 'csv', '--source-name', name, '-'], {
      env: env(),
      input: await readFile(SAMPLE),
    });
    expect(r.code, r.stderr).toBe(2);
    const ledger = await ndjson(join(dir, 'ledger.ndjson'));
    expect(ledger.length).toBeGreaterThan(0);
    expect(new Set(ledger.map((l) => l.source))).toEqual(new Set([name]));
    const rejects = await ndjson(join(dir, 'rejects.ndjson'));
    expect(rejects).toHaveLength(4);
    expect(new Set(rejects.map((l) => l.source))).toEqual(new Set([name]));
    expect(r.rawStderr).not.toContain('"stdin"');
  });

  it('a pipe (process substitution) goes by the name, not /dev/fd/N', async () => {
    const cli = join(ROOT, 'src/bin/svc-ingest');
    // Asynchronously: the simulator answers from this very process.
    const r = await new Promise<{ status: number | null; stderr: string }>((resolve) => {
      const child = spawn(
        'bash',
        ['-c', `"${cli}" send --json --source-name harbor-feed --format csv <(cat "${SAMPLE}")`],
        {
          env: { ...process.env, ...env(), SVC_SEND_HEALTH_CHECK_WINDOW_MS: '0' },
          stdio: ['ignore', 'ignore', 'pipe'],
        },
      );
      void collectOutput(child).closed.then(({ code, stderr }) => resolve({ status: code, stderr }));
    });
    expect(r.status, r.stderr).toBe(2);
    const ledger = await ndjson(join(dir, 'ledger.ndjson'));
    expect(new Set(ledger.map((l) => l.source))).toEqual(new Set(['harbor-feed']));
    expect(r.stderr).not.toMatch(/\/dev\/fd\//);
  });

  it('one file: the name replaces its path (the shipped unit and CronJob name their fixed export path so)', async () => {
    const r = await runCliHere(['send', '--json', '--source-name', 'northwind-nightly', SAMPLE], {
      env: env(),
    });
    expect(r.code, r.stderr).toBe(2);
    const ledger = await ndjson(join(dir, 'ledger.ndjson'));
    expect(new Set(ledger.map((l) => l.source))).toEqual(new Set(['northwind-nightly']));
    const rejects = await ndjson(join(dir, 'rejects.ndjson'));
    expect(new Set(rejects.map((l) => l.source))).toEqual(new Set(['northwind-nightly']));
    expect(r.rawStderr).not.toContain(SAMPLE);
  });

  it('two files and no stream, or an empty name: exit 1, nothing sent', async () => {
    const before = sim.stats().requests.byPath['/v2/data/transactions'] ?? 0;
    const two = await runCliHere(
      ['send', '--source-name', 'x', SAMPLE, join(ROOT, 'samples/canonical.ndjson')],
      {
        env: env(),
      },
    );
    expect(two.code).toBe(1);
    expect(two.stderr).toMatch(
      /svc-ingest: USAGE_INVALID: --source-name names one input, and 2 files are given/,
    );
    const empty = await runCliHere(['send', '--format', 'csv', '--source-name', ' ', '-'], {
      env: env(),
      input: '',
    });
    expect(empty.code).toBe(1);
    expect(empty.stderr).toMatch(/--source-name: expected a non-empty name/);
    expect(sim.stats().requests.byPath['/v2/data/transactions'] ?? 0).toBe(before);
  });
});
