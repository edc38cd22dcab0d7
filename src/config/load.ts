// Loads the configuration in layers (defaults, config files, env SVC_*, flags) and validates it once.

import { accessSync, constants } from 'node:fs';
import { SvcIngestError } from '../errors.ts';
import { cliIo } from '../io.ts';
import { refuseTypedCardNumbers } from '../mask/typed.ts';
import { CONFIG_FILE_ENV, CONFIG_KEYS, type KeySpec, type SettingPath } from './schema.ts';
import { isEnvName, shownPath } from './secret.ts';
import { LOG_LEVELS, SESSION_PROVIDERS } from './setting-spec.ts';
import { FILE_CAPS, readSmallFile } from './small-file.ts';
import type { Config, ConfigFlags } from './types.ts';

/** Where a default comes from, as messages name it: the settings table (src/config/schema.ts). */
const DEFAULT_SOURCE = 'the defaults';

/** A value with where it came from, for error messages. */
interface Sourced {
  value: unknown;
  source: string;
  /** True when the value is raw text (env, flag) to be parsed by kind. */
  text: boolean;
}

const KEY_BY_PATH = new Map<string, KeySpec>(CONFIG_KEYS.map((k) => [k.path, k]));
const GROUPS = new Set(CONFIG_KEYS.filter((k) => k.path.includes('.')).map((k) => k.path.split('.')[0]!));

function invalid(path: string, source: string, expected: string, got?: unknown): SvcIngestError {
  const shown = got === undefined ? '' : `, got ${JSON.stringify(got)}`;
  return new SvcIngestError(
    'CONFIG_INVALID',
    `config key ${path} (from ${source}): expected ${expected}${shown}`,
    {
      field: path,
      source,
    },
  );
}

