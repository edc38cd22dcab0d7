// Reads secrets named by the configuration (auth token, TLS passphrase, session token, webhook secret) and checks
// them once, when loaded; they are never logged, and no message ever quotes one.
//
// Where a *name* belongs (an env variable, a file path) a secret may be put by mistake, so names are echoed in
// messages only when they look like names:
// - an env variable name: ^[A-Za-z_][A-Za-z0-9_]*$, at most 64 characters;
// - a file path: starts with '/', './', '../' or '~/', at most 255 characters of A-Z a-z 0-9 . _ - / ~.
// Anything else is reported as "not shown".

import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ErrorCode } from '../errors.ts';
import { SvcIngestError } from '../errors.ts';
import { cliIo } from '../io.ts';
import { FILE_CAPS, readSmallFile, SmallFileError } from './small-file.ts';
import type { Config } from './types.ts';

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const PATH_LIKE = /^(\/|\.\/|\.\.\/|~\/)[A-Za-z0-9._\-/~]*$/;

/** Shortest webhook secret accepted (characters). */
export const WEBHOOK_SECRET_MIN = 16;

/**
 * True when the text may be shown as the name of an env variable.
 * @example isEnvName('PARTNER_TOKEN') === true; isEnvName('eyJhbGciOi.x.y') === false
 */
export function isEnvName(name: string): boolean {
  return name.length <= 64 && ENV_NAME.test(name);
}

/**
 * A file path as messages may show it: the path itself when it looks like one (see the header), else a stand-in.
 * @example shownPath('/etc/svc/token') === '/etc/svc/token'; shownPath('eyJhbGciOi…') === '(path not shown: …)'
 */
export function shownPath(path: string): string {
  return path.length <= 255 && PATH_LIKE.test(path)
    ? path
    : '(path not shown: it does not look like one; write it starting with /, ./ or ../ to see it here)';
}

/**
 * Refuses a value that an HTTP header cannot carry safely: a control character (CR, LF, tab, NUL, DEL, C1) or,
 * with `asciiOnly`, anything outside printable ASCII. The message names the source, never the value.
 * @example checkHeaderValue(token, 'env PARTNER_TOKEN (auth.tokenEnv)')
 */
export function checkHeaderValue(
  value: string,
  source: string,
  code: ErrorCode = 'CONFIG_INVALID',
  asciiOnly = true,
): void {
  if (/[\u0000-\u001f\u007f-\u009f]/.test(value)) {
    throw new SvcIngestError(
      code,
      `${source} contains a control character (a line break?); refused (value not shown)`,
    );
  }
  if (asciiOnly && /[^\u0020-\u007e]/.test(value)) {
    throw new SvcIngestError(
      code,
      `${source} contains a character outside printable ASCII, which an HTTP header cannot carry; refused (value not shown)`,
    );
  }
}

function notAName(key: string): SvcIngestError {
  return new SvcIngestError(
    'CONFIG_INVALID',
    `config key ${key} is not an environment variable name (value not shown)`,
    { field: key },
  );
}

