// What the environment may not do: NODE_TLS_REJECT_UNAUTHORIZED=0 is refused by every command that talks to the
// service, and the session command sees only PATH, HOME, SVC_CUSTOMER_ID and the allow-list, not our other secrets.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, runCliHere } from '../helpers/cli.ts';
import { useSimulator } from '../helpers/simulator.ts';
import { STACK, summary, workdir, writeNdjson } from './helpers.ts';

const sim = useSimulator({ seed: 17 }, 'reset');

describe('environment', () => {
  // A child: the transport reads NODE_TLS_REJECT_UNAUTHORIZED from the process's own environment.
  it('NODE_TLS_REJECT_UNAUTHORIZED=0: send and redemptions refuse to start (exit 1, one line); a dry run still works', async () => {
    const w = await workdir('env-tls');
    const file = join(w.dir, 'in.ndjson');
    await writeNdjson(file, 10, 'nt');
    const env = w.env(sim, { NODE_TLS_REJECT_UNAUTHORIZED: '0' });
    for (const args of [
      ['send', '--json', file],
      ['redemptions', '--customer', 'cust-0001', '--base-url', sim.url],
    ]) {
      const r = await runCli(args, { env });
      expect(r.code, args[0]).toBe(1);
      // With --json the error object is on stdout; without, nothing is.
      if (args.includes('--json'))
        expect(JSON.parse(r.stdout)).toMatchObject({ error: { code: 'CONFIG_INVALID' } });
      else expect(r.stdout).toBe('');
      const lines = r.stderr.trim().split('\n');
      expect(lines, r.stderr).toHaveLength(1);
      expect(lines[0]).toMatch(/^svc-ingest: CONFIG_INVALID: NODE_TLS_REJECT_UNAUTHORIZED=0 is set/);
      expect(r.stderr).not.toMatch(STACK);
    }
    expect(sim.stats().requests.total + sim.stats().requests.preflight).toBe(0);
    const dry = await runCli(['send', '--json', '--dry-run', file], { env });
    expect(dry.code, dry.stderr).toBe(0);
    expect(summary(dry)).toMatchObject({ read: 10, batched: 10 });
    // Any other value leaves verification on, as Node does.
    const on = await runCli(['send', '--json', file], { env: { ...env, NODE_TLS_REJECT_UNAUTHORIZED: '1' } });
    expect(on.code, on.stderr).toBe(0);
  });

  it('the session command gets PATH, HOME, SVC_CUSTOMER_ID and session.commandEnv only', async () => {
    const w = await workdir('env-cmd');
    const seen = join(w.dir, 'env.json');
    const script = join(w.dir, 'token.mjs');
    await writeFile(
      script,
      `import { writeFileSync } from 'node:fs';
writeFileSync(${JSON.stringify(seen)}, JSON.stringify(process.env));
const r = await fetch(process.env.SIM_URL + '/v2/session/startSession', { method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ sourceCustomerId: process.env.SVC_CUSTOMER_ID, scopes: [], organizationId: 'o' }) });
process.stdout.write((await r.json()).sessionToken);`,
    );
    const r = await runCliHere(['redemptions', '--customer', 'cust-0003', '--json', '--base-url', sim.url], {
      env: {
        SVC_SESSION_PROVIDER: 'command',
        SVC_SESSION_COMMAND: `"${process.execPath}" "${script}"`,
        SVC_SESSION_COMMAND_ENV: 'SIM_URL',
        SIM_URL: sim.url,
        PARTNER_TOKEN: 'tok-other-secret-99',
        SVC_AUTH_TOKEN_ENV: 'PARTNER_TOKEN',
      },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(Array.isArray(JSON.parse(r.stdout).redemptions)).toBe(true);
    const env = JSON.parse(await readFile(seen, 'utf8')) as Record<string, string>;
    expect(env.SVC_CUSTOMER_ID).toBe('cust-0003');
    expect(env.SIM_URL).toBe(sim.url);
    expect(env.PATH).toBe(process.env.PATH);
    // Only what the shell itself adds besides the four.
    const extra = Object.keys(env).filter((k) => !['PATH', 'HOME', 'SVC_CUSTOMER_ID', 'SIM_URL'].includes(k));
    for (const k of extra) expect(['PWD', 'SHLVL', '_', 'OLDPWD'], k).toContain(k);
    expect(JSON.stringify(env)).not.toContain('tok-other-secret-99');
  });
});
