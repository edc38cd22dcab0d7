// Session tokens for redemptions: providers (startSession, static, command) and a per-customer cache by JWT expiry.

import { execFile } from 'node:child_process';
import { checkHeaderValue, readStaticSessionToken } from '../config/secret.ts';
import type { Config } from '../config/types.ts';
import { SvcIngestError } from '../errors.ts';
import { cliIo } from '../io.ts';
import type { Logger } from '../log.ts';

/**
 * Where session tokens come from.
 * @example const token = await provider.start('cust-1')
 */
export interface SessionProvider {
  readonly kind: Config['session']['provider'];
  /** A fresh token for the customer. */
  start(sourceCustomerId: string): Promise<string>;
}

/**
 * Per-customer token cache: a token is reused until `refreshBeforeMs` before the `exp` in its JWT payload.
 * Concurrent callers for one customer share one start.
 * @example const token = await sessions.get('cust-1'); sessions.drop('cust-1') // after a 401
 */
export interface SessionCache {
  get(sourceCustomerId: string): Promise<string>;
  /** Starts a new session now (replacing any cached token). */
  renew(sourceCustomerId: string): Promise<string>;
  drop(sourceCustomerId: string): void;
}

/**
 * The expiry of a JWT (ms since epoch) from its unverified payload, or undefined if there is none.
 * @example jwtExpiryMs(token) // 1795310000000
 */
export function jwtExpiryMs(token: string): number | undefined {
  const part = token.split('.')[1];
  if (!part) return undefined;
  try {
    const payload = JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>;
    for (const key of ['exp', 'expiresAt', 'expiry']) {
      const v = payload[key];
      if (typeof v === 'number' && Number.isFinite(v)) return v > 1e12 ? v : v * 1000;
      if (typeof v === 'string' && !Number.isNaN(Date.parse(v))) return Date.parse(v);
    }
  } catch {
    return undefined;
  }
  return undefined;
}

/** Variables every session command gets (when set), besides SVC_CUSTOMER_ID. */
const BASE_COMMAND_ENV = ['PATH', 'HOME'];

/**
 * The environment of the session command: PATH, HOME and the names in `allow` (session.commandEnv) as they are
 * set in ours, and SVC_CUSTOMER_ID. Nothing else: our environment may hold other secrets.
 * @example commandEnv('cust-1', ['VAULT_ADDR'], process.env) // { PATH, HOME, VAULT_ADDR, SVC_CUSTOMER_ID: 'cust-1' }
 */
export function commandEnv(
  sourceCustomerId: string,
  allow: readonly string[],
  env: NodeJS.ProcessEnv = cliIo().env,
): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const name of [...BASE_COMMAND_ENV, ...allow]) {
    const v = env[name];
    if (v !== undefined) out[name] = v;
  }
  out.SVC_CUSTOMER_ID = sourceCustomerId;
  return out;
}

/**
 * Provider that runs a shell command with a reduced environment (see commandEnv) and reads the token from its
 * stdout. A token with a control character is refused.
 */
export function commandProvider(
  command: string,
  timeoutMs: number,
  allowEnv: readonly string[] = [],
): SessionProvider {
  return {
    kind: 'command',
    start: (sourceCustomerId) =>
      new Promise((resolve, reject) => {
        execFile(
          '/bin/sh',
          ['-c', command],
          {
            env: commandEnv(sourceCustomerId, allowEnv),
            timeout: timeoutMs,
            maxBuffer: 1 << 20,
          },
          (err, stdout) => {
            // Neither stdout nor stderr goes into the message: they may hold the token.
            if (err) {
              const how = err.killed ? 'was killed (timeout?)' : `exited with ${err.code ?? 'an error'}`;
              reject(
                new SvcIngestError('SEND_SESSION', `session command ${how}`, { field: 'session.command' }),
              );
              return;
            }
            const token = String(stdout).trim();
            if (token === '') {
              reject(
                new SvcIngestError('SEND_SESSION', 'session command printed no token', {
                  field: 'session.command',
                }),
              );
              return;
            }
            try {
              checkHeaderValue(token, 'the session token printed by session.command', 'SEND_SESSION');
            } catch (e) {
              reject(e);
              return;
            }
            resolve(token);
          },
        );
      }),
  };
}

/** Provider that returns the same token (from env session.tokenEnv) for every customer. */
export function staticProvider(cfg: Config, env: NodeJS.ProcessEnv = cliIo().env): SessionProvider {
  return {
    kind: 'static',
    start: async () => {
      try {
        return readStaticSessionToken(cfg, env);
      } catch (err) {
        // readStaticSessionToken's messages name the source, never the value.
        throw new SvcIngestError('SEND_SESSION', (err as Error).message, { field: 'session.tokenEnv' });
      }
    },
  };
}

/** A cache in front of a provider. */
export function createSessionCache(
  provider: SessionProvider,
  opts: { refreshBeforeMs: number; logger?: Logger; now?: () => number },
): SessionCache {
  const now = opts.now ?? Date.now;
  const cache = new Map<string, { token: Promise<string>; refreshAt: number }>();
  const renew = (id: string): Promise<string> => {
    const token = provider.start(id);
    const entry = { token, refreshAt: Number.POSITIVE_INFINITY };
    cache.set(id, entry);
    token.then(
      (t) => {
        const exp = jwtExpiryMs(t);
        entry.refreshAt = exp === undefined ? Number.POSITIVE_INFINITY : exp - opts.refreshBeforeMs;
        opts.logger?.debug(
          { provider: provider.kind, expiresAt: exp ? new Date(exp).toISOString() : null },
          'session.started',
        );
      },
      () => {
        if (cache.get(id) === entry) cache.delete(id);
      },
    );
    return token;
  };
  return {
    get(id) {
      const entry = cache.get(id);
      if (entry && now() < entry.refreshAt) return entry.token;
      return renew(id);
    },
    renew,
    drop(id) {
      cache.delete(id);
    },
  };
}
