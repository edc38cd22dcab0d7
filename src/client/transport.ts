// The one ky instance of a client: base URL, timeout, user agent, no retry, and beneath it a fetch on an undici Agent
// (keep-alive, the connection cap, mTLS).

import { createRequire } from 'node:module';
import type { KyInstance } from 'ky';
import type Agent from 'undici/lib/dispatcher/agent.js';
import { readTlsPassphrase } from '../config/secret.ts';
import { FILE_CAPS, readSmallBytes } from '../config/small-file.ts';
import type { Config } from '../config/types.ts';
import { SvcIngestError } from '../errors.ts';
import { holdParserTierUp } from '../runtime/parser-tier.ts';
import { dispatcherFetch } from './dispatch-fetch.ts';

/**
 * HTTP plumbing shared by all endpoints of one client. The ky instance (and the Agent beneath it) is made on first use.
 * @example const t = createTransport(cfg, { connections: 8 }); await t.ky.get('v2/…'); await t.close()
 */
export interface Transport {
  ky: KyInstance;
  /** The service's base URL, as the configuration gives it (no trailing slash): ky's prefix, and where calls go. */
  readonly prefix: string;
  /**
   * The fetch beneath ky takes our own options (PREPARED_BODY, EXCHANGE_SIGNAL of dispatch-fetch.ts): true for the
   * undici-backed fetch, false for a fetch given in options unless it says it takes them.
   */
  ownOptions: boolean;
  close(): Promise<void>;
}

export interface TransportOptions {
  /** Cap on sockets per origin (send sizes it to its concurrency). Default: send.concurrency + 2. */
  connections?: number;
  /** Replaces the undici-backed fetch (no Agent is created then). */
  fetch?: typeof fetch;
  /** The fetch given takes PREPARED_BODY and EXCHANGE_SIGNAL (as dispatcherFetch does). Default: false. */
  fetchTakesOwnOptions?: boolean;
}

/** Headers every call of the client sends (auth, institution): set once here, so ky does not merge them per call. */
export type ConstantHeaders = Record<string, string>;

function readTlsFile(path: string, key: string): Buffer {
  try {
    return readSmallBytes(path, FILE_CAPS.pem);
  } catch (err) {
    throw new SvcIngestError(
      'CONFIG_INVALID',
      `config key ${key}: cannot read ${path}: ${(err as Error).message}`,
      {
        field: key,
      },
    );
  }
}

const require = createRequire(import.meta.url);

/**
 * ky and undici's Agent, loaded on the first request, not at start: with Node's own fetch classes beneath ky (its
 * module reads them when it loads) they cost ~50 ms of CPU, which a run that stops before its first request (a
 * refused configuration, a mapping or an input that cannot be read, a locked ledger) need not pay. require() loads
 * the ES module ky at once, so the transport's interface stays synchronous.
 * @example kyModule().isHTTPError(err)
 */
export function kyModule(): typeof import('ky') {
  return require('ky') as typeof import('ky');
}

/**
 * Node's own undici, when it is of the major version the client is written for (dispatch-fetch.ts's handler API):
 * its Agent class. Node loads that undici for the fetch classes ky uses (globalThis.Request, which ky's module reads
 * as it loads), and its global dispatcher, set as it loads, is one of its Agents. Taking that class spares loading
 * the npm package's Agent as well (its ~20 modules, ~20 ms of CPU a start: docs/performance.md, "Start-up").
 */
function nodeAgentClass(): typeof Agent | undefined {
  if (process.versions.undici?.split('.')[0] !== '7') return undefined;
  void globalThis.Request;
  const ctor = (globalThis as Record<symbol, { constructor?: unknown } | undefined>)[
    Symbol.for('undici.globalDispatcher.1')
  ]?.constructor;
  return typeof ctor === 'function' &&
    ctor.name === 'Agent' &&
    typeof (ctor.prototype as { dispatch?: unknown }).dispatch === 'function'
    ? (ctor as typeof Agent)
    : undefined;
}

