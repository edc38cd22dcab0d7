// The table of every setting: its configuration key, type and range, the env variable that sets it, and for the
// settings a command also takes as a flag, the flag, its help text and the commands' option group. Declared once
// here; the env names, the flags, their help (with the default from config/default.json), the flag → key mapping
// (src/cli/settings.ts) and the documentation's table (test/config/settings.test.ts) come from it or are checked
// against it.

/** How a key's value is parsed from a string (env, flag) and checked. */
export type KeyKind = 'string' | 'url' | 'int' | 'bool' | 'list' | 'level' | 'provider' | 'choice';

/**
 * The option groups of flags that are settings, and the commands that take each (src/cli/settings.ts).
 * dispatch: how batches are sent; rejectCaps: when rejects stop a run; progress: progress lines and metrics.
 */
export const SETTING_GROUPS = {
  dispatch: ['send', 'backfill work'],
  rejectCaps: ['send', 'backfill work'],
  progress: ['send', 'backfill work'],
} as const;
export type SettingGroup = keyof typeof SETTING_GROUPS;

/**
 * A setting's flag: `--name <arg>` (the name is the key's last part in kebab case unless `name` says otherwise),
 * its help (the default is appended from config/default.json), its group, and `scale` when the flag's unit is
 * not the key's (seconds for milliseconds: 1000).
 * @example { arg: '<n>', help: 'retries of one batch before it is marked failed', group: 'dispatch' }
 */
export interface FlagSpec {
  arg: string;
  help: string;
  group: SettingGroup;
  name?: string;
  scale?: number;
  /** Repeatable (a list key): each use adds one item. */
  repeat?: boolean;
  /** No default is shown (an optional key). */
  noDefault?: boolean;
}

/**
 * One setting.
 * @example { path: 'send.concurrency', kind: 'int', min: 1, max: 256, env: 'SVC_SEND_CONCURRENCY' }
 */
export interface KeySpec {
  path: string;
  kind: KeyKind;
  /** SVC_ and the path in upper snake case (send.batchSize: SVC_SEND_BATCH_SIZE) unless declared otherwise. */
  env: string;
  flag?: FlagSpec;
  min?: number;
  max?: number;
  /** Absent is allowed (no default). */
  optional?: boolean;
  /** Non-empty string required. */
  nonEmpty?: boolean;
  /** Names a file that must be readable (shown in messages only when it looks like a path: config/secret.ts). */
  file?: boolean;
  /** Names env variables (each list item too): checked against the env-name rule, never echoed otherwise. */
  envName?: boolean;
  /** Goes into an HTTP header as its name (a token) or its value (printable ASCII); never echoed when refused. */
  header?: 'name' | 'value';
  /** kind 'choice': the values allowed. */
  choices?: readonly string[];
  /** May hold a password (a postgres:// URL): a refused value is never echoed. */
  noEcho?: boolean;
}

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export const SESSION_PROVIDERS = ['startSession', 'static', 'command'] as const;

/** The env variable of a key path by the rule: SVC_ and the path in upper snake case. */
export function envNameOf(path: string): string {
  return `SVC_${path
    .replace(/([A-Z])/g, '_$1')
    .replace(/\./g, '_')
    .toUpperCase()}`;
}

