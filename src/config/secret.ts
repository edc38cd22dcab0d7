// Reads secrets named by the configuration (auth token, TLS passphrase); they are never logged.
import { readFileSync } from 'node:fs';
import { SvcIngestError } from '../errors.ts';
import type { Config } from './types.ts';

function fromEnv(name: string, key: string, env: NodeJS.ProcessEnv): string {
  const v = env[name];
  if (v === undefined || v.trim() === '') {
    throw new SvcIngestError(
      'CONFIG_INVALID',
      `config key ${key} names env ${name}, which is not set or empty`,
      {
        field: key,
      },
    );
  }
  return v.trim();
}

/**
 * The auth token: from the env variable named by auth.tokenEnv, or the file auth.tokenFile (trimmed);
 * undefined when neither is configured (no auth header is sent).
 * @example readSecret(cfg) // 'eyJhbGciOi…'
 */
export function readSecret(cfg: Config, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (cfg.auth.tokenEnv) return fromEnv(cfg.auth.tokenEnv, 'auth.tokenEnv', env);
  if (cfg.auth.tokenFile) {
    let text: string;
    try {
      text = readFileSync(cfg.auth.tokenFile, 'utf8').trim();
    } catch (err) {
      throw new SvcIngestError(
        'CONFIG_INVALID',
        `config key auth.tokenFile: cannot read ${cfg.auth.tokenFile}`,
        {
          field: 'auth.tokenFile',
          cause: (err as Error).message,
        },
      );
    }
    if (text === '') {
      throw new SvcIngestError(
        'CONFIG_INVALID',
        `config key auth.tokenFile: ${cfg.auth.tokenFile} is empty`,
        {
          field: 'auth.tokenFile',
        },
      );
    }
    return text;
  }
  return undefined;
}

/** The TLS key passphrase from the env variable named by tls.passphraseEnv, if configured. */
export function readTlsPassphrase(cfg: Config, env: NodeJS.ProcessEnv = process.env): string | undefined {
  return cfg.tls.passphraseEnv ? fromEnv(cfg.tls.passphraseEnv, 'tls.passphraseEnv', env) : undefined;
}

/** A static session token from the env variable named by session.tokenEnv. */
export function readStaticSessionToken(cfg: Config, env: NodeJS.ProcessEnv = process.env): string {
  return fromEnv(cfg.session.tokenEnv ?? '', 'session.tokenEnv', env);
}
