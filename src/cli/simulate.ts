// `svc-ingest simulate`: run the embedded service simulator on loopback until SIGINT/SIGTERM; its URL is stdout's first line.

import type { Command } from 'commander';
import { FILE_CAPS, readSmallFile, SmallFileError } from '../config/small-file.ts';
import { SvcIngestError } from '../errors.ts';
import { cliIo } from '../io.ts';
import { createLogger } from '../log.ts';
import type { SimulatorOptions } from '../simulator/index.ts';
import { addExamples, isLoopbackBind } from './common.ts';

/** Env variable holding the bearer token `--require-token` demands (never on the command line: argv is public). */
export const SIM_TOKEN_ENV = 'SVC_SIM_TOKEN';
/** Env variable holding the secret the simulator signs its webhook POSTs with, when set. */
export const SIM_WEBHOOK_SECRET_ENV = 'SVC_SIM_WEBHOOK_SECRET';

/**
 * Raw flag values as commander hands them over (all strings until checked).
 * @example { port: '0', seed: '1', failRate: '0.1', poison: 'tx-1,tx-2' }
 */
export interface SimulateFlags {
  port: string;
  host: string;
  seed: string;
  latencyMs: string;
  jitterMs: string;
  failRate: string;
  failFirst: string;
  resetRate: string;
  hangRate: string;
  rate429: string;
  retryAfterS: string;
  poison?: string;
  dropTicketCreates: string;
  webhookUrl?: string;
  ticketDelayMs: string;
  sessionTtlMs: string;
  requireToken?: boolean;
  strictCodes?: boolean;
  stateEverywhere?: boolean;
  allowRemote?: boolean;
  tlsCert?: string;
  tlsKey?: string;
  tlsCa?: string;
  tlsRequestCert?: boolean;
  logLevel: string;
}

function usage(message: string): SvcIngestError {
  return new SvcIngestError('USAGE_INVALID', message);
}

function int(flag: string, raw: string, min: number, max: number): number {
  const n = /^-?\d+$/.test(raw.trim()) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw usage(`${flag}: expected an integer from ${min} to ${max}, got "${raw}"`);
  }
  return n;
}

function rate(flag: string, raw: string): number {
  const n = /^\s*(\d+(\.\d*)?|\.\d+)\s*$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(n >= 0 && n <= 1)) throw usage(`${flag}: expected a fraction from 0 to 1, got "${raw}"`);
  return n;
}

function readPem(flag: string, path: string): string {
  try {
    return readSmallFile(path, FILE_CAPS.pem);
  } catch (err) {
    const why = err instanceof SmallFileError ? err.reason : ((err as NodeJS.ErrnoException).code ?? 'error');
    throw usage(`${flag}: cannot read "${path}" (${why})`);
  }
}

/**
 * Turn the flags (and the two env variables SVC_SIM_TOKEN, SVC_SIM_WEBHOOK_SECRET) into SimulatorOptions,
 * checking each with a one-line message naming the flag.
 */