/** A config file's object. */
function readJsonFile(file: string, source: string): Record<string, unknown> {
  let text: string;
  try {
    text = readSmallFile(file, FILE_CAPS.config);
  } catch (err) {
    throw new SvcIngestError(
      'CONFIG_FILE_UNREADABLE',
      `cannot read config file ${file}: ${(err as Error).message}`,
      {
        source,
      },
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new SvcIngestError(
      'CONFIG_INVALID',
      `config file ${file} is not valid JSON: ${(err as Error).message}`,
      {
        source,
      },
    );
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new SvcIngestError(
      'CONFIG_INVALID',
      `config file ${file}: expected a JSON object at the top level`,
      {
        source,
      },
    );
  }
  return parsed as Record<string, unknown>;
}

/** Flattens a config object into dotted leaf paths; unknown keys are an error (typos must not pass silently). */
function flattenFile(obj: Record<string, unknown>, source: string, into: Map<string, Sourced>): void {
  for (const [key, value] of Object.entries(obj)) {
    if (KEY_BY_PATH.has(key)) {
      into.set(key, { value, source, text: false });
    } else if (GROUPS.has(key) && value !== null && typeof value === 'object' && !Array.isArray(value)) {
      for (const [sub, subValue] of Object.entries(value as Record<string, unknown>)) {
        const path = `${key}.${sub}`;
        if (!KEY_BY_PATH.has(path)) throw invalid(path, source, 'a known configuration key (see README)');
        into.set(path, { value: subValue, source, text: false });
      }
    } else if (GROUPS.has(key)) {
      throw invalid(key, source, 'an object', value);
    } else {
      throw invalid(key, source, 'a known configuration key (see README)');
    }
  }
}

function parseValue(spec: KeySpec, s: Sourced): unknown {
  const { value, source } = s;
  const { path } = spec;
  if (value === null || value === undefined) {
    if (spec.optional) return undefined;
    throw invalid(path, source, 'a value');
  }
  switch (spec.kind) {
    case 'int': {
      const n = typeof value === 'string' && s.text && /^\s*-?\d+\s*$/.test(value) ? Number(value) : value;
      const range = `an integer from ${spec.min} to ${spec.max}`;
      if (typeof n !== 'number' || !Number.isInteger(n)) throw invalid(path, source, range, value);
      if ((spec.min !== undefined && n < spec.min) || (spec.max !== undefined && n > spec.max)) {
        throw invalid(path, source, range, value);
      }
      return n;
    }
    case 'bool': {
      if (typeof value === 'boolean') return value;
      if (typeof value === 'string' && s.text) {
        const v = value.trim().toLowerCase();
        if (['true', '1', 'yes', 'on'].includes(v)) return true;
        if (['false', '0', 'no', 'off', ''].includes(v)) return false;
      }
      throw invalid(path, source, 'true or false', value);
    }
    case 'list': {
      let list: string[] | undefined;
      if (typeof value === 'string' && s.text) {
        list = value
          .split(',')
          .map((x) => x.trim())
          .filter((x) => x !== '');
      } else if (Array.isArray(value) && value.every((x) => typeof x === 'string' && x !== '')) {
        list = [...(value as string[])];
      }
      if (list === undefined) {
        // Not echoed for a list of names: a secret may sit where a name belongs.
        const shown = spec.envName ? undefined : value;
        throw invalid(path, source, 'an array of non-empty strings (env/flag: comma-separated)', shown);
      }
      if (spec.envName && !list.every(isEnvName)) throw notEnvNames(path, source);
      return list;
    }
    case 'level': {
      if (typeof value === 'string' && (LOG_LEVELS as readonly string[]).includes(value)) return value;
      throw invalid(path, source, `one of ${LOG_LEVELS.join(', ')}`, value);
    }
    case 'provider': {
      if (typeof value === 'string' && (SESSION_PROVIDERS as readonly string[]).includes(value)) return value;
      throw invalid(path, source, `one of ${SESSION_PROVIDERS.join(', ')}`, value);
    }
    case 'choice': {
      const choices = spec.choices ?? [];
      if (typeof value === 'string' && choices.includes(value)) return value;
      throw invalid(path, source, `one of ${choices.join(', ')}`, value);
    }
    case 'url':
    case 'string': {
      // A value that may hold a password (a postgres:// URL) is never echoed.
      const shown = spec.noEcho ? undefined : value;
      if (typeof value !== 'string')
        throw invalid(path, source, `a string${spec.noEcho ? ' (value not shown)' : ''}`, shown);
      if (spec.optional && value === '' && s.text) return undefined;
      if (spec.nonEmpty && value.trim() === '') throw invalid(path, source, 'a non-empty string', shown);
      if (spec.envName && !isEnvName(value)) throw notEnvNames(path, source);
      if (spec.header) checkHeaderKey(spec, source, value);
      if (spec.file) {
        try {
          accessSync(value, constants.R_OK);
        } catch (err) {
          const code = (err as NodeJS.ErrnoException).code ?? 'error';
          const shownAs = shownPath(value);
          throw invalid(
            path,
            source,
            shownAs === value
              ? `a readable file; ${value} is not (${code})`
              : `a readable file, and it is not (${code}); ${shownAs}`,
          );
        }
      }
      return value;
    }
  }
}

/** A name where an env variable's name belongs that is not one: never echoed (it may be the secret itself). */
function notEnvNames(path: string, source: string): SvcIngestError {
  return new SvcIngestError(
    'CONFIG_INVALID',
    `config key ${path} (from ${source}) is not an environment variable name (value not shown; expected [A-Za-z_][A-Za-z0-9_]*, at most 64 characters)`,
    { field: path, source },
  );
}

/** A key that goes into an HTTP header: a header name must be a token, a value printable ASCII. Never echoed. */
function checkHeaderKey(spec: KeySpec, source: string, value: string): void {
  const ok =
    spec.header === 'name' ? /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(value) : /^[\x20-\x7e]*$/.test(value);
  if (ok) return;
  const expected =
    spec.header === 'name'
      ? "an HTTP header name (letters, digits and !#$%&'*+.^_`|~-)"
      : 'printable ASCII (no control characters: it goes into an HTTP header)';
  throw new SvcIngestError(
    'CONFIG_INVALID',
    `config key ${spec.path} (from ${source}): expected ${expected}; refused (value not shown)`,
    { field: spec.path, source },
  );
}

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\]|\[::ffff:127(\.\d{1,3}){3}\])$/i;

