// Two feeds, one textfile folder: with a different --metrics-label feed=… each run's series are distinct, so
// node_exporter's textfile collector (which merges every *.prom file of the folder by metric name, and drops a
// file whose series were "collected before with the same name and label values") reads both. Checked with a
// Prometheus text-format parser over each file, and the merge rule over both; promtool too where installed.
// Also: a label that is not a valid Prometheus label is refused before anything is sent, and the input size
// is absent for a pipe.
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { beforeEach, describe, expect, it } from 'vitest';
import { runCliHere } from '../helpers/cli.ts';
import { useSimulator } from '../helpers/simulator.ts';
import { csvOf, makeTx, range } from '../helpers/transactions.ts';

const sim = useSimulator({ seed: 23 }, 'reset');
let dir: string;

interface Family {
  name: string;
  type: string;
  metrics: Array<{ value?: string; labels?: Record<string, string> }>;
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-metrics-labels-'));
});

async function feed(name: string, textfiles: string, input?: { stdin: string }): Promise<number | null> {
  const csv = join(dir, `${name}.csv`);
  await writeFile(csv, csvOf(range(60).map((i) => makeTx(i, `${name}-`))));
  const r = await runCliHere(
    [
      'send',
      '--json',
      '--metrics-file',
      join(textfiles, `svc_ingest_${name}.prom`),
      '--metrics-label',
      `feed=${name}`,
      '--metrics-label',
      'host=etl-1',
      ...(input ? ['--format', 'csv', '-'] : [csv]),
    ],
    {
      env: {
        SVC_BASE_URL: sim.url,
        SVC_LEDGER_PATH: join(dir, `${name}.ledger.ndjson`),
        SVC_REJECTS_PATH: join(dir, `${name}.rejects.ndjson`),
      },
      ...(input ? { input: await readFile(csv, 'utf8') } : {}),
    },
  );
  return r.code;
}

describe('--metrics-label', () => {
  it('two feeds in one textfile folder: every series distinct, both files read', async () => {
    const textfiles = join(dir, 'textfile');
    await mkdir(textfiles);
    expect(await feed('northwind', textfiles)).toBe(0);
    expect(await feed('harbor', textfiles)).toBe(0);
    const files = (await readdir(textfiles)).filter((f) => f.endsWith('.prom')).sort();
    expect(files).toEqual(['svc_ingest_harbor.prom', 'svc_ingest_northwind.prom']);

    // The collector's merge: one family per name across files, of one type; a series (name and label set) seen
    // twice is a collision. The parser reads each file; the series are taken from the sample lines themselves
    // (the parser drops a histogram's labels).
    const seen = new Map<string, string>();
    const types = new Map<string, string>();
    for (const f of files) {
      const text = await readFile(join(textfiles, f), 'utf8');
      const families = parsePrometheusTextFormat(text) as Family[];
      expect(families.length).toBeGreaterThan(10);
      for (const fam of families) {
        expect(types.get(fam.name) ?? fam.type, fam.name).toBe(fam.type);
        types.set(fam.name, fam.type);
      }
      const feedName = f.slice('svc_ingest_'.length, -'.prom'.length);
      for (const line of text.split('\n').filter((l) => l !== '' && !l.startsWith('#'))) {
        const m = /^(\w+)\{(.*)\} \S+$/.exec(line);
        expect(m, line).not.toBeNull();
        const labels = m![2]!.split(/,(?=\w+=")/).sort();
        expect(labels, line).toContain(`feed="${feedName}"`);
        expect(labels, line).toContain('host="etl-1"');
        const key = `${m![1]}{${labels.join(',')}}`;
        expect(seen.get(key), `${key} in ${f} and ${seen.get(key)}`).toBeUndefined();
        seen.set(key, f);
      }
    }
    const records = (feedName: string) =>
      [...seen.keys()].filter(
        (k) => k.startsWith('svc_ingest_records_total{') && k.includes(`feed="${feedName}"`),
      );
    expect(records('northwind')).toHaveLength(5);
    expect(records('harbor')).toHaveLength(5);

    const promtool = spawnSync('promtool', ['--version']);
    if (promtool.status === 0)
      for (const f of files) {
        const check = spawnSync('promtool', ['check', 'metrics'], {
          input: await readFile(join(textfiles, f)),
        });
        expect(check.status, String(check.stderr)).toBe(0);
      }
  });

  it('svc_ingest_input_bytes is absent for a pipe, present for a file', async () => {
    const textfiles = join(dir, 'textfile');
    await mkdir(textfiles);
    expect(await feed('piped', textfiles, { stdin: 'yes' })).toBe(0);
    expect(await feed('file', textfiles)).toBe(0);
    const piped = await readFile(join(textfiles, 'svc_ingest_piped.prom'), 'utf8');
    const file = await readFile(join(textfiles, 'svc_ingest_file.prom'), 'utf8');
    expect(piped).not.toMatch(/^svc_ingest_input_bytes[ {]/m);
    expect(piped).toMatch(/^svc_ingest_input_bytes_read\{/m);
    expect(file).toMatch(/^svc_ingest_input_bytes\{feed="file",host="etl-1"\} \d+$/m);
  });

  it('a label that is not a Prometheus label is refused before anything is sent (exit 1)', async () => {
    for (const [label, why] of [
      ['feed', /expected KEY=VALUE/],
      ['1feed=x', /letters, digits and _/],
      ['fe-ed=x', /letters, digits and _/],
      ['__name__=x', /reserved/],
      ['outcome=x', /use the label outcome/],
      ['feed=', /empty/],
    ] as const) {
      const r = await runCliHere(['send', '--metrics-label', label, join(dir, 'none.csv')], {
        env: { SVC_BASE_URL: sim.url, SVC_LEDGER_PATH: join(dir, 'l.ndjson') },
      });
      expect(r.code, label).toBe(1);
      expect(r.stderr, label).toMatch(/svc-ingest: CONFIG_INVALID: --metrics-label/);
      expect(r.stderr, label).toMatch(why);
    }
    const twice = await runCliHere(
      ['send', '--metrics-label', 'a=1', '--metrics-label', 'a=2', join(dir, 'none.csv')],
      {
        env: { SVC_BASE_URL: sim.url },
      },
    );
    expect(twice.stderr).toMatch(/label a given twice/);
    expect(sim.stats().requests.byPath['/v2/data/transactions'] ?? 0).toBe(0);
  });
});