export function simulatorOptionsFromFlags(
  f: SimulateFlags,
  env: NodeJS.ProcessEnv = cliIo().env,
): SimulatorOptions {
  const o: SimulatorOptions = {
    port: int('--port', f.port, 0, 65_535),
    host: f.host,
    seed: int('--seed', f.seed, -(2 ** 31), 2 ** 31 - 1),
    latencyMs: int('--latency-ms', f.latencyMs, 0, 600_000),
    jitterMs: int('--jitter-ms', f.jitterMs, 0, 600_000),
    failRate: rate('--fail-rate', f.failRate),
    failFirst: int('--fail-first', f.failFirst, 0, 1_000),
    resetRate: rate('--reset-rate', f.resetRate),
    hangRate: rate('--hang-rate', f.hangRate),
    rate429: rate('--rate429', f.rate429),
    retryAfterS: int('--retry-after-s', f.retryAfterS, 0, 86_400),
    ticketDelayMs: int('--ticket-delay-ms', f.ticketDelayMs, 0, 3_600_000),
    dropTicketCreates: int('--drop-ticket-creates', f.dropTicketCreates, 0, 1_000),
    sessionTtlMs: int('--session-ttl-ms', f.sessionTtlMs, 1, 2 ** 31 - 1),
  };
  if (f.host.trim() === '') throw usage('--host: expected a host name or address, got ""');
  // Its /__sim/* control endpoints have no authentication: reachable from other machines only when asked for.
  if (!isLoopbackBind(f.host) && !f.allowRemote) {
    throw usage(
      `--host ${f.host} is not a loopback address; the simulator's /__sim/* control endpoints are unauthenticated, so listening there needs --allow-remote`,
    );
  }
  if (f.poison !== undefined) {
    const ids = f.poison.split(',').map((s) => s.trim());
    if (ids.some((s) => s === ''))
      throw usage(`--poison: expected comma-separated transactionIds, got "${f.poison}"`);
    o.poison = ids;
  }
  if (f.webhookUrl !== undefined) {
    let ok = false;
    try {
      ok = ['http:', 'https:'].includes(new URL(f.webhookUrl).protocol);
    } catch {}
    if (!ok) throw usage(`--webhook-url: expected an http(s) URL, got "${f.webhookUrl}"`);
    o.webhookUrl = f.webhookUrl;
  }
  if (f.strictCodes) o.strictCodes = true;
  if (f.stateEverywhere) o.stateEverywhere = true;
  if (f.requireToken) {
    const token = env[SIM_TOKEN_ENV];
    if (token === undefined || token === '') {
      throw usage(`--require-token: the token comes from env ${SIM_TOKEN_ENV}, which is not set or empty`);
    }
    o.requireToken = token;
  }
  const secret = env[SIM_WEBHOOK_SECRET_ENV];
  if (secret !== undefined && secret !== '') o.webhookSecret = secret;
  if (f.tlsCert !== undefined || f.tlsKey !== undefined) {
    if (f.tlsCert === undefined || f.tlsKey === undefined)
      throw usage('--tls-cert and --tls-key go together');
    o.tls = { cert: readPem('--tls-cert', f.tlsCert), key: readPem('--tls-key', f.tlsKey) };
    if (f.tlsCa !== undefined) o.tls.ca = readPem('--tls-ca', f.tlsCa);
    if (f.tlsRequestCert) o.tls.requestCert = true;
  } else if (f.tlsCa !== undefined || f.tlsRequestCert) {
    throw usage('--tls-ca and --tls-request-cert need --tls-cert and --tls-key');
  }
  return o;
}

export async function runSimulate(flags: SimulateFlags): Promise<void> {
  const options = simulatorOptionsFromFlags(flags);
  const logger = createLogger({ level: flags.logLevel });
  // Handlers go on before the URL is printed: whoever reads the URL may signal us at once.
  const stop = new Promise<NodeJS.Signals>((resolve) => {
    const off = cliIo().onSignal((sig) => {
      off();
      resolve(sig);
    });
  });
  const { startSimulator } = await import('../simulator/index.ts');
  const sim = await startSimulator({
    ...options,
    // Nothing outside this process can read transactions() back: keeping copies would only cost memory and GC.
    keepTransactions: 0,
    log: (event, fields) => {
      if (event === 'webhook.failed' || event === 'simulator.error') logger.warn(fields, event);
      else logger.info(fields, event);
    },
  });
  cliIo().stdout.write(`${sim.url}\n`);
  const signal = await stop;
  logger.info({ signal, stats: sim.stats() }, 'simulator.stopping');
  await sim.close();
}