function fromEnv(name: string, key: string, env: NodeJS.ProcessEnv): string {
  if (!isEnvName(name)) throw notAName(key);
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

/** A secret file's text, trimmed; `label` names it in messages (default: the config key). */
function fromFile(path: string, key: string, label = `config key ${key}`): string {
  let text: string;
  try {
    text = readSmallFile(path, FILE_CAPS.secret).trim();
  } catch (err) {
    // The fs message quotes the path: only its code, or what is wrong with the file, is kept.
    const code =
      err instanceof SmallFileError ? err.reason : ((err as NodeJS.ErrnoException).code ?? 'error');
    throw new SvcIngestError('CONFIG_INVALID', `${label}: cannot read ${shownPath(path)} (${code})`, {
      field: key,
    });
  }
  if (text === '') {
    throw new SvcIngestError('CONFIG_INVALID', `${label}: ${shownPath(path)} is empty`, {
      field: key,
    });
  }
  return text;
}

/** The credential systemd hands a unit with `LoadCredential=token:…` (systemd 247+: $CREDENTIALS_DIRECTORY/token). */
export const CREDENTIAL_TOKEN = 'token';

/**
 * $CREDENTIALS_DIRECTORY/`name` when systemd set the folder and the unit loaded a credential of that name into it
 * (`LoadCredential=name:…`, systemd 247+; no `%d` specifier needed, which 247–250 cannot resolve); undefined
 * otherwise (no credentials folder, or none of that name: as with nothing configured).
 * @example systemdCredential('ledger-password', process.env) // '/run/credentials/svc-ingest.service/ledger-password'
 */
export function systemdCredential(name: string, env: NodeJS.ProcessEnv): string | undefined {
  const dir = env.CREDENTIALS_DIRECTORY;
  if (!dir) return undefined;
  const path = join(dir, name);
  return existsSync(path) ? path : undefined;
}

const TOKEN_FILE_KEY = 'auth.tokenFile';

/**
 * The auth token: from the env variable named by auth.tokenEnv, or the file auth.tokenFile (trimmed), or else
 * systemd's credential $CREDENTIALS_DIRECTORY/token (a unit's `LoadCredential=token:…`, no specifier needed);
 * undefined when none of them is there (no auth header is sent). A token with a control character is refused.
 * @example readSecret(cfg) // 'eyJhbGciOi…'
 */
export function readSecret(cfg: Config, env: NodeJS.ProcessEnv = cliIo().env): string | undefined {
  if (cfg.auth.tokenEnv) {
    const token = fromEnv(cfg.auth.tokenEnv, 'auth.tokenEnv', env);
    checkHeaderValue(token, `the auth token in env ${cfg.auth.tokenEnv} (named by auth.tokenEnv)`);
    return token;
  }
  const file = cfg.auth.tokenFile;
  if (file) {
    const token = fromFile(file, TOKEN_FILE_KEY);
    checkHeaderValue(token, `the auth token in file ${shownPath(file)} (auth.tokenFile)`);
    return token;
  }
  const credential = systemdCredential(CREDENTIAL_TOKEN, env);
  if (credential) {
    // The credential stands in for the token file: an error names that setting, as for the file.
    const token = fromFile(
      credential,
      TOKEN_FILE_KEY,
      "systemd's credential token (none of auth.tokenEnv, auth.tokenFile set)",
    );
    checkHeaderValue(token, `the auth token in systemd's credential ${shownPath(credential)}`);
    return token;
  }
  return undefined;
}

/** The TLS key passphrase from the env variable named by tls.passphraseEnv, if configured (no control characters). */
export function readTlsPassphrase(cfg: Config, env: NodeJS.ProcessEnv = cliIo().env): string | undefined {
  if (!cfg.tls.passphraseEnv) return undefined;
  const passphrase = fromEnv(cfg.tls.passphraseEnv, 'tls.passphraseEnv', env);
  checkHeaderValue(
    passphrase,
    `the TLS passphrase in env ${cfg.tls.passphraseEnv} (named by tls.passphraseEnv)`,
    'CONFIG_INVALID',
    false,
  );
  return passphrase;
}

/** A static session token from the env variable named by session.tokenEnv (no control characters). */
export function readStaticSessionToken(cfg: Config, env: NodeJS.ProcessEnv = cliIo().env): string {
  const name = cfg.session.tokenEnv ?? '';
  const token = fromEnv(name, 'session.tokenEnv', env);
  checkHeaderValue(token, `the session token in env ${name} (named by session.tokenEnv)`);
  return token;
}

/**
 * The webhook signing secret from the env variable named by webhook.secretEnv or the file webhook.secretFile
 * (trimmed, at least WEBHOOK_SECRET_MIN characters, no control characters); undefined when neither is set.
 * @example readWebhookSecret(cfg) // 'whsec-…'
 */
export function readWebhookSecret(cfg: Config, env: NodeJS.ProcessEnv = cliIo().env): string | undefined {
  const w = cfg.webhook;
  // The setting it comes from: the env variable's name, else the file's path.
  const from = w.secretEnv
    ? { key: 'webhook.secretEnv', name: w.secretEnv, env: true }
    : w.secretFile
      ? { key: 'webhook.secretFile', name: w.secretFile, env: false }
      : undefined;
  if (!from) return undefined;
  const secret = from.env ? fromEnv(from.name, from.key, env) : fromFile(from.name, from.key);
  const source = from.env
    ? `the webhook secret in env ${from.name} (named by ${from.key})`
    : `the webhook secret in file ${shownPath(from.name)} (${from.key})`;
  checkHeaderValue(secret, source, 'CONFIG_INVALID', false);
  if (secret.length < WEBHOOK_SECRET_MIN) {
    throw new SvcIngestError(
      'CONFIG_INVALID',
      `${source} is shorter than ${WEBHOOK_SECRET_MIN} characters; refused (value not shown)`,
      { field: from.key },
    );
  }
  return secret;
}
