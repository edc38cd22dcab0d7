// Security basics: https for non-loopback hosts, the auth token and card numbers never written, files mode 0600.
import { existsSync } from 'node:fs';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, runCliHere, startCli, waitFor } from '../helpers/cli.ts';
import { useSimulator } from '../helpers/simulator.ts';
import { FAST, report, STACK, summary, workdir, writeNdjson } from './helpers.ts';

const TOKEN = 'tok-Sup3rSecret-7f1c9e';
const sim = useSimulator({ seed: 8, requireToken: TOKEN });

const tokenEnv = { SVC_AUTH_TOKEN_ENV: 'PARTNER_TOKEN', PARTNER_TOKEN: TOKEN, SVC_LOG_LEVEL: 'debug' };

describe('security basics', () => {
  it('refuses plain http to a non-loopback host (exit 1, one line) unless --insecure-http', async () => {
    const w = await workdir('sec-http');
    const file = join(w.dir, 'in.ndjson');
    await writeNdjson(file, 5, 'ih');
    const env = { ...w.env(sim), SVC_BASE_URL: 'http://svc.example.com' };
    const r = await runCliHere(['send', '--json', '--dry-run', file], { env });
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/https/);
    expect(r.stderr).not.toMatch(STACK);
    const ok = await runCliHere(['send', '--json', '--dry-run', '--insecure-http', file], { env });
    expect(ok.code, ok.stderr).toBe(0);
  });

  it('the auth token appears in no stream or file, on success and on failure', async () => {
    const w = await workdir('sec-token');
    const file = join(w.dir, 'in.ndjson');
    await writeNdjson(file, 120, 'tk');
    sim.reset();
    const r = await runCliHere(['send', ...FAST, file], { env: w.env(sim, tokenEnv) });
    expect(r.code, r.stderr).toBe(0);
    expect(summary(r).sent).toBe(120);
    // Failing requests (500s, then a wrong token: 401) log errors; none may carry the token.
    sim.setFaults({ failRate: 1 });
    const failing = await runCliHere(['send', ...FAST, '--max-retries', '1', '--no-resume', file], {
      env: w.env(sim, tokenEnv),
    });
    expect(failing.code).toBe(3);
    sim.setFaults({ failRate: 0 });
    const wrong = await runCliHere(['send', ...FAST, '--no-resume', file], {
      env: w.env(sim, { ...tokenEnv, PARTNER_TOKEN: `${TOKEN}-wrong` }),
    });
    // A refused token stops the run at once (exit 1, one line): test/faults/auth-stop.test.ts.
    expect(wrong.code).toBe(1);
    const files = [w.ledger, w.rejects].filter(existsSync);
    const texts = [r, failing, wrong].flatMap((x) => [x.stdout, x.stderr]);
    for (const f of files) texts.push(await readFile(f, 'utf8'));
    for (const t of texts) expect(t.includes(TOKEN.slice(4))).toBe(false);
    report('security: token grep', { runs: 3, streamsAndFiles: texts.length, tokenFound: 0 });
  });

  it('ledger, rejects and lock are created with mode 0600', async () => {
    const w = await workdir('sec-mode');
    const file = join(w.dir, 'in.ndjson');
    await writeNdjson(file, 3000, 'md');
    sim.reset();
    sim.setFaults({ latencyMs: 20 });
    const run = startCli(['send', ...FAST, '--concurrency', '1', file], { env: w.env(sim, tokenEnv) });
    await waitFor(() => existsSync(`${w.ledger}.lock`), run.child);
    const lockMode = (await stat(`${w.ledger}.lock`)).mode & 0o777;
    run.child.kill('SIGTERM');
    expect((await run.done).code).toBe(143);
    sim.setFaults({ latencyMs: 0 });
    // A run with a reject, so the rejects file exists.
    const bad = join(w.dir, 'bad.ndjson');
    await writeNdjson(bad, 1, 'mdx');
    const text = (await readFile(bad, 'utf8')).replace('"5812"', '"58"');
    await writeFile(bad, text);
    await runCliHere(['send', ...FAST, bad], { env: w.env(sim, tokenEnv) });
    expect(lockMode).toBe(0o600);
    expect((await stat(w.ledger)).mode & 0o777).toBe(0o600);
    expect((await stat(w.rejects)).mode & 0o777).toBe(0o600);
  });

  it('no full card number from samples/northwind.csv reaches any output stream or file', async () => {
    const w = await workdir('sec-pan');
    const sample = join(ROOT, 'samples/northwind.csv');
    const lines = (await readFile(sample, 'utf8')).trim().split('\n');
    const col = lines[0]!.split(',').indexOf('CARD_NUMBER');
    const pans = lines
      .slice(1)
      .map((l) => l.split(',')[col]!.replace(/[ -]/g, ''))
      .filter((p) => /^\d{12,19}$/.test(p));
    expect(pans.length).toBeGreaterThan(3);
    sim.reset();
    const r = await runCliHere(['send', ...FAST, '--mapping', 'northwind-csv', sample], {
      env: w.env(sim, tokenEnv),
    });
    expect([0, 2]).toContain(r.code);
    const texts = [r.stdout, r.stderr];
    for (const f of [w.ledger, w.rejects].filter(existsSync)) texts.push(await readFile(f, 'utf8'));
    // Digits only: a PAN written with spaces or dashes is caught too.
    const digits = texts.map((t) => t.replace(/[ -]/g, ''));
    for (const pan of pans) for (const t of digits) expect(t.includes(pan), pan.slice(0, 6)).toBe(false);
    report('security: PAN grep (northwind sample)', { pans: pans.length, exit: r.code, found: 0 });
  });
});