export function define(program: Command): void {
  const cmd = program
    .command('simulate')
    .description('Run the embedded simulator of the whole service on loopback until SIGINT/SIGTERM.')
    .addHelpText(
      'after',
      [
        '',
        'Prints the base URL as the first line of stdout; logs go to stderr. Faults hit POST /v2/data/transactions.',
        'Control API: GET /__sim/stats, GET /__sim/deliveries (NDJSON), POST /__sim/faults (JSON of fault',
        'options, e.g. {"failRate":0.2,"poison":["t-9"]}), POST /__sim/reset.',
        `Env: ${SIM_TOKEN_ENV} (the token --require-token demands), ${SIM_WEBHOOK_SECRET_ENV} (when set, webhook POSTs are`,
        'signed: X-SVC-Timestamp and X-SVC-Signature: v1=<hex HMAC-SHA256 of "<timestamp>.<body>">).',
      ].join('\n'),
    )
    .option('--port <n>', 'TCP port; 0 picks a free one', '0')
    .option('--host <addr>', 'address to listen on; off loopback it needs allow-remote', '127.0.0.1')
    .option(
      '--allow-remote',
      'allow listening off loopback (its /__sim/* control API is unauthenticated; default: off)',
    )
    .option('--seed <n>', 'seed of all data, ids and fault draws', '1')
    .option('--latency-ms <ms>', 'answer every request this long after it arrived', '0')
    .option('--jitter-ms <ms>', 'plus a uniform random 0..ms', '0')
    .option('--fail-rate <fraction>', 'fraction of transaction requests answered 500', '0')
    .option('--fail-first <k>', 'answer 500 to the first K attempts of each distinct batch', '0')
    .option('--reset-rate <fraction>', 'fraction of transaction requests whose connection is reset', '0')
    .option('--hang-rate <fraction>', 'fraction of transaction requests never answered', '0')
    .option('--rate429 <fraction>', 'fraction of transaction requests answered 429 with Retry-After', '0')
    .option('--retry-after-s <s>', 'Retry-After seconds of a 429', '1')
    .option(
      '--poison <ids>',
      'comma-separated transactionIds; a batch holding one always gets 500 (default: none)',
    )
    .option(
      '--webhook-url <url>',
      'where ticket updates are POSTed (default: none; the lifecycle still runs)',
    )
    .option(
      '--strict-codes',
      "refuse (400) a code field's value outside docs/mapping.md's code lists (e.g. ECOM for ECOMMERCE)",
    )
    .option(
      '--state-everywhere',
      "require every merchant's state, as the documented list says (default: only where the country has states: US, CA, AU)",
    )
    .option('--ticket-delay-ms <ms>', 'delay before each ticket webhook update', '100')
    .option(
      '--drop-ticket-creates <k>',
      'the first K ticket creates are taken (202) but the answer is lost (connection reset): the partner resubmits',
      '0',
    )
    .option('--session-ttl-ms <ms>', 'lifetime of session tokens', '3600000')
    .option(
      '--require-token',
      `demand Authorization: Bearer <token> on every endpoint except startSession; the token comes from env ${SIM_TOKEN_ENV}, never argv (default: off)`,
    )
    .option('--tls-cert <file>', 'serve https with this PEM certificate (with --tls-key; default: http)')
    .option('--tls-key <file>', 'PEM private key for --tls-cert')
    .option('--tls-ca <file>', 'PEM CA bundle for client certificates (default: none)')
    .option('--tls-request-cert', 'demand a client certificate signed by --tls-ca (mutual TLS; default: off)')
    .option('--log-level <level>', 'log level on stderr', 'info');
  addExamples(cmd, [
    ['svc-ingest simulate --port 8080', 'a healthy service on http://127.0.0.1:8080'],
    [
      'svc-ingest simulate --port 8080 --fail-rate 0.2 --latency-ms 50',
      'one request in five fails, 50 ms each',
    ],
    [
      'svc-ingest simulate --port 0 --poison t-9 --seed 7 | head -1',
      'any free port; the URL is the first line',
    ],
    ['SVC_SIM_TOKEN=… svc-ingest simulate --require-token', 'demands that bearer token (never on argv)'],
    [
      'SVC_SIM_WEBHOOK_SECRET=… svc-ingest simulate --webhook-url http://127.0.0.1:8081/webhook',
      'signs each ticket update it POSTs',
    ],
  ]).action(async (flags: SimulateFlags) => {
    await runSimulate(flags);
  });
}