/** True for hosts that never leave the machine (plain http is fine there). */
export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK.test(hostname);
}

function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const [head, tail] = path.split('.') as [string, string | undefined];
  if (tail === undefined) {
    if (value !== undefined) target[head] = value;
    return;
  }
  if (target[head] === undefined) target[head] = {};
  const group = target[head] as Record<string, unknown>;
  if (value !== undefined) group[tail] = value;
}

/**
 * Loads and validates the configuration: the table's defaults, then the file named by env SVC_CONFIG,
 * then `opts.file` (--config), then env SVC_* (see CONFIG_KEYS), then `opts.flags`.
 * @throws SvcIngestError CONFIG_INVALID naming the key, the source of its value and what was expected.
 */
export function loadConfig(
  opts: { file?: string; env?: NodeJS.ProcessEnv; flags?: ConfigFlags } = {},
): Config {
  const env = opts.env ?? cliIo().env;
  const layers = new Map<string, Sourced>();
  for (const spec of CONFIG_KEYS) {
    const value = Array.isArray(spec.default) ? [...spec.default] : spec.default;
    if (value !== undefined) layers.set(spec.path, { value, source: DEFAULT_SOURCE, text: false });
  }
  const envFile = env[CONFIG_FILE_ENV];
  if (envFile) flattenFile(readJsonFile(envFile, `env ${CONFIG_FILE_ENV}`), `file ${envFile}`, layers);
  if (opts.file) flattenFile(readJsonFile(opts.file, 'flag --config'), `file ${opts.file}`, layers);
  for (const spec of CONFIG_KEYS) {
    const v = env[spec.env];
    if (v !== undefined) layers.set(spec.path, { value: v, source: `env ${spec.env}`, text: true });
  }
  for (const [path, { value, flag }] of Object.entries(opts.flags ?? {})) {
    if (value === undefined) continue;
    if (!KEY_BY_PATH.has(path)) throw invalid(path, `flag ${flag}`, 'a known configuration key');
    layers.set(path, { value, source: `flag ${flag}`, text: true });
  }

  const out: Record<string, unknown> = {};
  const sourceOf = (path: string): string => layers.get(path)?.source ?? DEFAULT_SOURCE;
  for (const spec of CONFIG_KEYS) {
    const s = layers.get(spec.path);
    const value = s ? parseValue(spec, s) : spec.optional ? undefined : parseValue(spec, missing());
    setPath(out, spec.path, value);
  }
  for (const group of GROUPS) out[group] ??= {};
  const cfg = out as unknown as Config;
  crossCheck(cfg, sourceOf);
  return cfg;
}

function missing(): Sourced {
  return { value: undefined, source: DEFAULT_SOURCE, text: false };
}

/** A path with its %-escapes decoded where they are valid (the rule reads them too; this is belt and braces). */
function decodeURIComponentSafe(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

/**
 * The rules between two settings, in the order they are checked: `one` at most one of the two set; `both` both
 * set or neither; `atLeast` the second's value at least the first's; `needs` the second set when session.provider
 * is the first.
 */
const PAIRS: readonly (
  | { rule: 'one' | 'both' | 'atLeast'; keys: readonly [SettingPath, SettingPath] }
  | { rule: 'needs'; provider: string; key: SettingPath; what: string }
)[] = [
  { rule: 'one', keys: ['auth.tokenEnv', 'auth.tokenFile'] },
  { rule: 'both', keys: ['tls.certFile', 'tls.keyFile'] },
  { rule: 'one', keys: ['webhook.secretEnv', 'webhook.secretFile'] },
  { rule: 'needs', provider: 'static', key: 'session.tokenEnv', what: 'an env variable name' },
  { rule: 'needs', provider: 'command', key: 'session.command', what: 'a shell command' },
  { rule: 'atLeast', keys: ['send.retryBaseMs', 'send.retryMaxMs'] },
];

/** A setting's value in the configuration, by its path. */
function valueAt(cfg: Config, path: SettingPath): unknown {
  return path.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], cfg);
}

