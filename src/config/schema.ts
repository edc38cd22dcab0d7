// The table of every setting: its configuration key, type, range and default, the env variable that sets it, and for
// the settings a command also takes as a flag, the flag, its help text and the commands' option group. Declared once
// here; the Config type, the defaults (config/default.json is checked equal to them), the env names, the flags,
// their help (with the default), the flag → key mapping (src/cli/settings.ts) come from it, and the documentation's
// tables (docs/configuration.md, docs/contract.md) are checked against it (test/config/settings.test.ts).
import { VERSION } from '../version.ts';
import { envNameOf, type SettingDecl } from './setting-spec.ts';

/** One setting with its env name. */
export interface KeySpec extends SettingDecl {
  path: SettingPath;
  env: string;
}

/** Every key, in documentation order; the env names are the documented table (docs/configuration.md). */
const SETTINGS = [
  {
    path: 'baseUrl',
    default: 'http://127.0.0.1:8080',
    kind: 'url',
    flag: { arg: '<url>', help: 'service base URL', show: 'env', group: 'connection' },
  },
  {
    path: 'allowInsecureHttp',
    default: false,
    kind: 'bool',
    flag: {
      name: 'insecure-http',
      help: 'allow plain http to a non-loopback host',
      show: 'env',
      group: 'connection',
    },
  },
  {
    path: 'timeoutMs',
    default: 30_000,
    kind: 'int',
    min: 1,
    max: 2_147_483_647,
    flag: {
      name: 'timeout',
      arg: '<ms>',
      help: 'per-request timeout in ms',
      show: 'env',
      group: 'connection',
    },
  },
  { path: 'userAgent', default: `svc-ingest/${VERSION}`, kind: 'string', nonEmpty: true, header: 'value' },
  {
    path: 'institutionId',
    kind: 'string',
    optional: true,
    nonEmpty: true,
    header: 'value',
  },
  { path: 'auth.header', default: 'Authorization', kind: 'string', nonEmpty: true, header: 'name' },
  { path: 'auth.scheme', default: 'Bearer', kind: 'string', header: 'value' },
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
  { path: 'session.provider', default: 'startSession', kind: 'provider' },
  {
    path: 'session.tokenEnv',
    kind: 'string',
    optional: true,
    nonEmpty: true,
    envName: true,
  },
  { path: 'session.command', kind: 'string', optional: true, nonEmpty: true },
  { path: 'session.commandEnv', default: [], kind: 'list', envName: true },
  { path: 'session.organizationId', default: 'svc-ingest', kind: 'string', nonEmpty: true },
  { path: 'session.scopes', default: ['redemptions'], kind: 'list' },
  {
    path: 'session.refreshBeforeMs',
    default: 60_000,
    kind: 'int',
    min: 0,
    max: 86_400_000,
  },
  {
    path: 'send.concurrency',
    default: 4,
    kind: 'int',
    min: 1,
    max: 256,
    flag: { arg: '<n>', help: 'batches in flight at once', group: 'dispatch' },
  },
  {
    path: 'send.batchSize',
    default: 50,
    kind: 'int',
    min: 1,
    max: 50,
    flag: { arg: '<n>', help: 'records per request, 1..50', group: 'dispatch' },
  },
  {
    path: 'send.maxRetries',
    default: 5,
    kind: 'int',
    min: 0,
    max: 100,
    flag: { arg: '<n>', help: 'retries of one batch before it is marked failed', group: 'dispatch' },
  },
  {
    path: 'send.retryBaseMs',
    default: 500,
    kind: 'int',
    min: 0,
    max: 3_600_000,
    flag: {
      arg: '<ms>',
      help: 'wait before the first retry; doubles each retry, jittered for batches',
      group: 'backoff',
    },
  },
  {
    path: 'send.retryMaxMs',
    default: 30_000,
    kind: 'int',
    min: 0,
    max: 3_600_000,
    flag: { arg: '<ms>', help: 'cap on one retry wait', group: 'backoff' },
  },
  {
    path: 'send.ledgerPath',
    default: 'ledger/transactions.ndjson',
    kind: 'string',
    nonEmpty: true,
    noEcho: true,
    env: 'SVC_LEDGER_PATH',
  },
  {
    path: 'send.rejectsPath',
    default: 'ledger/rejects.ndjson',
    kind: 'string',
    nonEmpty: true,
    env: 'SVC_REJECTS_PATH',
    flag: { name: 'rejects', arg: '<path>', help: 'rejected records, NDJSON', group: 'rejectsFile' },
  },
  {
    path: 'send.resume',
    default: true,
    kind: 'bool',
    flag: {
      name: 'no-resume',
      help: 'resend transactions the ledger already shows as acknowledged',
      noDefault: true,
      group: 'resume',
    },
  },
  {
    path: 'send.splitRetries',
    default: 1,
    kind: 'int',
    min: 0,
    max: 100,
    flag: { arg: '<n>', help: 'retries of each half when a failing batch is split', group: 'dispatch' },
  },
  {
    path: 'send.outageMaxMs',
    default: 120_000,
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
    default: 60_000,
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
    default: 30_000,
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
    default: 100_000,
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
    default: 67_108_864,
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
    default: 90,
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
    default: 1000,
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
  { path: 'webhook.timeoutMs', default: 10_000, kind: 'int', min: 100, max: 600_000 },
  {
    path: 'webhook.maxConnections',
    default: 64,
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
    flag: {
      name: 'ledger-url',
      arg: '<url>',
      help: 'a PostgreSQL ledger, postgres://USER@HOST/DB',
      show: 'env',
      group: 'ledgerUrl',
    },
  },
  {
    path: 'ledger.passwordFile',
    kind: 'string',
    optional: true,
    file: true,
  },
  { path: 'ledger.leaseMs', default: 30_000, kind: 'int', min: 1000, max: 3_600_000 },
  { path: 'ledger.waitMs', default: 60_000, kind: 'int', min: 0, max: 3_600_000 },
  // Connections one process opens to the PostgreSQL ledger at most (its pool); see docs/postgres.md.
  { path: 'ledger.poolMax', default: 4, kind: 'int', min: 1, max: 100 },
  { path: 'ledger.allowPlaintext', default: false, kind: 'bool' },
  // The feed's own ledger in a shared PostgreSQL database: its schema (the URL's ?schema= wins).
  { path: 'ledger.name', kind: 'string', optional: true, nonEmpty: true },
  // The prepare stage's worker pool (read, map and validate on worker threads); the env names are older than the keys.
  {
    path: 'prepare.workers',
    default: 'auto',
    kind: 'choice',
    choices: ['auto', 'on', 'off'],
    env: 'SVC_PREPARE_WORKER',
  },
  { path: 'prepare.threads', kind: 'int', optional: true, min: 1, max: 64 },
  {
    path: 'prepare.chunkBytes',
    default: 524_288,
    kind: 'int',
    min: 1,
    max: 1_073_741_824,
  },
  {
    path: 'log.level',
    default: 'info',
    kind: 'level',
    flag: {
      name: 'log-level',
      arg: '<level>',
      help: 'trace, debug, info, warn, error, fatal or silent',
      show: 'env',
      group: 'logging',
    },
  },
] as const satisfies readonly SettingDecl[];

/** The table's type: what src/config/types.ts derives the Config type from. */
export type SettingsTable = typeof SETTINGS;

/** Every key the table does not call optional has its default in the table: a row without one does not compile. */
type WithoutDefault = Exclude<SettingsTable[number], { optional: true } | { default: unknown }>['path'];
true satisfies [WithoutDefault] extends [never] ? true : WithoutDefault;

/** Every key of the table, by its dotted path: what ConfigFlags and the messages name. */
export type SettingPath = (typeof SETTINGS)[number]['path'];

export const CONFIG_KEYS: readonly KeySpec[] = SETTINGS.map((k: SettingDecl) => ({
  ...k,
  path: k.path as SettingPath,
  env: k.env ?? envNameOf(k.path),
}));

/** Env variable naming an extra JSON config file merged over the defaults. */
export const CONFIG_FILE_ENV = 'SVC_CONFIG';
