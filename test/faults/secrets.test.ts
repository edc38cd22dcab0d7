// Secrets with control characters are refused when loaded (a token file with a line break, CR/LF in env, a
// session token from a command or from the service), naming the source and never the value; a secret put where a
// name belongs is never echoed; a header-validation message (which quotes the value) is never copied.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SvcRequestError } from '../../src/client/errors.ts';
import { createClient } from '../../src/client/index.ts';
import { configFor, makeTransactions } from '../client/fixtures.ts';
import { runCliHere } from '../helpers/cli.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { useSimulator } from '../helpers/simulator.ts';
import { STACK, workdir, writeNdjson } from './helpers.ts';

const sim = useSimulator({ seed: 13 }, 'reset');
const JWT = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJzZWNyZXQtdXNlciJ9.c2lnbmF0dXJlLXZhbHVl';

/** Exit 1, exactly one line naming `source`, and none of `secrets` anywhere in the output. */
function expectRefused(
  r: { code: number | null; stdout: string; stderr: string },
  source: RegExp,
  secrets: string[],
) {
  expect(r.code, r.stderr).toBe(1);
  const lines = r.stderr.trim().split('\n');
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(source);
  expect(r.stderr).not.toMatch(STACK);
  for (const s of secrets) {
    expect(r.stderr.includes(s), s).toBe(false);
    expect(r.stdout.includes(s), s).toBe(false);
  }
}

let badSessions: TestServer;
beforeAll(async () => {
  // A service whose startSession answers a token with a header injection in it.
  badSessions = await startTestServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ sessionToken: 'sess-abc\r\nSet-Cookie: stolen=1', requestId: 's-1' }));
  });
});
afterAll(async () => {
  await badSessions?.close();
});

