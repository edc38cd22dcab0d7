// The table of every configuration key: its type, its range, and the env variable that sets it.

/** How a key's value is parsed from a string (env, flag) and checked. */
export type KeyKind = 'string' | 'url' | 'int' | 'bool' | 'list' | 'level' | 'provider' | 'choice';

/**
 * One configuration key.
 * @example { path: 'send.concurrency', kind: 'int', min: 1, max: 256, env: 'SVC_SEND_CONCURRENCY' }
 */
export interface KeySpec {
  path: string;
  kind: KeyKind;
  env: string;
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

/** Every key, in documentation order; the env names are the documented table (README). */
export const CONFIG_KEYS: readonly KeySpec[] = [
  { path: 'baseUrl', kind: 'url', env: 'SVC_BASE_URL' },
  { path: 'allowInsecureHttp', kind: 'bool', env: 'SVC_ALLOW_INSECURE_HTTP' },
  { path: 'timeoutMs', kind: 'int', min: 1, max: 2_147_483_647, env: 'SVC_TIMEOUT_MS' },
  { path: 'userAgent', kind: 'string', nonEmpty: true, header: 'value', env: 'SVC_USER_AGENT' },
  {
    path: 'institutionId',
    kind: 'string',
    optional: true,
    nonEmpty: true,
    header: 'value',
    env: 'SVC_INSTITUTION_ID',
  },
  { path: 'auth.header', kind: 'string', nonEmpty: true, header: 'name', env: 'SVC_AUTH_HEADER' },
  { path: 'auth.scheme', kind: 'string', header: 'value', env: 'SVC_AUTH_SCHEME' },
  {
    path: 'auth.tokenEnv',
    kind: 'string',
    optional: true,
    nonEmpty: true,
    envName: true,
    env: 'SVC_AUTH_TOKEN_ENV',
  },
  { path: 'auth.tokenFile', kind: 'string', optional: true, file: true, env: 'SVC_AUTH_TOKEN_FILE' },
  { path: 'tls.certFile', kind: 'string', optional: true, file: true, env: 'SVC_TLS_CERT_FILE' },
  { path: 'tls.keyFile', kind: 'string', optional: true, file: true, env: 'SVC_TLS_KEY_FILE' },
  { path: 'tls.caFile', kind: 'string', optional: true, file: true, env: 'SVC_TLS_CA_FILE' },
  {
    path: 'tls.passphraseEnv',
    kind: 'string',
    optional: true,
    nonEmpty: true,
    envName: true,
    env: 'SVC_TLS_PASSPHRASE_ENV',
  },
  { path: 'session.provider', kind: 'provider', env: 'SVC_SESSION_PROVIDER' },
  {
    path: 'session.tokenEnv',
    kind: 'string',
    optional: true,
    nonEmpty: true,
    envName: true,
    env: 'SVC_SESSION_TOKEN_ENV',
  },
  { path: 'session.command', kind: 'string', optional: true, nonEmpty: true, env: 'SVC_SESSION_COMMAND' },
  { path: 'session.commandEnv', kind: 'list', envName: true, env: 'SVC_SESSION_COMMAND_ENV' },
  { path: 'session.organizationId', kind: 'string', nonEmpty: true, env: 'SVC_SESSION_ORGANIZATION_ID' },
  { path: 'session.scopes', kind: 'list', env: 'SVC_SESSION_SCOPES' },
  {
    path: 'session.refreshBeforeMs',
    kind: 'int',
    min: 0,
    max: 86_400_000,
    env: 'SVC_SESSION_REFRESH_BEFORE_MS',
  },
  { path: 'send.concurrency', kind: 'int', min: 1, max: 256, env: 'SVC_SEND_CONCURRENCY' },
  { path: 'send.batchSize', kind: 'int', min: 1, max: 50, env: 'SVC_SEND_BATCH_SIZE' },
  { path: 'send.maxRetries', kind: 'int', min: 0, max: 100, env: 'SVC_SEND_MAX_RETRIES' },
  { path: 'send.retryBaseMs', kind: 'int', min: 0, max: 3_600_000, env: 'SVC_SEND_RETRY_BASE_MS' },
  { path: 'send.retryMaxMs', kind: 'int', min: 0, max: 3_600_000, env: 'SVC_SEND_RETRY_MAX_MS' },
  { path: 'send.ledgerPath', kind: 'string', nonEmpty: true, noEcho: true, env: 'SVC_LEDGER_PATH' },
  { path: 'send.rejectsPath', kind: 'string', nonEmpty: true, env: 'SVC_REJECTS_PATH' },
  { path: 'send.resume', kind: 'bool', env: 'SVC_SEND_RESUME' },
  { path: 'send.splitRetries', kind: 'int', min: 0, max: 100, env: 'SVC_SEND_SPLIT_RETRIES' },
  { path: 'send.outageMaxMs', kind: 'int', min: 0, max: 2_147_483_647, env: 'SVC_SEND_OUTAGE_MAX_MS' },
  {
    path: 'send.healthCheckWindowMs',
    kind: 'int',
    min: 0,
    max: 86_400_000,
    env: 'SVC_SEND_HEALTH_CHECK_WINDOW_MS',
  },
  {
    path: 'send.progressIntervalMs',
    kind: 'int',
    min: 0,
    max: 86_400_000,
    env: 'SVC_SEND_PROGRESS_INTERVAL_MS',
  },
  { path: 'metrics.file', kind: 'string', optional: true, nonEmpty: true, env: 'SVC_METRICS_FILE' },
  { path: 'metrics.port', kind: 'int', optional: true, min: 0, max: 65_535, env: 'SVC_METRICS_PORT' },
  { path: 'metrics.labels', kind: 'list', optional: true, env: 'SVC_METRICS_LABELS' },
  { path: 'send.maxRejects', kind: 'int', min: 0, max: 2_147_483_647, env: 'SVC_SEND_MAX_REJECTS' },
  {
    path: 'send.maxRejectBytes',
    kind: 'int',
    min: 0,
    max: Number.MAX_SAFE_INTEGER,
    env: 'SVC_SEND_MAX_REJECT_BYTES',
  },
  { path: 'send.maxRejectPercent', kind: 'int', min: 0, max: 100, env: 'SVC_SEND_MAX_REJECT_PERCENT' },
  { path: 'send.rejectSample', kind: 'int', min: 1, max: 2_147_483_647, env: 'SVC_SEND_REJECT_SAMPLE' },
  {
    path: 'webhook.secretEnv',
    kind: 'string',
    optional: true,
    nonEmpty: true,
    envName: true,
    env: 'SVC_WEBHOOK_SECRET_ENV',
  },
  { path: 'webhook.secretFile', kind: 'string', optional: true, file: true, env: 'SVC_WEBHOOK_SECRET_FILE' },
  { path: 'webhook.timeoutMs', kind: 'int', min: 100, max: 600_000, env: 'SVC_WEBHOOK_TIMEOUT_MS' },
  {
    path: 'webhook.maxConnections',
    kind: 'int',
    min: 1,
    max: 10_000,
    env: 'SVC_WEBHOOK_MAX_CONNECTIONS',
  },
  {
    path: 'ledger.url',
    kind: 'string',
    optional: true,
    nonEmpty: true,
    noEcho: true,
    env: 'SVC_LEDGER_URL',
  },
  {
    path: 'ledger.passwordFile',
    kind: 'string',
    optional: true,
    file: true,
    env: 'SVC_LEDGER_PASSWORD_FILE',
  },
  { path: 'ledger.leaseMs', kind: 'int', min: 1000, max: 3_600_000, env: 'SVC_LEDGER_LEASE_MS' },
  { path: 'ledger.waitMs', kind: 'int', min: 0, max: 3_600_000, env: 'SVC_LEDGER_WAIT_MS' },
  // Connections one process opens to the PostgreSQL ledger at most (its pool); see docs/postgres.md.
  { path: 'ledger.poolMax', kind: 'int', min: 1, max: 100, env: 'SVC_LEDGER_POOL_MAX' },
  { path: 'ledger.allowPlaintext', kind: 'bool', env: 'SVC_LEDGER_ALLOW_PLAINTEXT' },
  // The feed's own ledger in a shared PostgreSQL database: its schema (the URL's ?schema= wins).
  { path: 'ledger.name', kind: 'string', optional: true, nonEmpty: true, env: 'SVC_LEDGER_NAME' },
  // The prepare stage's worker pool (read, map and validate on worker threads); the env names are older than the keys.
  {
    path: 'prepare.workers',
    kind: 'choice',
    choices: ['auto', 'on', 'off'],
    env: 'SVC_PREPARE_WORKER',
  },
  { path: 'prepare.threads', kind: 'int', optional: true, min: 1, max: 64, env: 'SVC_PREPARE_THREADS' },
  {
    path: 'prepare.chunkBytes',
    kind: 'int',
    optional: true,
    min: 1,
    max: 1_073_741_824,
    env: 'SVC_PREPARE_CHUNK_BYTES',
  },
  { path: 'log.level', kind: 'level', env: 'SVC_LOG_LEVEL' },
];

/** Env variable naming an extra JSON config file merged over the defaults. */
export const CONFIG_FILE_ENV = 'SVC_CONFIG';