/** PAIRS checked: the first broken rule throws CONFIG_INVALID. */
function checkPairs(cfg: Config, sourceOf: (path: string) => string): void {
  const PROVIDER: SettingPath = 'session.provider';
  for (const p of PAIRS) {
    if (p.rule === 'needs') {
      if (valueAt(cfg, PROVIDER) === p.provider && !valueAt(cfg, p.key))
        throw invalid(p.key, sourceOf(PROVIDER), `${p.what} when ${PROVIDER} is ${p.provider}`);
      continue;
    }
    const [a, b] = p.keys;
    if (p.rule === 'atLeast') {
      const [least, given] = [Number(valueAt(cfg, a)), Number(valueAt(cfg, b))];
      if (given < least) throw invalid(b, sourceOf(b), `a value >= ${a} (${least})`, given);
      continue;
    }
    const [hasA, hasB] = [Boolean(valueAt(cfg, a)), Boolean(valueAt(cfg, b))];
    if (p.rule === 'one' && hasA && hasB) throw invalid(b, sourceOf(b), `only one of ${a} and ${b}`);
    if (p.rule === 'both' && hasA !== hasB)
      throw invalid(hasA ? b : a, sourceOf(hasA ? a : b), `${a} and ${b} together`);
  }
}

/** The keys of kind 'url' (the service's address): each checked by checkUrl. */
const URL_KEYS = CONFIG_KEYS.filter((k) => k.kind === 'url').map((k) => k.path);

/**
 * A key of kind 'url' checked: an absolute http(s) URL without credentials, query or fragment; https unless the host
 * is loopback or allowInsecureHttp is set. Returns it parsed, and leaves it without a trailing slash (it would double
 * up with the endpoint paths).
 */
function checkUrl(cfg: Config, path: SettingPath, sourceOf: (path: string) => string): URL {
  const given = String(valueAt(cfg, path));
  const bad = (expected: string, got?: unknown): SvcIngestError =>
    invalid(path, sourceOf(path), expected, got);
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    throw bad('an absolute http(s) URL', given);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw bad('an http: or https: URL', given);
  if (url.username || url.password)
    throw bad('a URL without credentials (use auth.tokenEnv or auth.tokenFile)');
  if (url.search || url.hash) {
    // The query may hold a secret (a token pasted into it): shown without it.
    throw bad(
      'a URL without query or fragment (query and fragment not shown)',
      `${url.origin}${url.pathname}`,
    );
  }
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname) && !cfg.allowInsecureHttp) {
    throw bad(
      'an https URL for a non-loopback host (plain http needs allowInsecureHttp: --insecure-http or SVC_ALLOW_INSECURE_HTTP=true)',
      given,
    );
  }
  setPath(cfg as unknown as Record<string, unknown>, path, given.replace(/\/+$/, ''));
  return url;
}

/** Checks that involve more than one key. */
function crossCheck(cfg: Config, sourceOf: (path: string) => string): void {
  const urls = URL_KEYS.map((path) => [path, checkUrl(cfg, path, sourceOf)] as const);
  // The URLs and the institution are stored (the ledger's `destination`) and sent: a card number in them is refused.
  refuseTypedCardNumbers(
    [
      ...urls.map(([path, url]): [string, string] => [
        `${path} (${sourceOf(path)})`,
        decodeURIComponentSafe(url.pathname),
      ]),
      [`institutionId (${sourceOf('institutionId')})`, cfg.institutionId],
    ],
    'CONFIG_INVALID',
  );
  checkPairs(cfg, sourceOf);
}

/**
 * A key's default, as the settings table declares it (undefined when it has none): the default a flag's help shows.
 * @example defaultValue('send.batchSize') // 50
 */
export function defaultValue(path: string): unknown {
  return KEY_BY_PATH.get(path)?.default;
}

/**
 * The configuration of the table's defaults alone (no file, no env, no flag): what a test passes where a function
 * takes a slice of the configuration and the test sets none of it.
 * @example createRejecter(writer, counters, runId, defaultConfig().send)
 */
export function defaultConfig(): Config {
  return loadConfig({ env: {} });
}
