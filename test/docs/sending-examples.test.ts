// docs/sending.md's shell blocks as an operator runs them, twice (a rerun after a good night skips everything):
// "Pipes" under `set -o pipefail` with PIPESTATUS (its producer, pg_dump_feed, a shell function here: a good one,
// then one killed -9 mid-stream), and "Control totals" (the command line and the control file, the file's lines
// taken from the page, and its sample message for an export cut short), through bash against the simulator.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { BIN, compileCacheEnv, ROOT, sendEnv } from '../helpers/cli.ts';
import { useSimulator } from '../helpers/simulator.ts';
import { CANONICAL_COLUMNS, csvOf, makeTx, range } from '../helpers/transactions.ts';

const sim = useSimulator({ seed: 61 }, 'reset');
const PAGE = join(ROOT, 'docs/sending.md');

/** The fenced `sh` block of the page that holds `marker`, as its lines. */
async function block(marker: string): Promise<string[]> {
  const blocks = (await readFile(PAGE, 'utf8'))
    .split('```sh\n')
    .slice(1)
    .map((b) => b.split('\n```')[0] as string);
  const found = blocks.find((b) => b.includes(marker));
  if (found === undefined) throw new Error(`no sh block of docs/sending.md holds ${marker}`);
  return found.split('\n');
}

/**
 * bash -c `script` in `dir`, `svc-ingest` the CLI under test (first on PATH), the run's environment set. Not spawnSync:
 * the simulator answers from this process.
 */
async function bash(script: string, dir: string) {
  const child = spawn('bash', ['-c', script], {
    cwd: dir,
    env: {
      ...process.env,
      ...compileCacheEnv(),
      ...sendEnv(sim.url, dir),
      PATH: `${join(dir, 'bin')}:${process.env.PATH}`,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stdout, stderr };
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-sending-doc-'));
  await mkdir(join(dir, 'bin'));
  await writeFile(join(dir, 'bin/svc-ingest'), `#!/bin/sh\nexec '${BIN}' "$@"\n`, { mode: 0o755 });
});

describe('docs/sending.md, run as written', () => {
  it('"Pipes": both statuses kept; a rerun skips all; a producer killed -9 is told apart from send', async () => {
    const lines = await block('pg_dump_feed |');
    const export_ = join(dir, 'feed.csv');
    await writeFile(export_, csvOf(range(120).map((i) => makeTx(i, 'pipe'))));
    const good = `pg_dump_feed() { cat '${export_}'; }\n${lines.join('\n')}`;
    const first = await bash(good, dir);
    expect(first.stderr).not.toMatch(/producer failed|send: /);
    expect(first.stdout.trim()).toBe('120');
    const again = await bash(good, dir);
    expect(again.stderr).not.toMatch(/producer failed|send: /);
    expect(again.stdout.trim()).toBe('0'); // sent 0: all 120 acknowledged before, skipped
    // The producer writes half the export, then is killed -9 (its last record cut short).
    const killed = `pg_dump_feed() { head -c 9000 '${export_}'; kill -9 $BASHPID; }\n${lines.join('\n')}`;
    const broken = await bash(killed, dir);
    expect(broken.stderr).toContain('producer failed: 137');
    expect(broken.stderr).toContain('send: 1; see summary.json and the ledger');
  });

  it('"Control totals": the command line, the control file (key=value and JSON) and the trailer row agree with the export, twice; a wrong count fails', async () => {
    const lines = await block('--expect-count');
    const expectLine = lines.find((l) => l.startsWith('svc-ingest send --expect-count')) as string;
    const controlLine = lines.find((l) => l.startsWith('svc-ingest send --control')) as string;
    const echoLine = lines.find((l) => l.startsWith('echo ')) as string;
    const jsonLine = lines.find(
      (l) => l.startsWith('svc-ingest send --control') && l.includes('.json'),
    ) as string;
    const tailAt = lines.findIndex((l) => l.startsWith('tail -1 '));
    const trailerLine = lines.find((l) => l.startsWith('svc-ingest send --mapping')) as string;
    const catAt = lines.findIndex((l) => l.startsWith('cat exports/'));
    const ctl = lines.slice(catAt + 1, lines.indexOf(controlLine)).join('\n');
    const count = Number(/count=(\d+)/.exec(ctl)?.[1]);
    const total = Number(/total=(\d+)/.exec(ctl)?.[1]);
    // An export of `count` records whose amounts add up to `total` (minor units), as the page's figures say.
    const txs = range(count).map((i) => ({ ...makeTx(i, 'ctl'), postedAmount: '2000' }));
    const last = txs[count - 1] as (typeof txs)[number];
    last.postedAmount = String(total - 2000 * (count - 1));
    await mkdir(join(dir, 'exports'), { recursive: true });
    await writeFile(join(dir, 'exports/2026-11-20.csv'), csvOf(txs));
    await writeFile(join(dir, 'exports/2026-11-20.ctl'), `${ctl}\n`);
    const ledgerOf = (name: string) => `SVC_LEDGER_PATH=${join(dir, `${name}.ndjson`)}`;
    const twice = async (name: string, line: string) => {
      for (const round of [1, 2]) {
        const r = await bash(`${ledgerOf(name)} ${line} --json`, dir);
        expect(r.code, `${line} (run ${round}): ${r.stderr}`).toBe(0);
        const summary = JSON.parse(r.stdout) as { sent: number; skipped: number };
        expect(round === 1 ? summary.sent : summary.skipped).toBe(count);
      }
    };
    await twice('cli', expectLine);
    await twice('ctl', controlLine);
    expect((await bash(echoLine, dir)).code).toBe(0);
    await twice('json', jsonLine);
    const wrong = await bash(
      `${ledgerOf('wrong')} ${expectLine.replace(String(count), String(count + 1))}`,
      dir,
    );
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain(String(count + 1));
    // The trailer: the profile's "controlTotals" as the page's comment gives it, over the export's own columns;
    // the page's last row appended to the export, and `tail -1` showing it as the page does.
    const comment = lines
      .filter((l) => l.startsWith('#    "controlTotals"') || l.startsWith('#      '))
      .join(' ');
    const { controlTotals } = JSON.parse(`{${comment.replace(/#/g, '')}}`);
    const fields = Object.fromEntries(CANONICAL_COLUMNS.map((c) => [c, c]));
    await writeFile(
      join(dir, 'canonical-trailer.json'),
      JSON.stringify({ name: 'canonical-trailer', fields, controlTotals }),
    );
    await writeFile(join(dir, 'exports/2026-11-20.csv'), `${csvOf(txs)}${lines[tailAt + 1]}\n`);
    expect((await bash(lines[tailAt] as string, dir)).stdout).toBe(`${lines[tailAt + 1]}\n`);
    await twice('trailer', trailerLine);
    // The page's sample message, for the same export cut short by its last record: the tool's own words.
    const page = (await readFile(PAGE, 'utf8')).replace(/\n\s*/g, ' ');
    const sample = /`(svc-ingest: INPUT_CONTROL_TOTALS: [^`]*?)(?:; …)?`/.exec(page)?.[1] as string;
    await writeFile(join(dir, 'exports/2026-11-20.csv'), `${csvOf(txs.slice(0, -1))}${lines[tailAt + 1]}\n`);
    const short = await bash(`${ledgerOf('short')} ${trailerLine}`, dir);
    expect(short.code).toBe(1);
    expect(short.stderr.replace(/\n\s*/g, ' ')).toContain(sample);
  });
});
