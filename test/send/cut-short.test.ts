// An input that may have been cut short is never a success: real pipes through bash under `set -o pipefail`
// (`head -c`, a producer killed with SIGKILL, a cut gzip, process substitution) into the CLI as a child process,
// against the simulator. The cut record is never delivered, the run exits 1 with its summary, and what was read
// and not sent is `failed` in the ledger (`ledger failed` lists it).
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { beforeEach, describe, expect, it } from 'vitest';
import { BIN, childEnv, collectOutput } from '../helpers/cli.ts';
import { useSimulator } from '../helpers/simulator.ts';
import { csvOf, makeTx, ndjsonOf, range } from '../helpers/transactions.ts';

const sim = useSimulator({ seed: 51 }, 'reset');
const N = 300;
const txs = range(N).map((i) => makeTx(i, 'cut'));
const CSV = csvOf(txs);
const NDJSON = ndjsonOf(txs);
let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-cut-short-'));
  await writeFile(join(dir, 'data.csv'), CSV);
  await writeFile(join(dir, 'data.ndjson'), NDJSON);
});

interface PipeRun {
  /** The pipeline's status under pipefail. */
  code: number | null;
  /** ${PIPESTATUS[@]}, as the script saw it. */
  pipestatus: number[];
  summary: Record<string, unknown>;
  stderr: string;
}

/**
 * Run `script` in bash under `set -o pipefail`, in the test's folder, with `$S` the CLI (`$S send --json …` prints
 * the summary on stdout); the script's last pipeline's PIPESTATUS is written to a file and read back.
 */
