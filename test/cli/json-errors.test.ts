// A --json run that cannot run at all still answers in JSON: exactly one {"error":{code,message}} object on
// stdout, the human line on stderr, exit 1; without --json stdout stays empty.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { type CliResult, runCliHere, sendEnv } from '../helpers/cli.ts';
import { useSimulator } from '../helpers/simulator.ts';

const sim = useSimulator({ seed: 3 });
let dir: string;
const env = () => sendEnv(sim.url, dir);

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'svc-json-err-'));
});

/** stdout holds exactly one line, a JSON object with only `error: {code, message}`. */
function jsonError(r: CliResult): { code: string; message: string } {
  const lines = r.stdout.split('\n').filter((l) => l !== '');
  expect(lines, r.stdout).toHaveLength(1);
  const body = JSON.parse(lines[0]!);
  expect(Object.keys(body)).toEqual(['error']);
  expect(Object.keys(body.error).sort()).toEqual(['code', 'message']);
  return body.error;
}

describe('--json failures are JSON', () => {
  it('send: a missing input, bad config, an unknown option', async () => {
    const missing = await runCliHere(['send', '--json', join(dir, 'nope.csv')], { env: env() });
    expect(missing.code).toBe(1);
    expect(jsonError(missing)).toEqual({
      code: 'INPUT_UNREADABLE',
      message: `cannot read ${join(dir, 'nope.csv')}: no such file`,
    });
    expect(missing.stderr.trim()).toBe(
      `svc-ingest: INPUT_UNREADABLE: cannot read ${join(dir, 'nope.csv')}: no such file`,
    );

    const config = await runCliHere(['send', '--json', '--concurrency', '0', '-'], { env: env(), input: '' });
    expect(config.code).toBe(1);
    expect(jsonError(config)).toMatchObject({ code: 'CONFIG_INVALID' });
    expect(jsonError(config).message).toMatch(/send\.concurrency \(from flag --concurrency\)/);

    const usage = await runCliHere(['send', '--json', '--no-such-flag'], { env: env() });
    expect(usage.code).toBe(1);
    expect(jsonError(usage)).toEqual({ code: 'USAGE_INVALID', message: "unknown option '--no-such-flag'" });
    expect(usage.stderr).toMatch(/unknown option '--no-such-flag'/);
  });

  it('send: no card number in the JSON error either', async () => {
    // A folder named by letters: the random temporary name may end in digits, which would join the number.
    const r = await runCliHere(['send', '--json', join(dir, 'cards', '4111111111111111.csv')], {
      env: env(),
    });
    expect(r.code).toBe(1);
    const err = jsonError(r);
    expect(r.stdout + r.stderr).not.toContain('4111111111111111');
    expect(err.message).toMatch(/411111\*+1111\.csv/);
  });

  it('redemptions and stores: a refusal before sending and an error from the service', async () => {
    const limit = await runCliHere(
      ['redemptions', '--json', '--customer', 'cust-0001', '--lookback-days', '397'],
      {
        env: env(),
      },
    );
    expect(limit.code).toBe(1);
    expect(jsonError(limit)).toMatchObject({ code: 'SEND_LIMIT' });

    const stores = await runCliHere(['stores', '--json', '--ad', '100001', '--radius', '5000'], {
      env: env(),
    });
    expect(stores.code).toBe(1);
    expect(jsonError(stores)).toEqual({
      code: 'USAGE_INVALID',
      message: 'give --lat and --lon, or --postal-code',
    });

    const ticket = await runCliHere(['tickets', 'get', 'NO-SUCH-TICKET', '--json'], { env: env() });
    expect(ticket.code).toBe(1);
    expect(jsonError(ticket).code).toMatch(/^SEND_/);
  });

  it('without --json a failure leaves stdout empty', async () => {
    const r = await runCliHere(['send', join(dir, 'nope.csv')], { env: env() });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
  });

  it('an argument after -- that reads --json does not switch JSON on', async () => {
    const r = await runCliHere(['send', '--', '--json'], { env: env() });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
  });
});