/**
 * Node's own Agent class (above), else the npm package's Agent module, not undici's index: the index loads all of
 * undici (fetch, WebSocket, cache, mocks; ~110 modules, ~70 ms of CPU), of which the client uses the Agent alone
 * (src/types/undici-agent.d.ts).
 */
function agentClass(): typeof Agent {
  return nodeAgentClass() ?? (require('undici/lib/dispatcher/agent.js') as typeof Agent);
}

/** The mutual-TLS material, read when the client is made: a file that cannot be read is refused before any work. */
function tlsMaterial(config: Config): Record<string, unknown> {
  const { certFile, keyFile, caFile } = config.tls;
  const connect: Record<string, unknown> = {};
  if (certFile) connect.cert = readTlsFile(certFile, 'tls.certFile');
  if (keyFile) connect.key = readTlsFile(keyFile, 'tls.keyFile');
  if (caFile) connect.ca = readTlsFile(caFile, 'tls.caFile');
  const passphrase = readTlsPassphrase(config);
  if (passphrase) connect.passphrase = passphrase;
  return connect;
}

/** Builds the undici Agent with keep-alive, the connection cap and the mutual-TLS material. */
function newAgent(connect: Record<string, unknown>, connections: number): Agent {
  const UndiciAgent = agentClass();
  return new UndiciAgent({ connections, keepAliveTimeout: 10_000, keepAliveMaxTimeout: 60_000, connect });
}

/**
 * Refuses to talk to the service when NODE_TLS_REJECT_UNAUTHORIZED=0 is set: Node then accepts any certificate, so
 * anyone on the network path could read the batches and the token. (For a private CA, set tls.caFile.)
 * @example checkTlsVerification(process.env) // throws CONFIG_INVALID when the variable is '0'
 */
export function checkTlsVerification(env: NodeJS.ProcessEnv = process.env): void {
  if (env.NODE_TLS_REJECT_UNAUTHORIZED === '0') {
    throw new SvcIngestError(
      'CONFIG_INVALID',
      'NODE_TLS_REJECT_UNAUTHORIZED=0 is set, which turns off TLS certificate verification; svc-ingest does not talk to the service with it (unset it; for a private CA set tls.caFile)',
      { field: 'NODE_TLS_REJECT_UNAUTHORIZED' },
    );
  }
}

export function createTransport(
  config: Config,
  opts: TransportOptions = {},
  constant: ConstantHeaders = {},
): Transport {
  checkTlsVerification();
  const prefix = config.baseUrl;
  const connect = opts.fetch ? null : tlsMaterial(config);
  const connections = opts.connections ?? config.send.concurrency + 2;
  let agent: Agent | undefined;
  let instance: KyInstance | undefined;
  const headers: Record<string, string> = {
    'user-agent': config.userAgent,
    accept: 'application/json',
    ...constant,
  };
  let budgetBack = (): void => {};
  function build(): KyInstance {
    let fetchImpl: typeof fetch;
    const kyLib = kyModule();
    if (connect === null) {
      fetchImpl = opts.fetch as typeof fetch;
    } else {
      agent = newAgent(connect, connections);
      // One undici dispatch per call on the Agent; redirects are never followed (see dispatcherFetch): a 3xx comes
      // back as it came, so the batch, the auth header and the card data never go to a host we were not configured for.
      fetchImpl = dispatcherFetch(agent);
      // Every module the first connection needs is loaded before the parser's budget is raised (src/runtime/parser-tier.ts).
      if (prefix.startsWith('https:')) require('node:tls');
      budgetBack = holdParserTierUp(agent);
    }
    return kyLib.default.create({
      prefix,
      retry: 0,
      timeout: config.timeoutMs,
      throwHttpErrors: true,
      headers,
      fetch: fetchImpl,
      redirect: 'manual',
    });
  }
  return {
    prefix,
    get ky() {
      instance ??= build();
      return instance;
    },
    ownOptions: connect !== null || opts.fetchTakesOwnOptions === true,
    async close() {
      budgetBack();
      await agent?.close();
    },
  };
}