/** Every key, in documentation order; the env names are the documented table (docs/configuration.md). */
const SETTINGS: ReadonlyArray<Omit<KeySpec, 'env'> & { env?: string }> = [
  { path: 'baseUrl', kind: 'url' },
  { path: 'allowInsecureHttp', kind: 'bool' },
  { path: 'timeoutMs', kind: 'int', min: 1, max: 2_147_483_647 },
  { path: 'userAgent', kind: 'string', nonEmpty: true, header: 'value' },
  {
    path: 'institutionId',
    kind: 'string',
    optional: true,
    nonEmpty: true,
    header: 'value',
  },
  { path: 'auth.header', kind: 'string', nonEmpty: true, header: 'name' },
  { path: 'auth.scheme', kind: 'string', header: 'value' },
  {
    path: 'auth.tokenEnv',
    kind: 'string',
    optional: true,
    nonEmpty: true,
    envName: true,
  },
  { path: 'auth.tokenFile', kind: 'string', optional: true, file: true },
  { path: 'tls.certFile', kind: 'string', optional: true, file: true },
  { path: 'tls.keyFile', kind: 'string', optional: true, file: true },
  { path: 'tls.caFile', kind: 'string', optional: true, file: true },
  {
    path: 'tls.passphraseEnv',
    kind: 'string',
    optional: true,
    nonEmpty: true,
    envName: true,
  },
  { path: 'session.provider', kind: 'provider' },
  {
    path: 'session.tokenEnv',
    kind: 'string',
    optional: true,
    nonEmpty: true,
    envName: true,
  },
  { path: 'session.command', kind: 'string', optional: true, nonEmpty: true },
  { path: 'session.commandEnv', kind: 'list', envName: true },
  { path: 'session.organizationId', kind: 'string', nonEmpty: true },
  { path: 'session.scopes', kind: 'list' },
  {
    path: 'session.refreshBeforeMs',
    kind: 'int',
    min: 0,
    max: 86_400_000,
  },
  {
    path: 'send.concurrency',
    kind: 'int',
    min: 1,
    max: 256,
    flag: { arg: '<n>', help: 'batches in flight at once', group: 'dispatch' },
  },
  {
    path: 'send.batchSize',
    kind: 'int',
    min: 1,
    max: 50,
    flag: { arg: '<n>', help: 'records per request, 1..50', group: 'dispatch' },
  },
  {
    path: 'send.maxRetries',
    kind: 'int',
    min: 0,
    max: 100,
    flag: { arg: '<n>', help: 'retries of one batch before it is marked failed', group: 'dispatch' },
  },
  {
    path: 'send.retryBaseMs',
    kind: 'int',
    min: 0,
    max: 3_600_000,
    flag: {
      arg: '<ms>',
      help: 'wait before the first retry; doubles each retry, with jitter',
      group: 'dispatch',
    },
  },
  {
    path: 'send.retryMaxMs',
    kind: 'int',
    min: 0,
    max: 3_600_000,
    flag: { arg: '<ms>', help: 'cap on one retry wait', group: 'dispatch' },
  },
  { path: 'send.ledgerPath', kind: 'string', nonEmpty: true, noEcho: true, env: 'SVC_LEDGER_PATH' },
  { path: 'send.rejectsPath', kind: 'string', nonEmpty: true, env: 'SVC_REJECTS_PATH' },
  { path: 'send.resume', kind: 'bool' },
  {
    path: 'send.splitRetries',
    kind: 'int',
    min: 0,
    max: 100,
    flag: { arg: '<n>', help: 'retries of each half when a failing batch is split', group: 'dispatch' },
  },
  {
    path: 'send.outageMaxMs',
    kind: 'int',
    min: 0,
    max: 2_147_483_647,
    flag: {
      arg: '<ms>',
      help: 'how long the service may keep failing (from its first failure) before giving up, exit 5',
      group: 'dispatch',
    },
  },
  {
    path: 'send.healthCheckWindowMs',
    kind: 'int',
    min: 0,
    max: 86_400_000,
    flag: {
      arg: '<ms>',
      help: 'how long the check that the service answers, before reading, is retried with backoff before exit 5',
      group: 'dispatch',
    },
  },
  {
    path: 'send.progressIntervalMs',
    kind: 'int',
    min: 0,
    max: 86_400_000,
    flag: {
      name: 'progress-interval',
      arg: '<seconds>',
      scale: 1000,
      help: 'when stderr is not a TTY, log a progress line this often; 0 = never',
      group: 'progress',
    },
  },
  {
    path: 'metrics.file',
    kind: 'string',
    optional: true,
    nonEmpty: true,
    flag: {
      name: 'metrics-file',
      arg: '<path>',
      noDefault: true,
      help: 'write Prometheus metrics to this file (textfile collector: temp file + rename, every 5 s and at the end)',
      group: 'progress',
    },
  },
  {
    path: 'metrics.port',
    kind: 'int',
    optional: true,
    min: 0,
    max: 65_535,
    flag: {
      name: 'metrics-port',
      arg: '<n>',
      noDefault: true,
      help: 'serve Prometheus metrics at http://127.0.0.1:<n>/metrics while the run lasts',
      group: 'progress',
    },
  },
  {
    path: 'metrics.labels',
    kind: 'list',
    optional: true,
    flag: {
      name: 'metrics-label',
      arg: '<key=value>',
      repeat: true,
      noDefault: true,
      help: 'a label on every metric (repeatable; env SVC_METRICS_LABELS, comma-separated): feeds sharing a textfile folder',
      group: 'progress',
    },
  },
  {
    path: 'send.maxRejects',
    kind: 'int',
    min: 0,
    max: 2_147_483_647,
    flag: {
      arg: '<n>',
      help: 'stop (exit 1) past this many new rejects in one run; 0 = no limit',
      group: 'rejectCaps',
    },
  },
  {
    path: 'send.maxRejectBytes',
    kind: 'int',
    min: 0,
    max: Number.MAX_SAFE_INTEGER,
    flag: {
      arg: '<n>',
      help: 'stop (exit 1) before one run adds more than this to the rejects file; 0 = no limit',
      group: 'rejectCaps',
    },
  },
  {
    path: 'send.maxRejectPercent',
    kind: 'int',
    min: 0,
    max: 100,
    flag: {
      arg: '<p>',
      help: 'stop (exit 1) when at least p% of the first --reject-sample records are rejected; 0 = off',
      group: 'rejectCaps',
    },
  },
  {
    path: 'send.rejectSample',
    kind: 'int',
    min: 1,
    max: 2_147_483_647,
    flag: { arg: '<n>', help: 'records the reject-percent check looks at', group: 'rejectCaps' },
  },
  {
    path: 'webhook.secretEnv',
    kind: 'string',
    optional: true,
    nonEmpty: true,
    envName: true,
  },
  { path: 'webhook.secretFile', kind: 'string', optional: true, file: true },
  { path: 'webhook.timeoutMs', kind: 'int', min: 100, max: 600_000 },
  {
    path: 'webhook.maxConnections',
    kind: 'int',
    min: 1,
    max: 10_000,
  },
  {
    path: 'ledger.url',
    kind: 'string',
    optional: true,
    nonEmpty: true,
    noEcho: true,
  },
  {
    path: 'ledger.passwordFile',
    kind: 'string',
    optional: true,
    file: true,
  },
  { path: 'ledger.leaseMs', kind: 'int', min: 1000, max: 3_600_000 },
  { path: 'ledger.waitMs', kind: 'int', min: 0, max: 3_600_000 },
  // Connections one process opens to the PostgreSQL ledger at most (its pool); see docs/postgres.md.
  { path: 'ledger.poolMax', kind: 'int', min: 1, max: 100 },
  { path: 'ledger.allowPlaintext', kind: 'bool' },
  // The feed's own ledger in a shared PostgreSQL database: its schema (the URL's ?schema= wins).
  { path: 'ledger.name', kind: 'string', optional: true, nonEmpty: true },
  // The prepare stage's worker pool (read, map and validate on worker threads); the env names are older than the keys.
  {
    path: 'prepare.workers',
    kind: 'choice',
    choices: ['auto', 'on', 'off'],
    env: 'SVC_PREPARE_WORKER',
  },
  { path: 'prepare.threads', kind: 'int', optional: true, min: 1, max: 64 },
  {
    path: 'prepare.chunkBytes',
    kind: 'int',
    optional: true,
    min: 1,
    max: 1_073_741_824,
  },
  { path: 'log.level', kind: 'level' },
];

export const CONFIG_KEYS: readonly KeySpec[] = SETTINGS.map((k) => ({
  ...k,
  env: k.env ?? envNameOf(k.path),
}));

/** Env variable naming an extra JSON config file merged over the defaults. */
export const CONFIG_FILE_ENV = 'SVC_CONFIG';