async function pipe(script: string, env: NodeJS.ProcessEnv = {}): Promise<PipeRun> {
  const child = spawn(
    'bash',
    ['-c', `set -o pipefail\n${script}\nst=$? ps="\${PIPESTATUS[*]}"\necho "$ps" > pipestatus\nexit $st`],
    {
      cwd: dir,
      env: childEnv(BIN, {
        S: BIN,
        SVC_BASE_URL: sim.url,
        SVC_LEDGER_PATH: join(dir, 'ledger.ndjson'),
        SVC_REJECTS_PATH: join(dir, 'rejects.ndjson'),
        ...env,
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const { code, stdout, stderr } = await collectOutput(child).closed;
  const pipestatus = (await readFile(join(dir, 'pipestatus'), 'utf8')).trim().split(' ').map(Number);
  const last = stdout.trim().split('\n').pop() ?? '';
  return { code, pipestatus, summary: last.startsWith('{') ? JSON.parse(last) : {}, stderr };
}

/** The ids `ledger failed --json` lists. */
async function ledgerFailed(): Promise<string[]> {
  const child = spawn(BIN, ['ledger', 'failed', '--json', '--ledger', join(dir, 'ledger.ndjson')], {
    env: childEnv(BIN),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const { stdout } = await collectOutput(child).closed;
  return stdout
    .trim()
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => (JSON.parse(l) as { transactionId: string }).transactionId);
}

async function rejectLines(): Promise<Array<{ line: number; errors: Array<{ message: string }> }>> {
  const text = await readFile(join(dir, 'rejects.ndjson'), 'utf8').catch(() => '');
  return text
    .trim()
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l));
}

/** Every record read is in exactly one bucket, and the cut one is rejected, never delivered. */
function accounted(r: PipeRun, cutId: string): void {
  const s = r.summary as Record<string, number>;
  expect(s.read).toBe((s.sent ?? 0) + (s.skipped ?? 0) + (s.failed ?? 0) + (s.rejected ?? 0));
  expect(s.rejected).toBe(1);
  expect(sim.deliveries().has(cutId)).toBe(false);
  expect(sim.deliveries().size).toBe(s.sent);
}

describe('a stream cut short is never a success', () => {
  it('head -c cutting the CSV stream inside its last field: the record is not sent, exit 1, pipeline fails', async () => {
    const r = await pipe(`head -c ${Buffer.byteLength(CSV) - 4} data.csv | "$S" send --json -`);
    expect(r.pipestatus, r.stderr).toEqual([0, 1]);
    expect(r.code).toBe(1);
    expect(r.summary).toMatchObject({
      read: N,
      rejected: 1,
      exitStatus: 1,
      error: { code: 'INPUT_TRUNCATED' },
    });
    accounted(r, txs[N - 1]!.transactionId);
    const rejects = await rejectLines();
    expect(rejects).toHaveLength(1);
    expect(rejects[0]).toMatchObject({ line: N + 1 });
    expect(rejects[0]!.errors[0]!.message).toBe('input ended mid-record (no line break after it)');
    expect(r.stderr).toContain(`svc-ingest: INPUT_TRUNCATED: stdin: input ended mid-record at line ${N + 1}`);
    // What was read and not sent is failed in the ledger: `ledger failed` lists it, a rerun sends it.
    expect((await ledgerFailed()).length).toBe(r.summary.failed);
  });

  it('head -c cutting mid-record, and a producer killed with SIGKILL: PIPESTATUS 137 1, the pipeline fails', async () => {
    const half = Buffer.byteLength(CSV.split('\n').slice(0, 150).join('\n')) + 40;
    const cut = await pipe(`head -c ${half} data.csv | "$S" send --json -`);
    expect(cut.pipestatus, cut.stderr).toEqual([0, 1]);
    expect(cut.summary).toMatchObject({ read: 150, rejected: 1, error: { code: 'INPUT_TRUNCATED' } });
    accounted(cut, txs[149]!.transactionId);

    sim.reset();
    const killed = await pipe(`( head -c ${half} data.csv; kill -9 $BASHPID ) | "$S" send --json -`);
    expect(killed.pipestatus, killed.stderr).toEqual([137, 1]);
    expect(killed.code).not.toBe(0);
    expect(killed.summary).toMatchObject({ exitStatus: 1, error: { code: 'INPUT_TRUNCATED' } });
    expect(sim.deliveries().has(txs[149]!.transactionId)).toBe(false);
  });

  it('an unclosed quote at the end of a stream, and a partial NDJSON line: ended mid-record, exit 1', async () => {
    const quoted = await pipe(`{ cat data.csv; printf 'x-1,"AUTH\\nORIZED\\n'; } | "$S" send --json -`);
    expect(quoted.pipestatus, quoted.stderr).toEqual([0, 1]);
    expect(quoted.summary).toMatchObject({ read: N + 1, rejected: 1, error: { code: 'INPUT_TRUNCATED' } });
    expect(quoted.stderr).toContain('a quoted value is not closed');

    sim.reset();
    const nd = await pipe(`head -c ${Buffer.byteLength(NDJSON) - 30} data.ndjson | "$S" send --json -`);
    expect(nd.pipestatus, nd.stderr).toEqual([0, 1]);
    expect(nd.summary).toMatchObject({ read: N, rejected: 1, error: { code: 'INPUT_TRUNCATED' } });
    accounted(nd, txs[N - 1]!.transactionId);
  });

  it('--allow-unterminated reads a stream without its final line break as whole; a file by path keeps that rule', async () => {
    const trimmed = CSV.slice(0, -1);
    await writeFile(join(dir, 'no-eol.csv'), trimmed);
    const allowed = await pipe(`cat no-eol.csv | "$S" send --json --allow-unterminated -`);
    expect(allowed.pipestatus, allowed.stderr).toEqual([0, 0]);
    expect(allowed.summary).toMatchObject({ read: N, sent: N, rejected: 0 });

    sim.reset();
    const file = await pipe(`"$S" send --json --no-resume no-eol.csv`);
    expect(file.code, file.stderr).toBe(0);
    expect(file.summary).toMatchObject({ read: N, sent: N });
    expect(sim.deliveries().has(txs[N - 1]!.transactionId)).toBe(true);

    // Standard input redirected from a file is a file: complete, its end read by the file's rule.
    sim.reset();
    const redirected = await pipe(`"$S" send --json --no-resume - < no-eol.csv`);
    expect(redirected.code, redirected.stderr).toBe(0);
    expect(redirected.summary).toMatchObject({ read: N, sent: N });
  });

  it('a truncated .gz on stdin prints the summary, exits 1, and `ledger failed` lists what was read but not sent', async () => {
    const big = range(3000).map((i) => makeTx(i, 'gz'));
    const gz = gzipSync(csvOf(big));
    await writeFile(join(dir, 'cut.csv.gz'), gz.subarray(0, Math.floor(gz.length * 0.8)));
    const r = await pipe(`cat cut.csv.gz | "$S" send --json -`);
    expect(r.pipestatus, r.stderr).toEqual([0, 1]);
    const s = r.summary as Record<string, number>;
    expect(r.summary).toMatchObject({ exitStatus: 1, error: { code: 'INPUT_PARSE' } });
    expect((r.summary.error as { message: string }).message).toMatch(
      /^stdin: not valid gzip data: cut short \(unexpected end of file\) after \d+ compressed bytes/,
    );
    expect(s.read).toBeGreaterThan(0);
    expect(s.failed).toBeGreaterThan(0);
    expect(s.read).toBe(Number(s.sent) + Number(s.failed) + Number(s.rejected));
    expect(sim.deliveries().size).toBe(s.sent);
    const failed = await ledgerFailed();
    expect(failed.length).toBe(s.failed);
    expect(failed.some((id) => sim.deliveries().has(id))).toBe(false);
    // run.end says why.
    expect(r.stderr).toMatch(/"event":"run.end".*"code":"INPUT_PARSE"/);

    // The same through process substitution and as a path: exit 1 with the summary either way.
    sim.reset();
    const sub = await pipe(`"$S" send --json --no-resume <(zcat cut.csv.gz)`);
    expect(sub.code, sub.stderr).toBe(1);
    expect(sub.summary).toMatchObject({ exitStatus: 1, error: { code: 'INPUT_TRUNCATED' } });
    const path = await pipe(`"$S" send --json --no-resume cut.csv.gz`);
    expect(path.code, path.stderr).toBe(1);
    expect(path.summary).toMatchObject({ exitStatus: 1, error: { code: 'INPUT_PARSE' } });
  });
});