describe('secrets with control characters', () => {
  it('a token file with a line break: refused at start, naming the file, not the token; nothing sent', async () => {
    const w = await workdir('sec-tokfile');
    const file = join(w.dir, 'in.ndjson');
    await writeNdjson(file, 10, 'tf');
    const tokenFile = join(w.dir, 'token');
    await writeFile(tokenFile, 'tok-first-half\ntok-second-half\n');
    const r = await runCliHere(['send', '--json', file], {
      env: w.env(sim, { SVC_AUTH_TOKEN_FILE: tokenFile }),
    });
    expectRefused(
      r,
      /CONFIG_INVALID: the auth token in file .*\/token \(auth\.tokenFile\) contains a control character/,
      ['first-half', 'second-half'],
    );
    expect(r.stderr).toContain(tokenFile);
    expect(sim.stats().requests.total + sim.stats().requests.preflight).toBe(0);
  });

  it('CR/LF in an env token (a header injection): refused naming the variable', async () => {
    const w = await workdir('sec-tokenv');
    const file = join(w.dir, 'in.ndjson');
    await writeNdjson(file, 10, 'te');
    const r = await runCliHere(['send', file], {
      env: w.env(sim, {
        SVC_AUTH_TOKEN_ENV: 'PARTNER_TOKEN',
        PARTNER_TOKEN: 'tok-inj3ct\r\nX-Injected: yes',
      }),
    });
    expectRefused(
      r,
      /the auth token in env PARTNER_TOKEN \(named by auth\.tokenEnv\) contains a control character/,
      ['inj3ct', 'X-Injected'],
    );
    expect(sim.stats().requests.total).toBe(0);
  });

  it('a TLS passphrase and a static session token with control characters are refused the same way', async () => {
    const w = await workdir('sec-pass');
    const file = join(w.dir, 'in.ndjson');
    await writeNdjson(file, 5, 'tp');
    const pass = await runCliHere(['send', file], {
      env: w.env(sim, { SVC_TLS_PASSPHRASE_ENV: 'KEY_PASS', KEY_PASS: 'pass-w0rd\nmore' }),
    });
    expectRefused(pass, /the TLS passphrase in env KEY_PASS \(named by tls\.passphraseEnv\)/, ['w0rd']);
    const stat = await runCliHere(['redemptions', '--customer', 'cust-0001', '--base-url', sim.url], {
      env: { SVC_SESSION_PROVIDER: 'static', SVC_SESSION_TOKEN_ENV: 'SESS', SESS: 'sess-st4tic\r\nx' },
    });
    expectRefused(stat, /the session token in env SESS \(named by session\.tokenEnv\)/, ['st4tic']);
  });

  it('a session token with a line break from the session command, or from startSession, is refused unseen', async () => {
    const fromCommand = await runCliHere(['redemptions', '--customer', 'cust-0001', '--base-url', sim.url], {
      env: { SVC_SESSION_PROVIDER: 'command', SVC_SESSION_COMMAND: "printf 'sess-c0mmand\\nsecond-line'" },
    });
    expectRefused(
      fromCommand,
      /SEND_SESSION: the session token printed by session\.command contains a control/,
      ['c0mmand', 'second-line'],
    );
    expect(sim.stats().requests.byPath['/v2/data/redemptions'] ?? 0).toBe(0);
    const fromService = await runCliHere([
      'redemptions',
      '--customer',
      'cust-0001',
      '--base-url',
      badSessions.url,
    ]);
    expectRefused(
      fromService,
      /SEND_SESSION: the session token answered by startSession contains a control/,
      ['sess-abc', 'stolen'],
    );
    // Only startSession was called: the token never went into a header.
    expect(badSessions.received.map((q) => q.url)).toEqual(['/v2/session/startSession']);
  });

  it('a token where the NAME of a variable or the PATH of a file belongs is never echoed', async () => {
    const w = await workdir('sec-names');
    const file = join(w.dir, 'in.ndjson');
    await writeNdjson(file, 5, 'tn');
    const inEnvName = await runCliHere(['send', file], { env: w.env(sim, { SVC_AUTH_TOKEN_ENV: JWT }) });
    expectRefused(
      inEnvName,
      /config key auth\.tokenEnv \(from env SVC_AUTH_TOKEN_ENV\) is not an environment variable name \(value not shown/,
      [JWT.slice(0, 20), 'c2lnbmF0dXJl'],
    );
    const inFile = await runCliHere(['send', file], { env: w.env(sim, { SVC_AUTH_TOKEN_FILE: JWT }) });
    expectRefused(inFile, /config key auth\.tokenFile \(from env SVC_AUTH_TOKEN_FILE\).*path not shown/, [
      JWT.slice(0, 20),
      'c2lnbmF0dXJl',
    ]);
    // A name that is a name is shown.
    const unset = await runCliHere(['send', file], {
      env: w.env(sim, { SVC_AUTH_TOKEN_ENV: 'NOT_SET_ANYWHERE' }),
    });
    expectRefused(unset, /names env NOT_SET_ANYWHERE, which is not set or empty/, []);
    // Header-bound keys too: a scheme with CR/LF is refused without its value.
    const scheme = await runCliHere(['send', file], {
      env: w.env(sim, { SVC_AUTH_SCHEME: 'Bearer\r\nX-Sch3me: 1' }),
    });
    expectRefused(scheme, /config key auth\.scheme .*printable ASCII.*value not shown/, ['Sch3me']);
  });

  it("a header value that slipped past the checks: Node's validation message (which quotes it) is never copied", async () => {
    const config = configFor(sim.url);
    // Bypass the load-time check on purpose, as a future header might.
    config.institutionId = 'inst-v4lue\r\nX-Injected: 1';
    const client = createClient(config);
    try {
      const err = await client.postTransactions(makeTransactions(1), { requestId: 'h-1' }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(SvcRequestError);
      expect((err as SvcRequestError).code).toBe('SEND_REQUEST');
      expect((err as Error).message).not.toContain('v4lue');
      expect((err as Error).message).not.toContain('X-Injected');
      expect((err as Error).message).toContain('detail not shown');
      expect(sim.stats().requests.total).toBe(0);
    } finally {
      await client.close();
    }
  });
});
